"""Amounts and card tails as people say them (issue 31): lower-case and mixed numerals with a
currency (``money``), bare amounts (``spoken_amount``), approximate ones, and card tails
without 尾号 (``card_tail``)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter_zh.card_tail import CardTailExtractor
from charter_zh.money import MoneyExtractor
from charter_zh.spoken import SpokenAmountExtractor, numeral_value

MONEY = MoneyExtractor()
SPOKEN = SpokenAmountExtractor()
CARD_TAIL = CardTailExtractor()


@pytest.mark.parametrize(
    ("run", "value", "ranged"),
    [
        ("三千五", "3500", False),  # cn2an reads the spoken abbreviation
        ("一万二", "12000", False),
        ("两千", "2000", False),
        ("2千", "2000", False),
        ("1.5万", "15000", False),
        ("2万5", "25000", False),
        ("2万5千", "25000", False),
        ("八百", "800", False),
        ("一百零五", "105", False),
        ("十五", "15", False),
        ("十", "10", False),
        ("两三千", "2000", True),  # a range: the lower end
        ("七八百", "700", True),
        ("800", "800", False),
    ],
)
def test_numeral_value(run: str, value: str, ranged: bool) -> None:
    assert numeral_value(run) == (Decimal(value), ranged)


@pytest.mark.parametrize("run", ["一二三四", "万一", "千万", "百", "零五", "三五", "八四百"])
def test_no_numeral_value(run: str) -> None:
    assert numeral_value(run) is None


# text, [(item text, value, approximate)]
MARKED = [
    ("五百块", [("五百块", "500", False)]),
    ("两千元", [("两千元", "2000", False)]),
    ("三千五百元", [("三千五百元", "3500", False)]),
    ("一万二千块钱", [("一万二千块钱", "12000", False)]),
    ("2千元", [("2千元", "2000", False)]),
    ("1.5万元", [("1.5万元", "15000", False)]),
    ("2万5千元", [("2万5千元", "25000", False)]),
    ("十块钱", [("十块钱", "10", False)]),
    ("五百美元", [("五百美元", "500", False)]),
    ("八百来块", [("八百来块", "800", True)]),
    ("五百多块", [("五百多块", "500", True)]),
    ("500多元", [("500多元", "500", True)]),
    ("十几块钱", [("十几块钱", "10", True)]),
    ("两三千块", [("两三千块", "2000", True)]),
    ("给他转两千块吧", [("两千块", "2000", False)]),
    ("¥100和两百元", [("¥100", "100", False), ("两百元", "200", False)]),
    ("壹佰元（一百元）", [("一百元", "100", False)]),
]


@pytest.mark.parametrize(("text", "expected"), MARKED)
def test_money_reads_spoken_amounts(text: str, expected: list[tuple[str, str, bool]]) -> None:
    items = MONEY.extract(text)
    assert [(i.text, i.value, bool(i.attrs.get("approximate"))) for i in items] == [
        (t, Decimal(v), a) for t, v, a in expected
    ]
    assert all(text[i.start : i.end] == i.text for i in items)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [("两千元", "2000.00元"), ("三千五百块", "3500.00元"), ("五百美元", "500.00美元")],
)
def test_money_canonical_of_a_spoken_amount(written: str, canonical: str) -> None:
    (item,) = MONEY.extract(written)
    assert MONEY.canonical(item) == canonical


def test_an_approximate_amount_has_no_canonical_form() -> None:
    (item,) = MONEY.extract("八百来块")
    assert MONEY.canonical(item) is None


BARE = [
    ("帮我往李四卡上打八百", [("八百", "800", False)]),
    ("汇三千五给张三", [("三千五", "3500", False)]),
    ("转800给李四", [("800", "800", False)]),
    ("一万二", [("一万二", "12000", False)]),
    ("两千", [("两千", "2000", False)]),
    ("2千", [("2千", "2000", False)]),
    ("1.5万", [("1.5万", "15000", False)]),
    ("转十万", [("十万", "100000", False)]),
    ("大概3000", [("3000", "3000", False)]),  # the customer names the amount
    ("3000左右", [("3000", "3000", False)]),
    ("八百来", [("八百来", "800", True)]),
    ("五百多", [("五百多", "500", True)]),
    ("三千几", [("三千几", "3000", True)]),
    ("两三千", [("两三千", "2000", True)]),
    ("１５００", [("１５００", "1500", False)]),  # full-width digits
]


@pytest.mark.parametrize(("text", "expected"), BARE)
def test_spoken_amount_reads_bare_amounts(text: str, expected: list[tuple[str, str, bool]]) -> None:
    items = SPOKEN.extract(text)
    assert [(i.text, i.value, bool(i.attrs.get("approximate"))) for i in items] == [
        (t, Decimal(v), a) for t, v, a in expected
    ]
    assert {i.unit for i in items} <= {"元"}


@pytest.mark.parametrize(
    "text",
    [
        "看看6666那张卡",  # card tails
        "6666这张卡",
        "6666的卡",
        "尾号6666",
        "尾号是 6666",
        "卡号后四位6666",
        "后四位是6666",
        "2024年",  # dates and times
        "3月5号",
        "5月3",
        "8点",
        "8点30",
        "三个",  # counts and measures
        "两张",
        "五天",
        "十五天",
        "一百个",
        "3公斤",
        "13812345678",  # phone, card and order numbers
        "6222026815398387",
        "6222 0268 1539 8387",
        "订单202405070007",
        "DD202405070007",
        "A100",
        "5%",  # shares
        "百分之五十",
        "三成",
        "第三千",  # an ordinal
        "千万别转",  # words made of numerals
        "万一",
        "十",
        "五",
        "一二三四",
        "500元",  # money's: a currency said
        "¥100",
        "3块蛋糕",
        "https://x.example.com/p/800",
    ],
)
def test_spoken_amount_leaves_alone(text: str) -> None:
    assert SPOKEN.extract(text) == ()


def test_spoken_amount_canonical() -> None:
    (item,) = SPOKEN.extract("三千五")
    assert SPOKEN.canonical(item) == "3500.00元"
    (item,) = SPOKEN.extract("八百来")
    assert SPOKEN.canonical(item) is None


@pytest.mark.parametrize(
    ("text", "tails"),
    [
        ("尾号6789", ["6789"]),
        ("尾号是6789", ["6789"]),
        ("尾号是 6789", ["6789"]),
        ("尾号：6789", ["6789"]),
        ("卡号后四位6666", ["6666"]),
        ("后四位是6666", ["6666"]),
        ("后4位6666", ["6666"]),
        ("末四位1234", ["1234"]),
        ("看看6666那张卡", ["6666"]),
        ("6666这张卡", ["6666"]),
        ("6666的卡", ["6666"]),
        ("1234结尾的卡", ["1234"]),
        ("那尾号9009呢", ["9009"]),
        ("尾号１２３４", ["1234"]),  # full-width digits, read as ASCII
        ("尾号1234和6666那张", ["1234", "6666"]),
        ("6666", []),
        ("转6666给李四", []),
        ("2024年", []),
        ("尾号12345", []),
        ("尾号123", []),
        ("A1234卡", []),
        ("卡号6222026815398387", []),
    ],
)
def test_card_tail(text: str, tails: list[str]) -> None:
    items = CARD_TAIL.extract(text)
    assert [i.value for i in items] == tails
    assert all(text[i.start : i.end] == i.text for i in items)
