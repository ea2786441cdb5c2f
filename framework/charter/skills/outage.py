"""A registered skill that raises while ``down`` is set: a simulated outage of a real skill,
for the demo and for conversation tests (``outage: <skill>``), so that its fallback protocol runs
as it would in production."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charter.contracts.skills import Skill


class Outage:
    def __init__(self, skill: Skill, why: str) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.why = why  # said in the error: who simulates it
        self.down = False

    def __call__(self, args: Mapping[str, Any]) -> Any:
        if self.down:
            raise ConnectionError(f"simulated outage of {self.name} ({self.why})")
        return self.skill(args)
