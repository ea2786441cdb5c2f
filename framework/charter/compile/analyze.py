"""Compile stage 4: whole-rule analysis over literal requirements.

A conjunction that requires a literal (``output contains "X"``) and forbids a literal contained
in it (``not output contains "X"``, or any substring of X) can never hold. Detected inside one
rule, between a rule's ``when`` and its ``check``, between two rules under the same guard, and
between a repair's inserted text and a ban.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    """A required literal that contains a forbidden one on the same subject."""
    for (subj, need), _ in sorted(requires.items()):
        for (fsubj, ban), _ in sorted(forbids.items()):
            if subj == fsubj and ban in need:
                return (subj, need), (fsubj, ban)
    return None


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


def analyze(rules: Sequence[RuleView]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    views = [(r, facts(r.when), facts(r.check)) for r in rules]
    for r, wf, cf in views:
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
    for a, _, af in views:
        for b, _, bf in views:
            if a is b or a.when != b.when:
                continue
            c = clash(af.requires, bf.forbids)
            if c is not None:
                out.append(
                    error(
                        "CH110",
                        f"rule '{b.id}' forbids '{c[1][1]}', which rule '{a.id}' requires",
                        b.locate_check(bf.forbids[c[1]]),
                        "no output can satisfy both rules; remove or narrow one of them",
                    )
                )
    for a, _, _ in views:
        added = _text_added(a.action)
        if not added:
            continue
        for b, _, bf in views:
            if b.when is not None:
                continue
            for (subj, ban), _span in sorted(bf.forbids.items()):
                if subj == "output" and ban in added:
                    out.append(
                        error(
                            "CH110",
                            f"the repair of rule '{a.id}' inserts '{ban}', which rule "
                            f"'{b.id}' forbids",
                            a.locate_action(a.action.span),
                            "change the repair text so the fixed output passes every rule",
                        )
                    )
    return out
