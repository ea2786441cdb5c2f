"""The extractors cache what an item is worth by what is written; context must still count.

Money, money_upper, date and percent keep the value of an amount, a date or a number once seen,
keyed by the text of the match. Whatever is decided by the characters around a match (glue,
``人民币``, a bare 伍角, a link) must be decided again each time: these tests see the same
written form first where it counts, then where it does not, and the other way round.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from charter_zh.dates import DateExtractor
from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor
from charter_zh.percent import PercentExtractor

MONEY = MoneyExtractor()
UPPER = MoneyUpperExtractor()
DATE = DateExtractor()
PERCENT = PercentExtractor()


def _texts(extractor: object, text: str) -> list[str]:
    return [i.text for i in extractor.extract(text)]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "texts"),
    [
        ("价格¥100，", ["¥100"]),
        ("型号¥100abc", []),  # glued after: the cached ¥100 does not make it an amount
        ("价格¥100。", ["¥100"]),
        ("约$5。", ["$5"]),
        ("HK$5。", []),  # glued before
        ("约$5。", ["$5"]),
        ("才¥100块。", ["¥100块"]),
        ("才¥100块蛋糕", ["¥100"]),  # 块 as a measure word: the suffix goes
        ("才¥100块。", ["¥100块"]),
        ("见https://x.cn/$5 和 $5。", ["$5"]),  # the first is inside the link
    ],
)
def test_money_context_is_checked_every_time(text: str, texts: list[str]) -> None:
    assert _texts(MONEY, text) == texts


def test_money_items_do_not_share_attrs() -> None:
    first, second = MONEY.extract("¥1,000.00和¥1,000.00")
    assert first.attrs == second.attrs
    assert first.attrs is not second.attrs
    assert first.value == Decimal("1000.00")


@pytest.mark.parametrize(
    ("text", "texts"),
    [
        ("大写：伍角", ["伍角"]),
        ("队伍角落", []),  # 伍角 after a CJK word is no amount
        ("大写：伍角", ["伍角"]),
        ("人民币伍角", ["人民币伍角"]),
        ("1壹佰元", []),  # glued to a digit
        ("共壹佰元", ["壹佰元"]),
        ("人民币壹佰元", ["人民币壹佰元"]),
        ("壹壹元", []),
        ("壹壹元", []),  # a malformed run stays rejected once cached
    ],
)
def test_money_upper_context_is_checked_every_time(text: str, texts: list[str]) -> None:
    assert _texts(UPPER, text) == texts


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("于2024-05-01到期", date(2024, 5, 1)),
        ("于2023-02-29到期", None),
        ("于2023-02-29到期", None),  # an impossible date stays one once cached
        ("于2024/5/1到期", date(2024, 5, 1)),
    ],
)
def test_numeric_date_values(text: str, value: date | None) -> None:
    items = DATE.extract(text)
    assert [i.value for i in items] == ([value] if value else [])


def test_numeric_date_iso_attr_follows_what_is_written() -> None:
    assert [i.attrs["iso"] for i in DATE.extract("2024-05-01，2024-5-1")] == [True, False]


@pytest.mark.parametrize(
    ("text", "texts"),
    [
        ("增长3.5%，", ["3.5%"]),
        ("x3.5%，", []),  # glued to a letter
        ("增长3.5%，", ["3.5%"]),
        ("1,2345%", []),
        ("1,2345%", []),  # no number stays no number once cached
        ("百分之5%", ["百分之5"]),  # two scans: the earlier item wins the overlap
    ],
)
def test_percent_context_is_checked_every_time(text: str, texts: list[str]) -> None:
    assert _texts(PERCENT, text) == texts
