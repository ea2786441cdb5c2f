"""Acceptance (issue 32 item 6): the Agent's ``clock=`` (what ``charter chat --now`` and a
conversation test's ``now:`` give it) reaches the skills a turn calls, as ``context.now``; an
agent on the wall clock tells its skills the clock was not set, and the reference skills then
keep their demo data's day. ``charter skills call --now`` sets the clock one call sees."""

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
from tests.support.cli import Run, RunCharter
from tests.support.paths import ROOT

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


BOOK = '{"department": "皮肤科", "date": "2027-03-03", "period": "上午"}'


@pytest.mark.parametrize(
    ("now", "code", "answer"),
    [
        # the day before: tomorrow is the schedule's first day
        (
            "2027-03-02T09:00:00+08:00",
            0,
            "已为您预约皮肤科2027-03-03上午的门诊，预约号PF-20270303-AM-013，就诊序号第13号，"
            "请按时到院取号。",
        ),
        # the day after: the date is past, refused before the skill books anything
        (
            "2027-03-04T09:00:00+08:00",
            0,
            "就诊日期2027-03-03早于今天（2027-03-04），只能预约2027-03-05至2027-03-09的号源，"
            "请重新选择日期。",
        ),
        # no clock given: the schedule's own day (2025-06-30)
        (None, 0, "目前只开放2025-07-01至2025-07-05的号源，请重新选择日期。"),
    ],
)
def test_skills_call_now_is_the_clock_the_skill_sees(
    charter: RunCharter,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    now: str | None,
    code: int,
    answer: str,
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    medical = str(ROOT / "domains" / "medical")
    clock = [] if now is None else ["--now", now]
    run = charter("skills", "call", "appointment_book", "--domain", medical, "--args", BOOK, *clock)
    assert (run.code, run.err) == (code, "")
    assert run.out.splitlines()[-1] == f"  answer: {answer}"


@pytest.mark.parametrize("now", ["2027-03-02T09:00", "2027-03-02", "明天"])
def test_skills_call_refuses_a_now_without_its_offset(charter: RunCharter, now: str) -> None:
    medical = str(ROOT / "domains" / "medical")
    run = charter("skills", "call", "appointment_book", "--domain", medical, "--now", now)
    assert run == Run(
        1,
        "",
        f"charter skills call: --now {now!r} is not an ISO 8601 time with a UTC offset "
        "(2025-06-30T10:00+08:00)\n",
    )
