"""Which evidence can change a rule's outcome: the index that lets most rules be skipped.

For an expression over the output text, ``info`` computes a set of *sources* (literals and
extractors) and the *empty value*: as long as none of the sources occurs in the text (no hit of
the literals, no item of the extractors), the expression has the empty value, whatever else the
text or the context says. ``output contains any ["肯定", "绝对"]`` is false unless one of its
literals hits; ``every money in output ...`` is true unless there is money; ``X and Y`` is false
whenever X is, so X's sources are enough. Expressions that read anything else (a regex, the
length, the context) have no such set, and their rules are always evaluated.

With this index the engine evaluates only the rules some evidence can affect, so checking a
text grows with what the text contains, not with the number of rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from charter.compile.primitives import compare
from charter.dsl import ast as A


@dataclass(frozen=True)
class Sources:
    literals: frozenset[str] = frozenset()
    extractors: frozenset[str] = frozenset()

    def __or__(self, other: Sources) -> Sources:
        return Sources(self.literals | other.literals, self.extractors | other.extractors)

    def cost(self) -> tuple[int, int]:
        """Literals are free to test (the scan already ran); extractors may have to run."""
        return (len(self.extractors), len(self.literals))


Info = tuple[bool, Sources] | None
_OUTPUT = "output"


def _on_output(path: A.Path) -> bool:
    return path.root.text == _OUTPUT and not path.parts


def _count_compare(node: A.Compare) -> Info:
    """``count(X in output) >= 1`` and friends: decided by X's items alone."""
    for counted, other, flipped in ((node.left, node.right, False), (node.right, node.left, True)):
        if isinstance(counted, A.Count) and _on_output(counted.subject):
            if not isinstance(other, A.Num):
                return None
            zero = Decimal(0)
            left, right = (other.value, zero) if flipped else (zero, other.value)
            return compare(node.op, left, right), Sources(
                extractors=frozenset({counted.extractor.text})
            )
    return None


def info(node: A.Expr) -> Info:
    if isinstance(node, A.Contains):
        if not _on_output(node.subject):
            return None
        return False, Sources(literals=frozenset(node.terms.values))
    if isinstance(node, A.Mentions):
        if not _on_output(node.subject):
            return None
        if node.near is not None and isinstance(node.near.target, A.Terms):
            return False, Sources(literals=frozenset(node.near.target.values))
        return False, Sources(extractors=frozenset({node.extractor.text}))
    if isinstance(node, A.Quantified):
        if not _on_output(node.subject):
            return None
        # the item check runs only on items: one that reads the context or another text
        # (`value <= goal.slots.budget`, `found in skill.results`) cannot change the value
        # of a quantifier over no items, so the extractor alone is the source
        return node.quant != "some", Sources(extractors=frozenset({node.extractor.text}))
    if isinstance(node, A.Compare):
        return _count_compare(node)
    if isinstance(node, A.Not):
        inner = info(node.item)
        return None if inner is None else (not inner[0], inner[1])
    if isinstance(node, A.And | A.Or):
        # the value that decides: false for `and`, true for `or`
        deciding = isinstance(node, A.Or)
        parts = [info(item) for item in node.items]
        decisive = [p for p in parts if p is not None and p[0] is deciding]
        if decisive:
            return deciding, min((p[1] for p in decisive), key=Sources.cost)
        if all(p is not None for p in parts):
            merged = Sources()
            for p in parts:
                assert p is not None
                merged = merged | p[1]
            return not deciding, merged
        return None
    return None


def rule_sources(when: A.Expr | None, check: A.Expr) -> Sources | None:
    """Sources of a whole rule, or None when it must be evaluated on every text."""
    c = info(check)
    if when is None:
        return None if c is None else c[1]
    w = info(when)
    if w is None:
        return None
    if w[0] is False:
        return w[1]  # the guard is false without its sources: the rule is skipped
    return None if c is None else w[1] | c[1]
