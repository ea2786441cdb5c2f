"""The goal-alignment check (【目标对齐】): deliverables covered or missing, the ``goal`` subject
rules read, and planner cases run by ``charter test``."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.cli.main import main
from charter.compile.api import compile_path
from charter.compile.specs.goals import GoalsSpec
from charter.contracts.registry import Registry
from charter.goals.alignment import ActiveGoal, AlignmentChecker
from charter.reflect.engine import Engine

ROOT = Path(__file__).resolve().parents[3]
TRAVEL = ROOT / "tests" / "fixtures" / "goals" / "travel"
FLIGHT = ActiveGoal("g2", "flight-booking", {"date": "2026-01-13", "to_city": "北京"})
HOTEL = ActiveGoal("g3", "hotel-search", {"location": "国贸"})


@pytest.fixture(scope="module")
def spec(registry: Registry) -> GoalsSpec:
    pack, diags = compile_path(TRAVEL, registry, cache_dir=None)
    assert pack is not None and pack.goals is not None, diags
    return pack.goals


@pytest.fixture(scope="module")
def checker(spec: GoalsSpec, registry: Registry) -> AlignmentChecker:
    return AlignmentChecker(spec, registry)


@pytest.mark.parametrize(
    ("output", "covered", "missing", "line"),
    [
        (
            "已为您预订1月13日飞往北京的CA1234航班；国贸附近的酒店如下。",
            ["北京", "航班号", "国贸"],
            [],
            "【目标对齐】Y",
        ),
        (
            "已为您预订飞往北京的航班。",
            ["北京"],
            ["航班号", "国贸"],
            "【目标对齐】N 缺少：航班号、国贸",
        ),
        (
            "好的，请稍等。",
            [],
            ["北京", "航班号", "国贸"],
            "【目标对齐】N 缺少：北京、航班号、国贸",
        ),
    ],
)
def test_deliverables(
    checker: AlignmentChecker, output: str, covered: list[str], missing: list[str], line: str
) -> None:
    result = checker.check([FLIGHT, HOTEL], output)
    assert [d.describe for d in result.covered] == covered
    assert [d.describe for d in result.missing] == missing
    assert result.line() == line


def test_a_template_with_an_unknown_slot_is_not_counted(checker: AlignmentChecker) -> None:
    result = checker.check([ActiveGoal("g3", "hotel-search", {})], "随便什么回答")
    assert (result.covered, result.missing) == ((), ())
    assert result.aligned


def test_a_list_slot_needs_every_value(checker: AlignmentChecker) -> None:
    weather = ActiveGoal("g1", "weather", {"city": ["北京", "上海"]})
    # weather has no deliverables: nothing to check
    assert checker.check([weather], "北京晴").aligned


def test_the_goal_subject_drives_a_rule(
    checker: AlignmentChecker, tmp_path: Path, registry: Registry
) -> None:
    pack = tmp_path / "p"
    pack.mkdir()
    (pack / "pack.yaml").write_text("name: p\nversion: 0.1.0\n", encoding="utf-8")
    (pack / "rules.yaml").write_text(
        "rules:\n"
        "  - id: goal-aligned\n"
        "    describe: 回答覆盖当前目标的全部交付要素\n"
        "    check: not (goal.missing_count > 0)\n"
        "    on_fail: retry\n",
        encoding="utf-8",
    )
    compiled, diags = compile_path(pack, registry, cache_dir=None)
    assert compiled is not None, diags
    engine = Engine(compiled, registry)
    output = "已为您预订飞往北京的航班。"
    subject = checker.check([FLIGHT], output).subject()
    assert subject == {
        "aligned": False,
        "missing_count": 1,
        "covered_count": 1,
        "missing_deliverables": "航班号",
    }
    assert engine.evaluate(output, context={"goal": subject}) == {"goal-aligned": "fail"}
    assert engine.evaluate(output) == {"goal-aligned": "pass"}  # no goals: nothing to miss


def test_charter_test_runs_planner_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    pack = tmp_path / "travel"
    pack.mkdir()
    (pack / "pack.yaml").write_text((TRAVEL / "pack.yaml").read_text("utf-8"), encoding="utf-8")
    goals = (TRAVEL / "goals.yaml").read_text("utf-8") + (
        "tests:\n"
        "  - name: 查下天气\n"
        "    input: 查下天气\n"
        "    plan:\n"
        "      goals:\n"
        "        - {ref: n1, intent: weather, parent: null, status: active, description: 查询？天气}\n"
        "  - name: a wrong expectation\n"
        "    input: 订机票\n"
        "    plan: {}\n"
    )
    (pack / "goals.yaml").write_text(goals, encoding="utf-8")
    assert main(["test", str(pack), "-v"]) == 1
    out = capsys.readouterr().out.replace(str(tmp_path), "T")
    assert out.splitlines()[0] == "PASS travel: 查下天气 (T/travel/goals.yaml:75:5)"
    assert out.splitlines()[1] == "FAIL travel: a wrong expectation (T/travel/goals.yaml:80:5)"
    assert (
        '    plan goals: expected (none), got [{"description": "预订？从？到？的机票", '
        '"intent": "flight-booking", "missing": ["date", "from_city", "to_city"], '
        '"parent": null, "ref": "n1", "status": "pending"}]'
    ) in out
    assert '    plan questions: expected (none), got ["请问您哪天出发？"]' in out
