"""Issue 32 item 6: a skill sees the clock of the turn through ``context=`` (``SkillContext``),
passed by keyword only to a skill whose ``__call__`` accepts it; a skill taking only ``args``
is called as before. The turn's clock is ``CallContext.now`` (set: ``clock_set``), else the
runner's wall clock; the wrappers (an outage, a watched skill case) pass it on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.contracts.skills import SkillContext, takes_context
from charter.skills.cases import SkillCaseRunner
from charter.skills.fallback import CallContext
from charter.skills.outage import Outage
from charter.skills.runner import SkillRunner

CST = timezone(timedelta(hours=8))
TURN = datetime(2026, 1, 20, 10, 0, tzinfo=CST)
WALL = datetime(2030, 3, 4, 5, 6, tzinfo=UTC)

CONTRACT = """\
name: {name}
description: 套餐变更
input_schema:
  type: object
  properties:
    plan: {{type: string}}
output_schema: {{type: object}}
"""


class Dated:
    """States the day a change takes effect: the first of the month after the turn's day."""

    name = "plan_change"
    description = "套餐变更"

    def __init__(self) -> None:
        self.seen: list[SkillContext] = []

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext) -> Any:
        self.seen.append(context)
        day = context.today
        first = (day.replace(day=1) + timedelta(days=32)).replace(day=1)
        return {"summary": f"您的套餐变更将于{first.isoformat()}生效"}


class ArgsOnly:
    name = "plan_old"
    description = "套餐变更（旧）"

    def __call__(self, args: Mapping[str, Any]) -> Any:
        return {"summary": f"已变更为{args.get('plan', '')}"}


class Loose:
    name = "plan_kw"
    description = "套餐变更（任意关键字）"

    def __call__(self, args: Mapping[str, Any], **kwargs: Any) -> Any:
        return {"summary": f"收到{sorted(kwargs)}"}


@pytest.fixture
def skills() -> dict[str, Any]:
    return {"plan_change": Dated(), "plan_old": ArgsOnly(), "plan_kw": Loose()}


@pytest.fixture
def pack(tmp_path: Path, registry: Registry, skills: dict[str, Any]) -> CompiledPack:
    root = tmp_path / "pack"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text("name: clock\nversion: 0.1.0\n", encoding="utf-8")
    for name in skills:
        (root / "skills" / f"{name}.yaml").write_text(CONTRACT.format(name=name), "utf-8")
    compiled, diags = compile_path(root, replace(registry, skills=skills), cache_dir=None)
    assert compiled is not None and diags == [], [d.headline() for d in diags]
    return compiled


@pytest.fixture
def runner(pack: CompiledPack, registry: Registry, skills: dict[str, Any]) -> Iterator[SkillRunner]:
    assert pack.skills is not None
    made = SkillRunner(
        pack.skills, replace(registry, skills=skills), pack="clock", clock=lambda: WALL
    )
    yield made
    made.close()


def test_a_skill_taking_context_sees_the_turns_clock(
    runner: SkillRunner, skills: dict[str, Any]
) -> None:
    ctx = CallContext(user_id="u1", session_id="s1", now=TURN)
    out = runner.call("plan_change", {"plan": "畅享59"}, ctx)
    assert (out.status, out.text) == ("ok", "您的套餐变更将于2026-02-01生效")
    assert skills["plan_change"].seen == [SkillContext(TURN, True, "clock", "u1", "s1")]


def test_without_a_turns_clock_the_skill_reads_the_wall_clock(
    runner: SkillRunner, skills: dict[str, Any]
) -> None:
    out = runner.call("plan_change", {"plan": "畅享59"}, {"user_id": "u1"})
    assert out.text == "您的套餐变更将于2030-04-01生效"
    (seen,) = skills["plan_change"].seen
    assert (seen.now, seen.clock_set, seen.user_id) == (WALL, False, "u1")


def test_a_skill_taking_only_args_keeps_working(runner: SkillRunner) -> None:
    out = runner.call("plan_old", {"plan": "畅享59"}, CallContext(now=TURN))
    assert (out.status, out.text) == ("ok", "已变更为畅享59")


def test_a_skill_taking_any_keyword_gets_the_context(runner: SkillRunner) -> None:
    assert runner.call("plan_kw", {}, CallContext(now=TURN)).text == "收到['context']"


def test_the_signature_is_read_once_not_on_every_call(
    runner: SkillRunner, skills: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import charter.skills.runner as runner_module

    def no(skill: object) -> bool:
        raise AssertionError("takes_context called during a call")

    monkeypatch.setattr(runner_module, "takes_context", no)
    assert runner.call("plan_change", {}, CallContext(now=TURN)).status == "ok"
    assert runner.call("plan_old", {}, CallContext(now=TURN)).status == "ok"


def f_args(args: Mapping[str, Any]) -> None: ...
def f_context(args: Mapping[str, Any], context: SkillContext) -> None: ...
def f_keyword(args: Mapping[str, Any], *, context: SkillContext | None = None) -> None: ...
def f_kwargs(args: Mapping[str, Any], **kw: Any) -> None: ...
def f_positional(args: Mapping[str, Any], context: SkillContext, /) -> None: ...
def f_other(args: Mapping[str, Any], *, ctx: SkillContext) -> None: ...


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (f_args, False),
        (f_context, True),
        (f_keyword, True),
        (f_kwargs, True),
        (f_positional, False),  # cannot be passed by keyword
        (f_other, False),
        (ArgsOnly(), False),
        (Dated(), True),
        (len, False),
    ],
)
def test_takes_context(fn: Any, expected: bool) -> None:
    assert takes_context(fn) is expected


def test_today_is_the_day_at_the_clocks_own_offset() -> None:
    assert SkillContext(datetime(2026, 1, 20, 1, 0, tzinfo=CST)).today.isoformat() == "2026-01-20"
    assert SkillContext(datetime(2026, 1, 19, 17, 0, tzinfo=UTC)).today.isoformat() == "2026-01-19"


def test_the_wall_clock_is_told_in_local_time(runner: SkillRunner) -> None:
    told = runner.skill_context(CallContext())
    assert told.now == WALL and told.now.utcoffset() == WALL.astimezone().utcoffset()


def test_the_call_context_reads_now_from_a_mapping() -> None:
    assert CallContext.of({"now": "2026-01-20T10:00:00+08:00"}).now == TURN
    with pytest.raises(ValueError, match="has no UTC offset"):
        CallContext.of({"now": "2026-01-20T10:00"})


def test_an_outage_passes_the_context_on(skills: dict[str, Any]) -> None:
    up = Outage(skills["plan_change"], "a test")
    assert takes_context(up)
    told = up({}, context=SkillContext(TURN, True))
    assert told == {"summary": "您的套餐变更将于2026-02-01生效"}
    assert Outage(ArgsOnly(), "a test")({"plan": "x"}, context=SkillContext(TURN)) == {
        "summary": "已变更为x"
    }


def test_a_skill_case_runner_passes_the_context_on(
    pack: CompiledPack, registry: Registry, skills: dict[str, Any]
) -> None:
    from charter.compile.specs.skills import SkillCase
    from charter.diagnostics import Location

    case = SkillCase("case", "{}", Location("x.yaml", 1, 1), now="2026-01-20T10:00:00+08:00")
    with SkillCaseRunner(pack, replace(registry, skills=skills)) as cases:
        called = cases.call("plan_change", case)
    assert called.outcome.text == "您的套餐变更将于2026-02-01生效"
    assert skills["plan_change"].seen[0].clock_set is True


@pytest.mark.parametrize(
    ("now", "codes", "context"),
    [
        ("2026-01-20T10:00:00+08:00", [], {"now": "2026-01-20T10:00:00+08:00"}),
        ("2026-01-20T10:00", ["CH329"], None),
        ("2026-01-20", ["CH329"], None),
    ],
)
def test_a_skill_case_sets_the_clock(
    tmp_path: Path,
    registry: Registry,
    skills: dict[str, Any],
    now: str,
    codes: list[str],
    context: dict[str, Any] | None,
) -> None:
    root = tmp_path / "p"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text("name: clock\nversion: 0.1.0\n", encoding="utf-8")
    case = (
        f"tests:\n  - name: 生效日\n    args: {{}}\n    now: '{now}'\n    expect: {{status: ok}}\n"
    )
    (root / "skills" / "plan_change.yaml").write_text(
        CONTRACT.format(name="plan_change") + case, "utf-8"
    )
    compiled, diags = compile_path(root, replace(registry, skills=skills), cache_dir=None)
    assert [d.code for d in diags] == codes
    if context is None:
        assert compiled is None
        return
    assert compiled is not None and compiled.skills is not None
    assert [c.context for c in compiled.skills.contracts[0].cases] == [context]
