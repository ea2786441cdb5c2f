"""The DSL's meaning, one table row per behaviour: expression, text, context -> outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from charter.reflect.engine import Engine
from tests.support.rules import one_rule

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # -- contains, CJK boundaries
    ('output contains "绝对"', "这绝对安全", {}, "pass"),
    ('output contains "绝对"', "这很安全", {}, "fail"),
    ('output contains "100%"', "收益1100%", {}, "fail"),  # ASCII-led literal needs a boundary
    ('output contains "100%"', "收益100%", {}, "pass"),
    ('output contains "100%"', "收益达100%以上", {}, "pass"),  # CJK neighbour is a boundary
    ('output contains "VIP"', "尊敬的VIP客户", {}, "pass"),
    ('output contains "VIP"', "尊敬的VIPS客户", {}, "fail"),
    ('output contains any ["a1", "绝对"]', "xa1y", {}, "fail"),
    ('output contains all ["退款", "7个工作日"]', "退款将在7个工作日内到账", {}, "pass"),
    ('output contains all ["退款", "7个工作日"]', "退款很快到账", {}, "fail"),
    # -- unless preceded / followed by
    ('output contains "保证" unless preceded by ["不能", "无法"]', "不能保证收益", {}, "fail"),
    ('output contains "保证" unless preceded by ["不能", "无法"]', "保证收益", {}, "pass"),
    (
        'output contains "保证" unless preceded by "不" within 2',
        "不一定保证",
        {},
        "fail",
    ),
    ('output contains "保证" unless preceded by "不" within 1', "不一定保证", {}, "pass"),
    ('output contains "绝对" unless followed by "值"', "绝对值很大", {}, "fail"),
    ('output contains "绝对" unless followed by "值"', "绝对值和绝对安全", {}, "pass"),
    # -- matches
    ("output matches /确诊为|你得了/", "医生确诊为感冒", {}, "pass"),
    ("output matches /^您好/", "你好", {}, "fail"),
    ("output matches /hello/i", "HELLO", {}, "pass"),
    # -- mentions and near
    ("output mentions money", "共计¥100.00", {}, "pass"),
    ("output mentions money", "共计100件", {}, "fail"),
    ('output mentions percent near "收益"', "年化收益为3.5%", {}, "pass"),
    ('output mentions percent near "收益" within 2', "年化收益为一个不错的数字3.5%", {}, "fail"),
    ('output mentions percent near ["税率", "收益"]', "税率3%", {}, "pass"),
    ("output mentions percent near money", "手续费¥10.00，费率1%", {}, "pass"),
    # -- quantifiers and item predicates
    (
        "every money in output has twin money_upper",
        "¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）",
        {},
        "pass",
    ),
    ("every money in output has twin money_upper", "¥12,345.60（壹万贰仟元整）", {}, "fail"),
    ("every money in output has twin money_upper", "没有金额", {}, "pass"),  # vacuous
    ("some money in output has twin money_upper", "没有金额", {}, "fail"),
    ("no money in output value > 1000", "¥999.00和¥12.00", {}, "pass"),
    ("no money in output value > 1000", "¥999.00和¥1,200.00", {}, "fail"),
    ('every money in output (has unit "元" and decimals == 2)', "¥10.50，20.00元", {}, "pass"),
    ('every money in output (has unit "元" and decimals == 2)', "¥10.5", {}, "fail"),
    ("every money in output has unit", "¥10", {}, "pass"),
    ("every money in output decimals >= 1", "¥10", {}, "fail"),
    (r"every date in output matches /^\d{4}-\d{2}-\d{2}$/", "2024-05-01", {}, "pass"),
    (r"every date in output matches /^\d{4}-\d{2}-\d{2}$/", "2024年5月1日", {}, "fail"),
    (r"every date in output not matches /年/", "2024-05-01", {}, "pass"),
    (
        'every url in output followed by "（请自行核实）"',
        "见https://a.example.com（请自行核实）",
        {},
        "pass",
    ),
    (
        'every url in output followed by "（请自行核实）"',
        "见https://a.example.com （请自行核实）",
        {},
        "pass",
    ),
    (
        'every url in output followed by "（请自行核实）"',
        "见https://a.example.com，（请自行核实）",
        {},
        "fail",
    ),
    (
        'every url in output followed by "（请自行核实）" within 1',
        "见https://a.example.com，（请自行核实）",
        {},
        "pass",
    ),
    ('every percent in output preceded by "税率"', "税率 3%", {}, "pass"),
    ('every percent in output (near "税率" or near "收益")', "收益3%，税率5%", {}, "pass"),
    # -- comparisons, len, count, arithmetic, membership, totality
    ("len(output) <= 5", "一二三四五", {}, "pass"),
    ("len(output) <= 5", "一二三四五六", {}, "fail"),
    ("count(money in output) == 2", "¥1.00和¥2.00", {}, "pass"),
    ("context.score >= 0.72", "x", {"score": 0.8}, "pass"),
    ("context.score >= 0.72", "x", {"score": 0.5}, "fail"),
    ("context.score >= 0.72", "x", {}, "fail"),  # missing value: comparison is false
    ("context.score != 0.72", "x", {}, "pass"),
    (
        "memory.min_confidence < pack.thresholds.uncertainty",
        "x",
        {"memory": {"min_confidence": 0.6}},
        "pass",
    ),
    ("goal.slots.budget - 500 <= 1500", "x", {"goal": {"slots": {"budget": 2000}}}, "pass"),
    ("goal.slots.budget - 500 <= 1500", "x", {"goal": {"slots": {"budget": 2001}}}, "fail"),
    ("context.range[1] - context.range[0] <= 3", "x", {"range": [2020, 2023]}, "pass"),
    ("context.range[5] == 1", "x", {"range": [2020, 2023]}, "fail"),
    ('goal.intent in ["refund", "exchange"]', "x", {"goal": {"intent": "refund"}}, "pass"),
    ('goal.intent in ["refund", "exchange"]', "x", {"goal": {"intent": 3}}, "fail"),
    ("context.flag == true", "x", {"flag": True}, "pass"),
    ("context.flag == true", "x", {"flag": "yes"}, "fail"),
    ('context.name == "张三"', "x", {"name": "张三"}, "pass"),
    ('input contains "退款"', "好的", {}, "fail"),
    # -- boolean structure
    ('not output contains "a" or output contains "b"', "ab", {}, "pass"),
    ('not (output contains "a" or output contains "b")', "b", {}, "fail"),
    ('output contains "a" and output contains "b" and output contains "c"', "a、b、c", {}, "pass"),
    ('output contains "a"', "abc", {}, "fail"),
]


@pytest.mark.parametrize(
    ("check", "text", "context", "expected"),
    CASES,
    ids=[f"{i}:{c[0][:40]}" for i, c in enumerate(CASES)],
)
def test_outcome(
    engine_for: Callable[[str], Engine],
    check: str,
    text: str,
    context: dict[str, Any],
    expected: str,
) -> None:
    engine = engine_for(one_rule(check))
    assert engine.evaluate(text, "", context)["r"] == expected


def test_input_subject(engine_for: Callable[[str], Engine]) -> None:
    engine = engine_for(one_rule('input contains "退款"'))
    assert engine.evaluate("好的", "我要退款")["r"] == "pass"


@pytest.mark.parametrize(
    ("when", "text", "expected"),
    [
        ('output contains "收益"', "今天天气不错", "skip"),
        ('output contains "收益"', "收益很好", "fail"),
        ('output contains "收益"', "收益很好，历史业绩不预示未来表现", "pass"),
    ],
)
def test_when_guard(
    engine_for: Callable[[str], Engine], when: str, text: str, expected: str
) -> None:
    engine = engine_for(one_rule('output contains "历史业绩不预示未来表现"', when=when))
    assert engine.evaluate(text)["r"] == expected


@pytest.mark.parametrize(
    ("check", "text", "evidence"),
    [
        ('not output contains any ["肯定", "绝对"]', "肯定行，绝对行", ("肯定", "绝对")),
        ('not output contains "保证" unless preceded by "不能"', "不能保证，但保证", ("保证",)),
        ("every money in output has twin money_upper", "¥1.00（壹元整），¥2.00", ("¥2.00",)),
        ("no money in output value > 10", "¥1.00，¥20.00，¥30.00", ("¥20.00", "¥30.00")),
        ("not output matches /你得了\\S+/", "你得了感冒", ("你得了感冒",)),
        ('output contains "请遵医嘱"', "吃药", ()),
    ],
)
def test_findings_carry_the_evidence_that_failed(
    engine_for: Callable[[str], Engine], check: str, text: str, evidence: tuple[str, ...]
) -> None:
    result = engine_for(one_rule(check)).check(text)
    assert result.verdict == "retry"
    assert result.findings[0].evidence == evidence
    for (s, e), ev in zip(result.findings[0].spans, evidence, strict=True):
        assert text[s:e] == ev


def test_guard_evidence_when_the_check_has_none(engine_for: Callable[[str], Engine]) -> None:
    rules = one_rule(
        'output contains "历史业绩不预示未来表现"', when='output mentions percent near "收益"'
    )
    result = engine_for(rules).check("收益率5.2%")
    assert result.findings[0].evidence == ("5.2%",)
