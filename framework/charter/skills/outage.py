"""A registered skill that raises while ``down`` is set: a simulated outage of a real skill,
for the demo and for conversation tests (``outage: <skill>``), so that its fallback protocol runs
as it would in production."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charter.contracts.skills import Refused, Skill, SkillContext, takes_context


class Outage:
    def __init__(self, skill: Skill, why: str) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.why = why  # said in the error: who simulates it
        self.down = False
        self._contextual = takes_context(skill)

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext | None = None) -> Any:
        if self.down:
            raise ConnectionError(f"simulated outage of {self.name} ({self.why})")
        if self._contextual and context is not None:
            return self.skill(args, context=context)  # type: ignore[call-arg]
        return self.skill(args)

    def refuses(self, args: Mapping[str, Any], *, context: SkillContext) -> Refused | None:
        """The skill's own check, while it is up: a system that is down checks nothing (the
        call fails, and its fallback tells)."""
        own = getattr(self.skill, "refuses", None)
        if self.down or not callable(own):
            return None
        refused: Refused | None = own(args, context=context)
        return refused
