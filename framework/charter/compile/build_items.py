"""Item predicates as closures: the test of one item an extractor found (``every amount ...``,
``mentions money near "fee"``), part of the ``Builder`` of ``charter.compile.build``.

An item predicate is tested once per item rather than once per turn, and reads the item's
value, unit and place in the text: its twin in another extractor's finds (``has twin``), the
text ``found in`` a ground, the terms or items ``followed by`` / ``preceded by`` / ``near`` it.
Adjacency is the largest part: a window around the item and three ways to search it.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from charter.compile.build_values import ValueBuilder
from charter.compile.env import Env
from charter.compile.literals import is_ascii_alnum
from charter.compile.primitives import _CMP, compare, compile_regex
from charter.contracts.rules import Item, as_decimal
from charter.dsl import ast as A

ItemTest = Callable[[Env, Item, str, str], bool]

DEFAULT_NEAR = 20


class ItemBuilder(ValueBuilder):
    """Item predicates and adjacency tests as closures; the ``Builder`` extends it."""

    def item(self, node: A.ItemPred, key: str, extractor: str) -> ItemTest:
        """The test of one item of ``extractor`` found in the subject ``key``."""
        if isinstance(node, A.IAnd):
            parts = tuple(self.item(i, key, extractor) for i in node.items)
            if len(parts) == 2:
                a, b = parts
                return lambda env, it, text, k: a(env, it, text, k) and b(env, it, text, k)
            return lambda env, it, text, k: all(p(env, it, text, k) for p in parts)
        if isinstance(node, A.IOr):
            parts = tuple(self.item(i, key, extractor) for i in node.items)
            if len(parts) == 2:
                a, b = parts
                return lambda env, it, text, k: a(env, it, text, k) or b(env, it, text, k)
            return lambda env, it, text, k: any(p(env, it, text, k) for p in parts)
        if isinstance(node, A.INot):
            inner = self.item(node.item, key, extractor)
            return lambda env, it, text, k: not inner(env, it, text, k)
        if isinstance(node, A.IMatches):
            pattern = compile_regex(node.regex)
            # an item's pattern that runs out of time does not match the item
            return lambda env, it, text, k: pattern.found(it.text, False)
        if isinstance(node, A.ITwin):
            twin = node.extractor.text

            def has_twin(env: Env, it: Item, text: str, k: str) -> bool:
                values = env.cached_values.get((twin, k))
                if values is None:
                    values = env.values(twin, k, text)
                v = it.value
                return (
                    v in values
                    if type(v) is Decimal
                    else ((d := as_decimal(v)) is not None and d in values)
                )

            return has_twin
        if isinstance(node, A.IUnit):
            units = frozenset(node.units.values) if node.units else None
            if units is None:
                return lambda env, it, text, k: it.unit is not None
            return lambda env, it, text, k: it.unit in units
        if isinstance(node, A.IDecimals):
            cmp, n = _CMP[node.op], node.count
            return lambda env, it, text, k: it.decimals is not None and cmp(it.decimals, n)
        if isinstance(node, A.IValue):
            cmp_op, operand = node.op, self.value(node.operand)
            return lambda env, it, text, k: compare(cmp_op, as_decimal(it.value), operand(env))
        if isinstance(node, A.IAdjacent):
            return self.adjacent(node.side, node.target, node.within, key)
        if isinstance(node, A.IFound):
            return self.found(node.ground, extractor)
        raise TypeError(f"not an item predicate: {node!r}")

    def found(self, ground: A.Path, extractor: str) -> ItemTest:
        """``found in P``: the extractor finds an item of equal value in P's texts (run once
        per evaluation and text, see ``Env.grounds``)."""
        where, value = ground.dotted(), self.raw(ground)
        cache_key = (extractor, where)

        def found(env: Env, it: Item, text: str, k: str) -> bool:
            grounds = env.cached_grounds.get(cache_key)
            if grounds is None:
                grounds = env.grounds(extractor, where, value(env))
            return grounds.has(it)

        return found

    def adjacent(self, side: str, target: A.Target, within: int | None, key: str) -> ItemTest:
        """Is the target found right after / right before / around the item?

        ``followed by`` and ``preceded by`` skip white space next to the item, then allow
        ``within`` more characters (default 0); ``near`` looks ``within`` characters (default
        20) on both sides.
        """
        n = within if within is not None else (DEFAULT_NEAR if side == "near" else 0)

        def window(text: str, it: Item) -> tuple[int, int]:
            if side == "followed":
                lo = it.end
                while lo < len(text) and text[lo].isspace():
                    lo += 1
                return lo, lo + n
            if side == "preceded":
                hi = it.start
                while hi > 0 and text[hi - 1].isspace():
                    hi -= 1
                return hi - n, hi
            return it.start - n, it.end + n

        if isinstance(target, A.Name):
            other = target.text

            def near_items(env: Env, it: Item, text: str, k: str) -> bool:
                lo, hi = window(text, it)
                for o in env.items(other, k, text):
                    if o is it:
                        continue
                    if side == "followed" and lo <= o.start <= hi:
                        return True
                    if side == "preceded" and lo <= o.end <= hi:
                        return True
                    if side == "near" and o.start >= lo and o.end <= hi:
                        return True
                return False

            return near_items
        ids = tuple(self.ids[t] for t in target.values)
        plain = tuple(
            t for t in target.values if not (is_ascii_alnum(t[0]) or is_ascii_alnum(t[-1]))
        )
        if len(plain) == len(target.values):
            # CJK-edged terms need no boundary check, so a substring test of the window is
            # exact and much cheaper than walking the hit lists
            terms = plain

            def near_plain(env: Env, it: Item, text: str, k: str) -> bool:
                lo, hi = window(text, it)
                lo = max(lo, 0)
                if side == "near":
                    w = text[lo:hi]
                    for t in terms:
                        if t in w:
                            return True
                    return False
                # str.startswith / endswith take a tuple of candidates
                if side == "followed":
                    for i in range(lo, hi + 1):
                        if text.startswith(terms, i):
                            return True
                    return False
                for i in range(lo, hi + 1):
                    if text.endswith(terms, 0, i):
                        return True
                return False

            return near_plain

        def near_terms(env: Env, it: Item, text: str, k: str) -> bool:
            lo, hi = window(text, it)
            hits = env.hits(k, text)
            for lid in ids:
                for s, e in hits.get(lid, ()):
                    if side == "followed" and lo <= s <= hi:
                        return True
                    if side == "preceded" and lo <= e <= hi:
                        return True
                    if side == "near" and s >= lo and e <= hi:
                        return True
            return False

        return near_terms
