"""The ``money_upper`` extractor: upper-case financial amounts (大写金额)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter_zh.money_upper import MoneyUpperExtractor

UPPER = MoneyUpperExtractor()

# text, item text, value, decimals
POSITIVE = [
    ("壹万贰仟叁佰肆拾伍元陆角", "壹万贰仟叁佰肆拾伍元陆角", "12345.6", 1),
    ("（壹万贰仟元整）", "壹万贰仟元整", "12000", 0),
    ("人民币叁佰元整", "人民币叁佰元整", "300", 0),
    ("大写：伍角", "伍角", "0.5", 1),
    ("贰拾元零伍分", "贰拾元零伍分", "20.05", 2),
    ("壹佰万元整", "壹佰万元整", "1000000", 0),
    ("壹亿贰仟万元", "壹亿贰仟万元", "120000000", 0),
    ("壹佰零伍元", "壹佰零伍元", "105", 0),
    ("壹元伍角陆分", "壹元伍角陆分", "1.56", 2),
    ("拾元整", "拾元整", "10", 0),
    ("壹仟零贰拾圆正", "壹仟零贰拾圆正", "1020", 0),
    ("伍仟萬元", "伍仟萬元", "50000000", 0),
    ("人民币伍角", "人民币伍角", "0.5", 1),
]


@pytest.mark.parametrize(("text", "written", "value", "decimals"), POSITIVE)
def test_upper_finds(text: str, written: str, value: str, decimals: int) -> None:
    (item,) = UPPER.extract(text)
    assert item.text == written
    assert item.value == Decimal(value)
    assert item.unit == "元"
    assert item.decimals == decimals
    assert text[item.start : item.end] == written


NEGATIVE = [
    "一百元",  # lower-case numerals
    "1.2万元",  # 万元 after digits is not an upper-case amount
    "3亿元",
    "1万贰仟元",  # mixed Arabic and upper-case
    "壹万贰仟",  # no 元/角/分: a number, not an amount
    "壹壹元",  # digit by digit: cn2an strict rejects it
    "壹佰拾元",  # malformed
    "队伍分成两组",  # 伍分 inside an ordinary word
    "伍分钟",
    "¥12,345.60",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_upper_leaves_alone(text: str) -> None:
    assert UPPER.extract(text) == ()


def test_upper_canonical_is_none() -> None:
    (item,) = UPPER.extract("壹万贰仟元整")
    assert UPPER.canonical(item) is None


def test_upper_several_amounts() -> None:
    items = UPPER.extract("¥1.00（壹元整），¥2.00（贰元整）")
    assert [i.text for i in items] == ["壹元整", "贰元整"]
    assert [i.value for i in items] == [Decimal(1), Decimal(2)]
