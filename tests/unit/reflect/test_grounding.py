"""``ungrounded``: every amount, date, number, identifier and status of an answer has a ground."""

from __future__ import annotations

import pytest

from charter.contracts.registry import Registry
from charter.reflect.grounding import Ungrounded, ungrounded

SKILL = "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"
ORDER = "订单DD202405010001：已发货，物流单号SF1234567890，详情https://shop.example.com/o/1"
STATUSES = ("已发货", "运输中", "已签收", "待付款", "已取消")

CASES = [
    # the example: an amount and its upper-case spelling the skill never gave
    (
        "余额为¥99,999.00（玖万玖仟玖佰玖拾玖元整）",
        [SKILL],
        [("money", "¥99,999.00", (3, 13)), ("money_upper", "玖万玖仟玖佰玖拾玖元整", (14, 25))],
    ),
    # quoting the skill result exactly
    (SKILL, [SKILL], []),
    # the same values written otherwise: 12345.6元, 2024年5月1日, the upper case alone
    ("您尾号1234的账户余额为12345.6元，截至2024年5月1日。", [SKILL], []),
    ("截至5月1日，余额为壹万贰仟叁佰肆拾伍元陆角。", [SKILL], []),
    ("余额为¥12,345.60元整", [SKILL], []),
    # the user's own amount, from the input
    ("已为您向尾号1234的卡转账5,000.00元。", ["我想给尾号1234的卡转账5000元"], []),
    # full-width digits read as ASCII, spans of the text as written
    ("您要转账的１２３４５元已受理", ["我想转账12345元"], []),
    ("尾号１２３４的卡", ["尾号1234"], []),
    ("尾号１２３５的卡", ["尾号1234"], [("identifier", "１２３５", (2, 6))]),
    # an order number and a URL, both from the skill
    (
        "您的订单DD202405010001已发货，物流单号SF1234567890，详情https://shop.example.com/o/1",
        [ORDER],
        [],
    ),
    (
        "订单DD202405010002已签收，详情https://shop.example.com/o/2",
        [ORDER],
        [
            ("identifier", "DD202405010002", (2, 16)),
            ("status", "已签收", (16, 19)),
            ("url", "https://shop.example.com/o/2", (22, 50)),
        ],
    ),
    # dates: every part written must agree; 5月1日 is 2024-05-01's, not the other way round
    ("2024年5月2日到账", ["2024-05-01"], [("date", "2024年5月2日", (0, 9))]),
    ("5月1日", ["2024-05-01"], []),
    ("2024年5月1日", ["5月1日"], [("date", "2024年5月1日", (0, 9))]),
    # numbers by value and unit
    ("年化收益率3.50%", ["年化3.5%"], []),
    ("年化收益率3.6%", ["年化3.5%"], [("percent", "3.6%", (5, 9))]),
    ("5美元", ["¥5"], [("money", "5美元", (0, 3))]),
    ("余额12345.60元", [], [("money", "12345.60元", (2, 11))]),
    # text kinds by value: the phone written with or without hyphens
    ("请拨打13812345678联系快递员", ["快递员电话138-1234-5678"], []),
    (
        "请拨打13912345678联系快递员",
        ["快递员电话138-1234-5678"],
        [("phone", "13912345678", (3, 14))],
    ),
    ("身份证号110101199003074514", ["证件：110101199003074514"], []),
    # codes inside a typed item are that item's business
    (
        "详情见https://shop.example.com/o/DD202405010009",
        [],
        [
            ("url", "https://shop.example.com/o/DD202405010009", (3, 44)),
        ],
    ),
    ("优惠码SAVE20可减20元", ["优惠码：SAVE20，满100减20元"], []),
    ("优惠码SAVE30", ["优惠码：SAVE20"], [("identifier", "SAVE30", (3, 9))]),
    # statuses of the vocabulary must be in a ground; other words are not statuses
    ("订单已发货，正在运输中", ["订单状态：已发货"], [("status", "运输中", (8, 11))]),
    ("感谢您的耐心等待", [], []),
]


@pytest.mark.parametrize(("text", "grounds", "expected"), CASES)
def test_ungrounded(
    registry: Registry,
    text: str,
    grounds: list[str],
    expected: list[tuple[str, str, tuple[int, int]]],
) -> None:
    found = ungrounded(text, grounds, registry.extractors, statuses=STATUSES)
    assert [(u.kind, u.text, u.span) for u in found] == expected
    assert all(text[u.span[0] : u.span[1]] == u.text for u in found)


def test_without_the_zh_extractors_identifiers_are_still_checked() -> None:
    # and numbers: without the money extractor, the amount is a number no ground backs
    assert ungrounded("订单DD202405010002，¥99,999.00", ["DD202405010001"], {}) == (
        Ungrounded("identifier", "DD202405010002", (2, 16)),
        Ungrounded("number", "99,999.00", (18, 27)),
    )


@pytest.mark.parametrize(
    ("text", "grounds", "found"),
    [
        ("我们周六9:00-17:00营业。", ["你们周末营业吗"], ["9:00", "17:00"]),
        ("营业时间9:00-17:00。", ["营业时间：9:00-17:00"], []),
        ("至少150万的收入。", [], ["150万"]),
        ("一般3到5个工作日到账。", [], []),  # single digits: list numbers, small counts
        ("一般15个工作日到账。", ["预计15个工作日"], []),
        ("一般15个工作日到账。", [], ["15"]),
        ("手续费为1,000元。", [], ["1,000"]),  # no money extractor here: a number
    ],
)
def test_numbers_the_typed_kinds_leave(text: str, grounds: list[str], found: list[str]) -> None:
    got = [u.text for u in ungrounded(text, grounds, {}) if u.kind == "number"]
    assert got == found


def test_an_amount_is_the_money_kinds_not_a_number(registry: Registry) -> None:
    found = ungrounded("手续费为1,000元，约150万。", [], registry.extractors)
    assert [(u.kind, u.text) for u in found] == [("money", "1,000元"), ("number", "150万")]


def test_no_vocabulary_no_statuses(registry: Registry) -> None:
    assert ungrounded("订单运输中", [], registry.extractors) == ()


def test_a_single_string_is_one_ground_not_its_characters(registry: Registry) -> None:
    # as a sequence of characters, "0", "2", "D"... would each occur and back DD202405010002
    found = ungrounded(
        "订单DD202405010002", "订单DD202405010001", registry.extractors, statuses="已签收"
    )
    assert found == (Ungrounded("identifier", "DD202405010002", (2, 16)),)
    assert ungrounded("订单已签收", "", registry.extractors, statuses="已签收") == (
        Ungrounded("status", "已签收", (2, 5)),
    )
