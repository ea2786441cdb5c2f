"""The ``percent`` extractor."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter_zh.percent import PercentExtractor

PERCENT = PercentExtractor()

# text, item texts, values, decimals
POSITIVE = [
    ("年化收益为3.5%", ["3.5%"], ["3.5"], [1]),
    ("税率3.5％", ["3.5％"], ["3.5"], [1]),
    ("百分之三点五", ["百分之三点五"], ["3.5"], [1]),
    ("好评率100%", ["100%"], ["100"], [0]),
    ("百分之百满意", ["百分之百"], ["100"], [0]),
    ("增长百分之五十", ["百分之五十"], ["50"], [0]),
    ("百分之零点五", ["百分之零点五"], ["0.5"], [1]),
    ("百分之5", ["百分之5"], ["5"], [0]),
    ("3.50 %", ["3.50 %"], ["3.50"], [2]),
    ("收益3%，税率5%", ["3%", "5%"], ["3", "5"], [0, 0]),
    ("涨幅1,200%", ["1,200%"], ["1200"], [0]),
    ("下降-3.5%", ["3.5%"], ["3.5"], [1]),  # the sign is not part of the item
    ("3-5%", ["5%"], ["5"], [0]),
    ("利率见https://x.example.com/rate，为3.5%", ["3.5%"], ["3.5"], [1]),
    ("www.example.com 3.5%", ["3.5%"], ["3.5"], [1]),
]


@pytest.mark.parametrize(("text", "texts", "values", "decimals"), POSITIVE)
def test_percent_finds(text: str, texts: list[str], values: list[str], decimals: list[int]) -> None:
    items = PERCENT.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == [Decimal(v) for v in values]
    assert [i.decimals for i in items] == decimals
    assert {i.unit for i in items} == {"%"}


NEGATIVE = [
    "上涨5个百分点",
    "%",
    "百分之",
    "x12%",  # glued to an ASCII letter
    "1.2.3%",
    "1,2345%",
    "千分之三",
    "3‰",
    "共计¥100.00",
    "https://x.example.com/rate/3.5%",  # inside a link
    "https://x.example.com/search?q=5%25off",  # a percent-encoded character
    "见WWW.EXAMPLE.COM/3.5%",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_percent_leaves_alone(text: str) -> None:
    assert PERCENT.extract(text) == ()


CANONICAL = [
    ("3.5％", "3.5%"),
    ("3.5%", "3.5%"),
    ("3.50 %", "3.50%"),
    ("百分之三点五", "3.5%"),
    ("百分之百", "100%"),
    ("百分之零点五", "0.5%"),
    ("百分之5", "5%"),
    ("1,200%", "1,200%"),
]


@pytest.mark.parametrize(("written", "canonical"), CANONICAL)
def test_percent_canonical(written: str, canonical: str) -> None:
    (item,) = PERCENT.extract(written)
    assert PERCENT.canonical(item) == canonical
