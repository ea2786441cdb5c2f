"""The goal-alignment check of reflection (【目标对齐】, seed 000 §2.2): does an answer deliver
what the active goals need?

Each intent lists deliverables. A template deliverable (``"{to_city}"``) is covered when its text,
with the goal's slots filled in, appears in the output (a list slot: every value); a check
deliverable when its DSL check holds on the output. A template whose slots the goal does not know
yet is not counted either way: nothing can be asked of the answer about a value nobody gave.

``Alignment.subject()`` is what rules read under ``goal.``: ``goal.aligned``,
``goal.missing_count``, ``goal.covered_count`` and ``goal.missing_deliverables`` (the missing
ones' descriptions joined by 、), so a pack decides the action, e.g.
``check: not (goal.missing_count > 0)`` with ``on_fail: retry``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from charter.compile.program import Program
from charter.compile.specs.goals import GoalsSpec
from charter.contracts.registry import Registry

_SLOT = regex.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ActiveGoal:
    """An active goal as the check sees it: its intent and every slot it knows (own slots and
    inherited ones)."""

    id: str
    intent: str
    slots: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DeliverableState:
    goal: str
    intent: str
    deliverable: str
    describe: str


@dataclass(frozen=True)
class Alignment:
    covered: tuple[DeliverableState, ...] = ()
    missing: tuple[DeliverableState, ...] = ()

    @property
    def aligned(self) -> bool:
        return not self.missing

    def subject(self) -> dict[str, Any]:
        """The ``goal`` subject of rules."""
        return {
            "aligned": self.aligned,
            "missing_count": len(self.missing),
            "covered_count": len(self.covered),
            "missing_deliverables": "、".join(d.describe for d in self.missing),
        }

    def line(self) -> str:
        """The 【目标对齐】 line of the reflection record."""
        if self.aligned:
            return "【目标对齐】Y"
        return "【目标对齐】N 缺少：" + "、".join(d.describe for d in self.missing)


class AlignmentChecker:
    def __init__(
        self, spec: GoalsSpec, registry: Registry, constants: Mapping[str, Any] | None = None
    ) -> None:
        self.spec = spec
        self.program: Program[tuple[str, str]] = Program(
            (
                ((i.id, d.id), d.check)
                for i in spec.intents
                for d in i.deliverables
                if d.check is not None
            ),
            registry,
            constants,
        )

    def check(self, goals: Sequence[ActiveGoal], output: str) -> Alignment:
        env = self.program.env(output)
        covered: list[DeliverableState] = []
        missing: list[DeliverableState] = []
        for goal in goals:
            intent = self.spec.intent(goal.intent)
            if intent is None:
                continue
            for d in intent.deliverables:
                if d.template is not None:
                    result = _template_covered(d.template, goal.slots, output)
                    describe = _describe(d.template, goal.slots)
                else:
                    result = self.program[(intent.id, d.id)](env)
                    describe = d.describe
                if result is None:
                    continue
                state = DeliverableState(goal.id, intent.id, d.id, describe)
                (covered if result else missing).append(state)
        return Alignment(tuple(covered), tuple(missing))


def _values(slots: Mapping[str, Any], name: str) -> list[str] | None:
    value = slots.get(name)
    if value is None or value == "" or value == []:
        return None
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _template_covered(template: str, slots: Mapping[str, Any], output: str) -> bool | None:
    names = _SLOT.findall(template)
    values = {n: _values(slots, n) for n in names}
    if any(v is None for v in values.values()):
        return None
    # one filled text per value of a list slot (a template holds at most one list in practice)
    texts = [template]
    for name, vals in values.items():
        assert vals is not None
        texts = [t.replace("{" + name + "}", v) for t in texts for v in vals]
    return all(t in output for t in texts)


def _describe(template: str, slots: Mapping[str, Any]) -> str:
    def one(m: regex.Match[str]) -> str:
        vals = _values(slots, m.group(1))
        return "、".join(vals) if vals else m.group(0)

    return _SLOT.sub(one, template)
