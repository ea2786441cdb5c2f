"""Verdict precedence, the repair loop and what a CheckResult says."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from charter.reflect.engine import Engine

RULES = """
rules:
  - id: ban
    describe: ban 绝对
    check: not output contains "绝对"
    on_fail: {ban}
  - id: disclaimer
    describe: needs 请遵医嘱
    when: output contains "药"
    check: output contains "请遵医嘱"
    on_fail: fix append "（请遵医嘱）"
  - id: polite
    describe: flag impoliteness
    check: not output contains "喂"
    on_fail: flag
"""


@pytest.mark.parametrize(
    ("ban_action", "text", "verdict", "final"),
    [
        ("block", "绝对有效的药", "block", "抱歉，这个问题我暂时无法回答，已为您转接人工客服。"),
        ("escalate", "绝对有效的药", "escalate", "绝对有效的药（请遵医嘱）"),
        ("retry", "绝对有效的药", "retry", "绝对有效的药（请遵医嘱）"),
        ("flag", "绝对有效的药", "fixed", "绝对有效的药（请遵医嘱）"),
        ("retry", "有效的药", "fixed", "有效的药（请遵医嘱）"),
        ("retry", "有效的药，请遵医嘱", "pass", "有效的药，请遵医嘱"),
        ("retry", "喂，有效的药，请遵医嘱", "pass", "喂，有效的药，请遵医嘱"),
    ],
)
def test_verdict_precedence(
    engine_for: Callable[[str], Engine], ban_action: str, text: str, verdict: str, final: str
) -> None:
    result = engine_for(RULES.format(ban=ban_action)).check(text)
    assert (result.verdict, result.final_text) == (verdict, final)


def test_block_skips_repairs_and_keeps_findings(engine_for: Callable[[str], Engine]) -> None:
    result = engine_for(RULES.format(ban="block")).check("绝对有效的药")
    assert result.fixed_text is None
    assert [(f.rule_id, f.action, f.fixed) for f in result.findings] == [
        ("ban", "block", False),
        ("disclaimer", "fix", False),
    ]


def test_flag_findings_do_not_change_the_verdict(engine_for: Callable[[str], Engine]) -> None:
    result = engine_for(RULES.format(ban="retry")).check("喂，你好")
    assert result.verdict == "pass"
    assert [(f.rule_id, f.evidence) for f in result.findings] == [("polite", ("喂",))]
    assert result.outcomes == {"ban": "pass", "disclaimer": "skip", "polite": "fail"}


UNFIXABLE = """
rules:
  - id: iso-dates
    describe: dates as YYYY-MM-DD
    check: every date in output matches /^\\d{{4}}-\\d{{2}}-\\d{{2}}$/
    on_fail: fix reformat date
    {unfixed}
"""


@pytest.mark.parametrize(
    ("unfixed", "text", "verdict", "fixed"),
    [
        ("", "请于2024年5月1日前提交", "fixed", "请于2024-05-01前提交"),
        ("", "请于5月1日前提交", "retry", None),  # no year: cannot be reformatted
        ("on_unfixed: escalate", "请于5月1日前提交", "escalate", None),
        ("on_unfixed: flag", "请于5月1日前提交", "pass", None),
    ],
)
def test_a_fix_that_does_not_hold_falls_back_to_on_unfixed(
    engine_for: Callable[[str], Engine], unfixed: str, text: str, verdict: str, fixed: str | None
) -> None:
    result = engine_for(UNFIXABLE.format(unfixed=unfixed)).check(text)
    assert (result.verdict, result.fixed_text) == (verdict, fixed)
    assert result.findings[0].fixed is (verdict == "fixed")


def test_a_repair_that_breaks_another_rule_is_reported_as_introduced(
    engine_for: Callable[[str], Engine],
) -> None:
    rules = """
rules:
  - id: short
    describe: at most 8 characters
    check: len(output) <= 8
    on_fail: retry
  - id: disclaimer
    describe: needs 请遵医嘱
    check: output contains "请遵医嘱"
    on_fail: fix append "（请遵医嘱）"
"""
    result = engine_for(rules).check("吃点药吧")
    assert result.verdict == "retry"
    assert result.fixed_text == "吃点药吧（请遵医嘱）"
    assert [(f.rule_id, f.fixed, f.introduced) for f in result.findings] == [
        ("disclaimer", True, False),
        ("short", False, True),
    ]


def test_replace_only_touches_the_occurrences_that_failed(
    engine_for: Callable[[str], Engine],
) -> None:
    rules = """
rules:
  - id: no-guarantee
    describe: no guarantees
    check: not output contains "保证" unless preceded by "不能"
    on_fail: fix replace "保证" with "力争"
"""
    result = engine_for(rules).check("我们不能保证收益，但保证服务")
    assert result.fixed_text == "我们不能保证收益，但力争服务"
    assert result.verdict == "fixed"


def test_reformat_only_rewrites_the_blamed_items(engine_for: Callable[[str], Engine]) -> None:
    rules = """
rules:
  - id: price
    describe: two decimals
    check: every money in output decimals == 2
    on_fail: fix reformat money
"""
    result = engine_for(rules).check("原价¥1,200，现价¥999.00，运费8元")
    assert result.fixed_text == "原价¥1,200.00，现价¥999.00，运费8.00元"


def test_repairs_chain_in_rule_order(engine_for: Callable[[str], Engine]) -> None:
    rules = """
rules:
  - id: marker
    describe: marker first
    check: output contains "[需人工确认]"
    on_fail: fix prepend "[需人工确认]"
  - id: link
    describe: link note
    check: every url in output followed by "（请自行核实）"
    on_fail: fix annotate "（请自行核实）"
  - id: drug
    describe: disclaimer
    check: output contains "请遵医嘱"
    on_fail: fix append "（请遵医嘱）"
"""
    result = engine_for(rules).check("参见www.example.com，布洛芬")
    assert result.fixed_text == "[需人工确认]参见www.example.com（请自行核实），布洛芬（请遵医嘱）"
    assert result.verdict == "fixed"
    again = engine_for(rules).check(result.fixed_text)
    assert (again.verdict, again.fixed_text) == ("pass", None)


def test_engine_is_deterministic_and_pack_is_hashable(
    engine_for: Callable[[str], Engine],
) -> None:
    engine = engine_for(RULES.format(ban="retry"))
    first = engine.check("绝对有效的药")
    assert engine.check("绝对有效的药") == first
    pack = engine.pack
    clone = pickle.loads(pickle.dumps(pack))
    assert clone == pack and hash(clone) == hash(pack)
    assert {pack: 1}[clone] == 1
