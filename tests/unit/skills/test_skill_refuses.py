"""Issue 32 item 6: a skill's own check of its arguments on the turn's day (``refuses``), for
what its contract cannot know (a date before today). The runner asks it after the contract's
schema and constraints, before the call (``call``) and without one (``check``, an action about
to be confirmed); its refusal is told like a constraint's — ``invalid``, the arguments it asks
again — and the skill is not called. The wrappers (an outage, a watched skill case) pass it on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.specs.skills import SkillCase
from charter.contracts.registry import Registry
from charter.contracts.skills import Refused, SkillContext
from charter.diagnostics import Location
from charter.skills.cases import SkillCaseRunner
from charter.skills.fallback import CallContext
from charter.skills.outage import Outage
from charter.skills.runner import SkillRunner

CST = timezone(timedelta(hours=8))
TURN = datetime(2026, 1, 20, 10, 0, tzinfo=CST)
WALL = datetime(2030, 3, 4, 5, 6, tzinfo=UTC)

CONTRACT = """\
name: plan_change
description: 预约套餐变更
effect: execute
input_schema:
  type: object
  required: [plan, start]
  properties:
    plan: {type: string, enum: [畅享59, 畅享99]}
    start: {type: string, format: date}
output_schema: {type: object}
messages:
  plan: 只能变更为畅享59或畅享99
"""


class Scheduled:
    """Changes the plan from ``start``, which may not be before the turn's day."""

    name = "plan_change"
    description = "预约套餐变更"

    def __init__(self, broken: bool = False) -> None:
        self.calls = 0
        self.asked: list[SkillContext] = []
        self.broken = broken

    def refuses(self, args: Mapping[str, Any], *, context: SkillContext) -> Refused | None:
        self.asked.append(context)
        if self.broken:
            raise KeyError("start")
        today = context.today.isoformat()
        if str(args["start"]) < today:
            return Refused(f"生效日期{args['start']}早于今天（{today}），请重新选择", ("start",))
        return None

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext) -> Any:
        self.calls += 1
        return {"summary": f"已预约{args['start']}起变更为{args['plan']}"}


@pytest.fixture
def skill() -> Scheduled:
    return Scheduled()


@pytest.fixture
def pack(tmp_path: Path, registry: Registry, skill: Scheduled) -> CompiledPack:
    root = tmp_path / "pack"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text("name: clock\nversion: 0.1.0\n", encoding="utf-8")
    (root / "skills" / "plan_change.yaml").write_text(CONTRACT, "utf-8")
    reg = replace(registry, skills={"plan_change": skill})
    compiled, diags = compile_path(root, reg, cache_dir=None)
    assert compiled is not None and diags == [], [d.headline() for d in diags]
    return compiled


def runner_of(pack: CompiledPack, registry: Registry, skill: Any) -> SkillRunner:
    assert pack.skills is not None
    reg = replace(registry, skills={"plan_change": skill})
    return SkillRunner(pack.skills, reg, pack="clock", clock=lambda: WALL)


@pytest.fixture
def runner(pack: CompiledPack, registry: Registry, skill: Scheduled) -> Iterator[SkillRunner]:
    made = runner_of(pack, registry, skill)
    yield made
    made.close()


@pytest.mark.parametrize(
    ("start", "now", "status", "text"),
    [
        ("2026-01-19", TURN, "invalid", "生效日期2026-01-19早于今天（2026-01-20），请重新选择"),
        ("2026-01-20", TURN, "ok", "已预约2026-01-20起变更为畅享99"),
        # on the wall clock (2030-03-04) the same day is past
        ("2026-01-20", None, "invalid", "生效日期2026-01-20早于今天（2030-03-04），请重新选择"),
    ],
)
def test_the_skill_refuses_on_the_turns_day(
    runner: SkillRunner,
    skill: Scheduled,
    start: str,
    now: datetime | None,
    status: str,
    text: str,
) -> None:
    out = runner.call("plan_change", {"plan": "畅享99", "start": start}, CallContext(now=now))
    assert (out.status, out.text) == (status, text)
    assert skill.calls == (1 if status == "ok" else 0)


def test_a_refusal_names_the_argument_to_ask_again(runner: SkillRunner) -> None:
    out = runner.call(
        "plan_change", {"plan": "畅享99", "start": "2026-01-01"}, CallContext(now=TURN)
    )
    assert out.failure is not None
    assert (out.failure.kind, out.failure.field, out.failure.detail) == (
        "invalid_args",
        "start",
        "refused by plan_change",
    )


def test_check_asks_the_skill_without_calling_it(runner: SkillRunner, skill: Scheduled) -> None:
    args = {"plan": "畅享59", "start": "2026-01-02"}
    refused = runner.check("plan_change", args, CallContext(user_id="u1", now=TURN))
    assert refused is not None
    assert (refused.status, refused.text) == (
        "invalid",
        "生效日期2026-01-02早于今天（2026-01-20），请重新选择",
    )
    assert runner.check("plan_change", {**args, "start": "2026-02-01"}, {"now": TURN}) is None
    assert skill.calls == 0
    assert skill.asked[0] == SkillContext(TURN, True, "clock", "u1", "")


def test_the_contract_answers_first(runner: SkillRunner, skill: Scheduled) -> None:
    out = runner.call("plan_change", {"plan": "畅享199", "start": "2026-01-01"}, {"now": TURN})
    assert (out.status, out.text) == ("invalid", "只能变更为畅享59或畅享99")
    assert skill.asked == []


def test_a_check_that_raises_refuses_nothing(pack: CompiledPack, registry: Registry) -> None:
    broken = Scheduled(broken=True)
    made = runner_of(pack, registry, broken)
    try:
        out = made.call("plan_change", {"plan": "畅享59", "start": "2026-01-01"}, {"now": TURN})
    finally:
        made.close()
    assert (out.status, broken.calls) == ("ok", 1)


def test_an_outage_checks_while_up_and_not_while_down(skill: Scheduled) -> None:
    wrapped = Outage(skill, "a test")
    args = {"plan": "畅享59", "start": "2026-01-01"}
    told = SkillContext(TURN, True)
    assert wrapped.refuses(args, context=told) == Refused(
        "生效日期2026-01-01早于今天（2026-01-20），请重新选择", ("start",)
    )
    wrapped.down = True
    assert wrapped.refuses(args, context=told) is None


def test_a_skill_case_is_refused_by_the_skill(
    pack: CompiledPack, registry: Registry, skill: Scheduled
) -> None:
    args = '{"plan": "畅享59", "start": "2026-01-01"}'
    case = SkillCase("过去的日期", args, Location("x.yaml", 1, 1), now="2026-01-20T10:00:00+08:00")
    with SkillCaseRunner(pack, replace(registry, skills={"plan_change": skill})) as cases:
        called = cases.call("plan_change", case)
    assert (called.outcome.status, called.reply) == (
        "invalid",
        "生效日期2026-01-01早于今天（2026-01-20），请重新选择",
    )
    assert called.returned is False and skill.calls == 0
