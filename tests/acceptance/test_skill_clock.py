"""Acceptance (issue 32 item 6): the Agent's ``clock=`` (what ``charter chat --now`` and a
conversation test's ``now:`` give it) reaches the skills a turn calls, as ``context.now``; an
agent on the wall clock tells its skills the clock was not set, and the reference skills then
keep their demo data's day."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent
from charter.contracts.registry import Registry
from charter.contracts.skills import Skill, SkillContext
from charter.llm.scripted import ScriptedLLM
from charter_skills.ecommerce import ReturnRequest

KEY = base64.b64encode(bytes(range(32))).decode()
CST = timezone(timedelta(hours=8))


class Reporting:
    """The order lookup, remembering the context of each call."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.seen: list[SkillContext] = []

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext) -> Any:
        self.seen.append(context)
        return self.skill(args)


def turn(tmp_path: Path, registry: Registry, **clock: Any) -> tuple[str, list[SkillContext]]:
    lookup = Reporting(registry.skills["order_lookup"])
    reg = replace(registry, skills={**registry.skills, "order_lookup": lookup})
    db = tmp_path / "clock.db"
    db.touch()
    with Agent.from_pack(
        "ecommerce",
        llm=ScriptedLLM([]),
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        registry=reg,
        **clock,
    ) as agent:
        reply = agent.turn("u1", "s1", "帮我查一下订单DD202405010001")
    return reply.text, lookup.seen


def test_the_agents_clock_reaches_the_skill(tmp_path: Path, registry: Registry) -> None:
    fixed = datetime(2026, 1, 20, 10, 0, tzinfo=CST)
    text, seen = turn(tmp_path, registry, clock=lambda: fixed)
    assert text.startswith("订单DD202405010001当前状态为已发货")
    assert seen == [SkillContext(fixed, True, "ecommerce", "u1", "s1")]


def test_on_the_wall_clock_the_skill_is_told_it_was_not_set(
    tmp_path: Path, registry: Registry
) -> None:
    before = datetime.now(UTC)
    _, seen = turn(tmp_path, registry)
    (told,) = seen
    assert told.clock_set is False and before <= told.now <= datetime.now(UTC)


@pytest.mark.parametrize(
    ("context", "day"),
    [
        (None, "2024-05-08"),  # called without a context: the demo's day
        (SkillContext(datetime(2030, 1, 1, tzinfo=UTC), clock_set=False), "2024-05-08"),
        (SkillContext(datetime(2024, 5, 9, 10, 0, tzinfo=CST), clock_set=True), "2024-05-09"),
    ],
)
def test_the_reference_return_request_keeps_its_demo_day_unless_the_clock_was_set(
    context: SkillContext | None, day: str
) -> None:
    skill = ReturnRequest()
    args = {"order_id": "DD202405030002", "kind": "退货"}
    done = skill(args) if context is None else skill(args, context=context)
    assert done["request_no"] == f"SH-{day.replace('-', '')}-0001"
