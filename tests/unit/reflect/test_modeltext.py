"""``check_model_text``: the built-in rules every model answer goes through, and the DSL
predicates that give pack authors the same checks."""

from __future__ import annotations

from typing import Any

import pytest

from charter.contracts.registry import Registry
from charter.contracts.rules import Predicate
from charter.reflect.engine import Engine
from charter.reflect.modeltext import RULES, check_model_text
from charter.reflect.predicates import PREDICATES
from tests.support.rules import CompileText, one_rule

SYSTEM = "你是finance的客服助手。只根据下面给出的信息，用简洁的中文回答用户；不知道的就说不知道。"
SKILL = "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"
QUERY = "我的余额是多少？"
BODY = f"【当前任务】查询账户余额\n【技能结果】{SKILL}\n请基于以上信息回答：{QUERY}"
ORDER = "订单DD202405010001：已发货，详情https://shop.example.com/o/DD202405010001"
STATUSES = ("已发货", "运输中", "已签收", "待付款", "已取消")
GROUNDED = "只能使用技能结果、记忆或用户提供的金额、日期和编号：{} 没有出处。"

REFUSED: list[tuple[str, list[tuple[str, str, list[list[int]], list[str]]]]] = [
    (
        SYSTEM,
        [
            (
                "model-text/echo",
                "不要复述提示里的说明和资料，直接用自己的话回答用户的问题。",
                [[0, 47]],
                [SYSTEM],
            )
        ],
    ),
    (
        "1.5.0-" * 10 + "1.5.0-1.5",
        [
            (
                "model-text/repetition",
                "不要重复同样的内容：“1.5.0-”重复了11次。",
                [[0, 66]],
                ["1.5.0-" * 11],
            )
        ],
    ),
    (
        "为什么是正品？" * 5,
        [
            (
                "model-text/repetition",
                "不要重复同样的内容：“为什么是正品？”重复了5次。",
                [[0, 35]],
                ["为什么是正品？" * 5],
            )
        ],
    ),
    (
        "余额为¥99,999.00（玖万玖仟玖佰玖拾玖元整）",
        [
            (
                "model-text/grounded",
                GROUNDED.format("¥99,999.00、玖万玖仟玖佰玖拾玖元整"),
                [[3, 13], [14, 25]],
                ["¥99,999.00", "玖万玖仟玖佰玖拾玖元整"],
            )
        ],
    ),
    (
        "Your balance is 99999 yuan.",
        [
            ("model-text/language", "请用中文回答。", [[0, 27]], ["Your balance is 99999 yuan."]),
            ("model-text/grounded", GROUNDED.format("99999"), [[16, 21]], ["99999"]),
        ],
    ),
    (
        "。。。……",
        [("model-text/empty", "回答没有任何内容，请直接回答用户的问题。", [[0, 5]], ["。。。……"])],
    ),
    (
        "您的订单DD202405010002已签收。",
        [
            (
                "model-text/grounded",
                GROUNDED.format("DD202405010002、已签收"),
                [[4, 18], [18, 21]],
                ["DD202405010002", "已签收"],
            )
        ],
    ),
]

PASSED = [
    SKILL,
    "您好，" + SKILL + "如需其他帮助请随时告诉我。",
    "您尾号1234的账户余额为12345.6元，数据截至2024年5月1日。",
    "已为您记录转账金额5,000.00元。",  # the user's own amount
    "推荐以下三款产品：\n1. 稳健理财A，年化3.5%\n2. 大额存单B，年化2.9%\n3. 货币基金C，年化1.8%",
    "您的订单DD202405010001已发货，详情请见https://shop.example.com/o/DD202405010001",
    "您要转账的金额是１２３４５元。",  # full-width digits, 12345元 in the input
    "不知道。",
]
GROUNDS = (
    SKILL,
    ORDER,
    "稳健理财A 年化3.5%；大额存单B 年化2.9%；货币基金C 年化1.8%",
    "我想转账5000元，不对，是12345元",
)


@pytest.mark.parametrize(("text", "expected"), REFUSED)
def test_refused(
    registry: Registry,
    text: str,
    expected: list[tuple[str, str, list[list[int]], list[str]]],
) -> None:
    findings = check_model_text(
        text,
        grounds=(*GROUNDS, QUERY),
        prompt=(SYSTEM, BODY),
        locale="zh-CN",
        extractors=registry.extractors,
        statuses=STATUSES,
    )
    assert [
        (d["rule"], d["message"], d["spans"], d["evidence"])
        for d in (f.as_dict() for f in findings)
    ] == expected
    assert {f.action for f in findings} == {"retry"}
    assert {f.rule_id for f in findings} <= set(RULES)


@pytest.mark.parametrize("text", PASSED)
def test_passed(registry: Registry, text: str) -> None:
    assert (
        check_model_text(
            text,
            grounds=(*GROUNDS, QUERY),
            prompt=(SYSTEM, BODY),
            locale="zh-CN",
            extractors=registry.extractors,
            statuses=STATUSES,
        )
        == ()
    )


def test_other_locales_are_named_in_the_message() -> None:
    (finding,) = check_model_text("您好，您的订单已经发货了。", locale="en-US")
    assert (finding.rule_id, finding.message) == ("model-text/language", "请用英语回答。")
    (finding,) = check_model_text("您好，您的订单已经发货了。", locale="sv-SE")
    assert finding.message == "请用sv-SE对应的语言回答。"


def test_a_long_repeated_unit_is_quoted_short() -> None:
    unit = "这是一句很长很长很长的话，模型一直在重复它，没有停下来的意思。"
    (finding,) = check_model_text(unit * 3)
    assert finding.message == (
        "不要重复同样的内容：“这是一句很长很长很长的话，模型一直在重复…”重复了3次。"
    )


# ---- the predicates, through a compiled pack -------------------------------------------------

RULES_YAML = """\
rules:
  - id: no-echo
    describe: 不复述提示
    check: not echoes(output, context.prompt)
    on_fail: retry
  - id: no-repetition
    describe: 不重复
    check: not repetitive(output)
    on_fail: retry
  - id: chinese
    describe: 用中文回答
    check: not off_language(output, "zh-CN")
    on_fail: retry
  - id: some-content
    describe: 有内容
    check: not no_content(output)
    on_fail: retry
"""
# the instructions only: a path holding the skill results too would make quoting them an echo
PROMPT = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "【当前任务】查询账户余额和最近一笔交易"},
]


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        (SYSTEM, ["no-echo"]),
        ("为什么是正品？" * 5, ["no-repetition"]),
        ("Your balance is 12345.60 yuan.", ["chinese"]),
        ("……", ["some-content"]),
        ("", ["some-content"]),
        ("您好，您的余额为¥12,345.60。", []),
        ("【当前任务】查询账户余额和最近一笔交易", ["no-echo"]),
        ("推荐以下三款产品：\n1. 稳健理财A\n2. 大额存单B\n3. 货币基金C", []),
    ],
)
def test_predicates_in_a_pack(
    compile_rules: CompileText, registry: Registry, text: str, failed: list[str]
) -> None:
    pack, diags = compile_rules(RULES_YAML)
    assert pack is not None, [d.headline() for d in diags]
    result = Engine(pack, registry).check(text, context={"prompt": PROMPT})
    assert list(result.failed) == failed


def test_echoes_without_a_prompt_is_false(compile_rules: CompileText, registry: Registry) -> None:
    pack, _ = compile_rules(RULES_YAML)
    assert pack is not None
    assert Engine(pack, registry).evaluate(SYSTEM)["no-echo"] == "pass"


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            "not repetitive(output, 3)",
            "CH107 'repetitive' takes 0 argument(s) after the subject, got 1",
        ),
        (
            "not off_language(output)",
            "CH107 'off_language' takes 1 argument(s) after the subject, got 0",
        ),
        ("not off_language(output, 3)", "CH107 argument of 'off_language' must be a string"),
        (
            'not no_content(output, "x")',
            "CH107 'no_content' takes 0 argument(s) after the subject, got 1",
        ),
    ],
)
def test_wrong_arguments_are_ch107(compile_rules: CompileText, check: str, message: str) -> None:
    _, diags = compile_rules(one_rule(check))
    assert [f"{d.code} {d.message}" for d in diags] == [message]


def test_predicate_shapes() -> None:
    shapes: dict[str, Any] = {p.name: tuple(p.params) for p in PREDICATES}
    assert shapes == {
        "echoes": ("value",),
        "repetitive": (),
        "off_language": ("string",),
        "no_content": (),
    }
    assert all(isinstance(p, Predicate) for p in PREDICATES)
