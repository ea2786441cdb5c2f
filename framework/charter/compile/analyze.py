"""Compile stage 4: whole-rule analysis over literal requirements.

A conjunction that requires a literal (``output contains "X"``) and forbids a literal contained
in it (``not output contains "X"``, or any substring of X) can never hold. Detected inside one
rule, between a rule's ``when`` and its ``check``, between two rules under the same guard, and
between a repair's inserted text and a ban.

Between rules, the pairs are found through an index rather than by trying every pair: rules are
grouped by their guard, and the forbidden literals sit in one Aho-Corasick automaton per subject
(``Contained``), so each required literal (or inserted text) is scanned once and yields exactly
the bans inside it. The work is the length of the literals plus the clashes found; a pack of
3,000 rules no longer costs 9 million comparisons. The diagnostics, and their order, are those
of comparing every pair: each pair found is reported by the same ``clash`` as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import ahocorasick

from charter.diagnostics import Diagnostic, Location, error, warning
from charter.dsl import ast as A

Lit = tuple[str, str]  # (subject, literal)


@dataclass(frozen=True)
class Facts:
    requires: dict[Lit, A.Span]
    forbids: dict[Lit, A.Span]


def conjuncts(node: A.Expr | None) -> tuple[A.Expr, ...]:
    if node is None:
        return ()
    if isinstance(node, A.And):
        return tuple(c for item in node.items for c in conjuncts(item))
    return (node,)


def facts(node: A.Expr | None) -> Facts:
    req: dict[Lit, A.Span] = {}
    forb: dict[Lit, A.Span] = {}
    for c in conjuncts(node):
        if isinstance(c, A.Contains) and c.mode in ("one", "all"):
            for t in c.terms.values:
                req.setdefault((c.subject.dotted(), t), c.span)
        elif (
            isinstance(c, A.Not)
            and isinstance(c.item, A.Contains)
            and c.item.mode in ("one", "any")
            and not c.item.unless
        ):
            for t in c.item.terms.values:
                forb.setdefault((c.item.subject.dotted(), t), c.span)
    return Facts(req, forb)


def clash(requires: dict[Lit, A.Span], forbids: dict[Lit, A.Span]) -> tuple[Lit, Lit] | None:
    """A required literal that contains a forbidden one on the same subject: the first required
    literal in sorted order that contains any, with the first such forbidden one."""
    if not requires or not forbids:
        return None
    banned = sorted(forbids)
    for subj, need in sorted(requires):
        for fsubj, ban in banned:
            if subj == fsubj and ban in need:
                return (subj, need), (fsubj, ban)
    return None


class Contained:
    """Literals by subject, each with its owners by group: which of them lie inside a text.

    One automaton per subject finds them in a single pass over the text; the empty literal,
    which the automaton cannot hold, lies inside every text.
    """

    def __init__(self, entries: Iterable[tuple[Lit, Hashable, int]]) -> None:
        self._owners: dict[Lit, dict[Hashable, list[int]]] = {}
        for lit, group, owner in entries:
            self._owners.setdefault(lit, {}).setdefault(group, []).append(owner)
        self._automata: dict[str, ahocorasick.Automaton] = {}
        for subj, literal in self._owners:
            if literal:
                if subj not in self._automata:
                    self._automata[subj] = ahocorasick.Automaton()
                self._automata[subj].add_word(literal, literal)
        for automaton in self._automata.values():
            automaton.make_automaton()

    def inside(self, subj: str, text: str) -> list[tuple[str, Mapping[Hashable, list[int]]]]:
        """The literals of ``subj`` that ``text`` contains (each once), with their owners."""
        found: dict[str, None] = {}
        if (subj, "") in self._owners:
            found[""] = None
        automaton = self._automata.get(subj)
        if automaton is not None:
            for _end, literal in automaton.iter(text):
                found[literal] = None
        return [(literal, self._owners[(subj, literal)]) for literal in found]


def _text_added(action: A.Action) -> str:
    if action.kind != "fix" or action.repair is None:
        return ""
    name = action.repair.text
    if name in ("append", "prepend") and action.args:
        return str(action.args[0].value)
    if name == "replace" and len(action.args) == 3:
        return str(action.args[2].value)
    return ""


@dataclass(frozen=True)
class RuleView:
    id: str
    when: A.Expr | None
    check: A.Expr
    action: A.Action
    locate_check: Callable[[A.Span], Location]
    locate_when: Callable[[A.Span], Location]
    locate_action: Callable[[A.Span], Location]


View = tuple[RuleView, Facts, Facts]  # the rule, its when's facts, its check's facts


def analyze(rules: Sequence[RuleView]) -> list[Diagnostic]:
    views = [(r, facts(r.when), facts(r.check)) for r in rules]
    out = [d for view in views for d in _within_rule(view)]
    out.extend(_between_rules(views))
    out.extend(_repairs(views))
    return out


def _within_rule(view: View) -> list[Diagnostic]:
    r, wf, cf = view
    out: list[Diagnostic] = []
    if (c := clash(wf.requires, wf.forbids)) is not None:
        out.append(
            warning(
                "CH111",
                f"rule '{r.id}' can never fire: its when-guard requires "
                f"'{c[0][1]}' and forbids '{c[1][1]}'",
                r.locate_when(wf.forbids[c[1]]),
                "remove one of the two conditions",
            )
        )
    if (c := clash(cf.requires, cf.forbids)) is not None:
        out.append(
            error(
                "CH110",
                f"rule '{r.id}' requires '{c[0][1]}' and forbids '{c[1][1]}'",
                r.locate_check(cf.forbids[c[1]]),
                "the check can never pass; drop one side",
            )
        )
    elif (c := clash(wf.requires, cf.forbids)) is not None:
        out.append(
            error(
                "CH110",
                f"rule '{r.id}' can never pass: its when-guard requires "
                f"'{c[0][1]}' and its check forbids '{c[1][1]}'",
                r.locate_check(cf.forbids[c[1]]),
                "the rule fails whenever it applies",
            )
        )
    return out


def _between_rules(views: Sequence[View]) -> list[Diagnostic]:
    """Rule ``b`` forbids what rule ``a`` requires, both under equal guards: for ``a`` then
    ``b`` in rule order, as a loop over every pair would report them."""
    # Guards compare by structure (spans aside); numbering them once avoids hashing an AST
    # at every lookup.
    guard_ids: dict[A.Expr | None, int] = {}
    guard = [guard_ids.setdefault(r.when, len(guard_ids)) for r, _, _ in views]
    bans = Contained((lit, guard[j], j) for j, (_, _, bf) in enumerate(views) for lit in bf.forbids)
    pairs: set[tuple[int, int]] = set()
    for i, (_, _, af) in enumerate(views):
        for subj, need in af.requires:
            for _ban, owners in bans.inside(subj, need):
                pairs.update((i, j) for j in owners.get(guard[i], ()) if j != i)
    out: list[Diagnostic] = []
    for i, j in sorted(pairs):
        (a, _, af), (b, _, bf) = views[i], views[j]
        if a is not b and (c := clash(af.requires, bf.forbids)) is not None:
            out.append(
                error(
                    "CH110",
                    f"rule '{b.id}' forbids '{c[1][1]}', which rule '{a.id}' requires",
                    b.locate_check(bf.forbids[c[1]]),
                    "no output can satisfy both rules; remove or narrow one of them",
                )
            )
    return out


def _repairs(views: Sequence[View]) -> list[Diagnostic]:
    """A repair inserts text that an unguarded rule bans from the output: for each repair, the
    banning rules in rule order, each rule's bans in sorted order."""
    bans = Contained(
        (lit, None, j)
        for j, (b, _, bf) in enumerate(views)
        if b.when is None
        for lit in bf.forbids
        if lit[0] == "output"
    )
    out: list[Diagnostic] = []
    for a, _, _ in views:
        added = _text_added(a.action)
        if not added:
            continue
        hits = sorted(
            (j, ban) for ban, owners in bans.inside("output", added) for j in owners[None]
        )
        for j, ban in hits:
            out.append(
                error(
                    "CH110",
                    f"the repair of rule '{a.id}' inserts '{ban}', which rule "
                    f"'{views[j][0].id}' forbids",
                    a.locate_action(a.action.span),
                    "change the repair text so the fixed output passes every rule",
                )
            )
    return out
