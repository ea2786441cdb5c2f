"""The ``date`` extractor."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from charter_zh.dates import DateExtractor

DATE = DateExtractor()

# text, item texts, values, iso flags
POSITIVE: list[tuple[str, list[str], list[Any], list[bool]]] = [
    ("发货日期2024-05-01", ["2024-05-01"], [date(2024, 5, 1)], [True]),
    ("2024/5/1发货", ["2024/5/1"], [date(2024, 5, 1)], [False]),
    ("2024.5.1", ["2024.5.1"], [date(2024, 5, 1)], [False]),
    ("已于2024年5月1日发出", ["2024年5月1日"], [date(2024, 5, 1)], [False]),
    ("2024年5月1号", ["2024年5月1号"], [date(2024, 5, 1)], [False]),
    ("5月1日放假", ["5月1日"], [(None, 5, 1)], [False]),
    ("2024年5月的账单", ["2024年5月"], [(2024, 5, None)], [False]),
    ("2024 年 5 月 1 日", ["2024 年 5 月 1 日"], [date(2024, 5, 1)], [False]),
    ("2024年2月29日", ["2024年2月29日"], [date(2024, 2, 29)], [False]),
    ("2月29日", ["2月29日"], [(None, 2, 29)], [False]),
    ("2024-05-01 10:00", ["2024-05-01"], [date(2024, 5, 1)], [True]),
    (
        "2024年12月31日到2025年1月1日",
        ["2024年12月31日", "2025年1月1日"],
        [date(2024, 12, 31), date(2025, 1, 1)],
        [False, False],
    ),
    ("24年5月1日", ["5月1日"], [(None, 5, 1)], [False]),  # two-digit years are dropped
    # next to a link, not inside it
    (
        "见https://a.example.com/x，2024-05-01生效",
        ["2024-05-01"],
        [date(2024, 5, 1)],
        [True],
    ),
    (
        "https://www.bank.example.com/notice 2024年5月1日起",
        ["2024年5月1日"],
        [date(2024, 5, 1)],
        [False],
    ),
]


@pytest.mark.parametrize(("text", "texts", "values", "iso"), POSITIVE)
def test_date_finds(text: str, texts: list[str], values: list[Any], iso: list[bool]) -> None:
    items = DATE.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert [i.attrs["iso"] for i in items] == iso
    assert all(i.unit is None and i.decimals is None for i in items)


NEGATIVE = [
    "2024-13-45",
    "2023-02-29",
    "2月30日",
    "2024年",
    "5月",
    "2024-5/1",  # mixed separators
    "2024-05-01-7",  # part of a longer code
    "v2024.5.1",
    "订单号2023051812345678",
    "客服热线400-123-4567",
    "A5月1日",
    "营业时间9:00-21:00",
    # inside a link or an e-mail address: reformatting it would break the address
    "关于调整存款利率的公告原文见https://www.bank.example.com/notice/2024/05/01",
    "见www.example.com/notice/2024-05-01。",
    "HTTP://EXAMPLE.COM/2024.5.1",
    "2024.05.01@example.com",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_date_leaves_alone(text: str) -> None:
    assert DATE.extract(text) == ()


CANONICAL = [
    ("2024-05-01", "2024-05-01"),
    ("2024/5/1", "2024-05-01"),
    ("2024.5.1", "2024-05-01"),
    ("2024年5月1日", "2024-05-01"),
    ("2024年12月31号", "2024-12-31"),
    ("5月1日", None),
    ("2024年5月", None),
]


@pytest.mark.parametrize(("written", "canonical"), CANONICAL)
def test_date_canonical(written: str, canonical: str | None) -> None:
    (item,) = DATE.extract(written)
    assert DATE.canonical(item) == canonical
