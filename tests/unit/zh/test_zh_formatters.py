"""The ``zh`` formatters: exact outputs, what they refuse, and that each output reads back as the
same value through the extractor of its kind (and passes the rules those extractors serve)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import charter_zh.plugin
from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.contracts.rules import Formatter, Item
from charter.plugins.host import build_registry, make_plugin_manager
from charter.reflect.engine import Engine
from charter_zh.dates import DateExtractor
from charter_zh.formatters import FORMATTERS
from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor
from charter_zh.percent import PercentExtractor
from tests.support.hypo import examples

F = {f.name: f for f in FORMATTERS}
MONEY, UPPER, PERCENT, DATE = (
    MoneyExtractor(),
    MoneyUpperExtractor(),
    PercentExtractor(),
    DateExtractor(),
)
NAMES = ["money", "money_upper", "amount", "yuan", "percent", "date", "when"]


def registry() -> Registry:
    pm, diags = make_plugin_manager(load_entry_points=False)
    assert diags == []
    pm.register(charter_zh.plugin, name="zh")
    reg, more = build_registry(pm)
    assert more == []
    return reg


def test_the_plugin_registers_the_seven_formatters() -> None:
    reg = registry()
    assert list(reg.formatters) == ["join", "count", *NAMES]  # the built-ins first
    assert [f.name for f in charter_zh.plugin.charter_register_formatters()] == NAMES
    assert all(isinstance(f, Formatter) for f in FORMATTERS)


def whole(items: tuple[Item, ...], text: str) -> Any:
    """The value of the single item covering ``text``."""
    assert [(i.start, i.end) for i in items] == [(0, len(text))], (text, items)
    return items[0].value


# ---- amounts -------------------------------------------------------------------------------

AMOUNTS: list[tuple[Any, str, str]] = [  # value, money, money_upper
    (12345.6, "¥12,345.60", "壹万贰仟叁佰肆拾伍元陆角"),
    ("12345.6", "¥12,345.60", "壹万贰仟叁佰肆拾伍元陆角"),
    (Decimal("12345.60"), "¥12,345.60", "壹万贰仟叁佰肆拾伍元陆角"),
    (5000, "¥5,000.00", "伍仟元整"),
    ("5000", "¥5,000.00", "伍仟元整"),
    (200000, "¥200,000.00", "贰拾万元整"),
    (100000, "¥100,000.00", "壹拾万元整"),
    (10, "¥10.00", "壹拾元整"),
    (10.05, "¥10.05", "壹拾元零伍分"),
    (0.05, "¥0.05", "伍分"),
    (0.5, "¥0.50", "伍角"),
    (0, "¥0.00", "零元整"),
    (1000000.01, "¥1,000,000.01", "壹佰万元零壹分"),
    (100000000, "¥100,000,000.00", "壹亿元整"),
    ("1,234.5", "¥1,234.50", "壹仟贰佰叁拾肆元伍角"),
    ("１２３４５.６", "¥12,345.60", "壹万贰仟叁佰肆拾伍元陆角"),  # full-width digits
    ("１，２３４．５", "¥1,234.50", "壹仟贰佰叁拾肆元伍角"),
    (" 88 ", "¥88.00", "捌拾捌元整"),
    ("+88", "¥88.00", "捌拾捌元整"),
    (0.005, "¥0.01", "壹分"),  # half-up to the fen
    (2.675, "¥2.68", "贰元陆角捌分"),  # a float as it prints, not its binary value
    ("0.004", "¥0.00", "零元整"),
    (-12.3, "-¥12.30", "负壹拾贰元叁角"),
    ("-0.001", "¥0.00", "零元整"),  # never -0.00
    ("¥12.30", "¥12.30", "壹拾贰元叁角"),  # amounts the extractors read whole
    ("-¥12.30", "-¥12.30", "负壹拾贰元叁角"),
    ("1.2万元", "¥12,000.00", "壹万贰仟元整"),
    ("88块", "¥88.00", "捌拾捌元整"),
    ("伍仟元整", "¥5,000.00", "伍仟元整"),
    ("人民币壹拾元零伍分", "¥10.05", "壹拾元零伍分"),
    ("9999999999999999.99", "¥9,999,999,999,999,999.99", "玖仟玖佰玖拾玖万玖仟玖佰玖拾玖亿"
     "玖仟玖佰玖拾玖万玖仟玖佰玖拾玖元玖角玖分"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "money", "upper"), AMOUNTS)
def test_amounts(value: Any, money: str, upper: str) -> None:
    assert F["money"].format(value) == money
    assert F["money_upper"].format(value) == upper
    assert F["amount"].format(value) == f"{money}（{upper}）"
    assert F["yuan"].format(value) == money.replace("¥", "").replace(",", "") + "元"


NOT_AMOUNTS = [
    None, True, False, "", "abc", "12a", "1,2345", "1.2.3", "1e5", "$5", "5美元", "USD 5",
    "¥12.30元整多", "百分之五", float("nan"), float("inf"), Decimal("NaN"), [5], {"v": 5},
    "1" * 31, 10**30, Decimal("1E+200"),
]  # fmt: skip


@pytest.mark.parametrize("value", NOT_AMOUNTS)
def test_what_is_no_amount_is_none(value: Any) -> None:
    assert [F[n].format(value) for n in ("money", "money_upper", "amount", "yuan")] == [None] * 4


def test_upper_case_amounts_stop_at_sixteen_digits() -> None:
    assert F["money_upper"].format(10**15) == "壹仟万亿元整"
    assert F["money_upper"].format(10**16) is None
    assert F["money"].format(10**16) == "¥10,000,000,000,000,000.00"
    assert F["money"].format(10**29) == "¥" + f"{10**29:,}" + ".00"  # 30 digits: money reads it
    # a float of 16 nines and two decimals prints as 1e+16: 17 digits
    assert F["money"].format(9999999999999999.99) == "¥10,000,000,000,000,000.00"
    assert F["amount"].format(9999999999999999.99) is None


ROUND_TRIP = [
    "0", "0.01", "0.05", "0.1", "0.5", "0.55", "1", "1.01", "1.1", "9.99", "10", "10.05", "10.5",
    "11", "15", "19.9", "20", "100", "101", "110", "1000", "1001", "1010", "1100", "10010",
    "10100", "12345.6", "20000.1", "100000", "105000", "200000", "1000000.01", "1001000",
    "10000000", "100000000", "100000001", "100010000", "1000000000.5", "1234567890.12",
    "3000000000.5", "1000000000000", "9999999999999999.99",
]  # fmt: skip


@pytest.mark.parametrize("written", ROUND_TRIP)
def test_each_amount_reads_back_the_same(written: str) -> None:
    value = Decimal(written)
    upper = F["money_upper"].format(written)
    money = F["money"].format(written)
    yuan = F["yuan"].format(written)
    assert upper is not None and money is not None and yuan is not None
    assert whole(UPPER.extract(upper), upper) == value
    assert whole(MONEY.extract(money), money) == value
    assert whole(MONEY.extract(yuan), yuan) == value
    amount = F["amount"].format(written)
    assert amount is not None
    (m,), (u,) = MONEY.extract(amount), UPPER.extract(amount)
    assert m.value == u.value == value  # twins
    assert (m.end, u.start, u.end, amount[m.end], amount[-1]) == (
        len(money),
        len(money) + 1,
        len(amount) - 1,
        "（",
        "）",
    )


def test_a_negative_amount_reads_back_as_its_size() -> None:
    amount = F["amount"].format(-12.3)
    assert amount == "-¥12.30（负壹拾贰元叁角）"
    assert [i.value for i in MONEY.extract(amount)] == [Decimal("12.30")]
    assert [i.value for i in UPPER.extract(amount)] == [Decimal("12.3")]


@settings(max_examples=examples(300), deadline=None)
@given(st.decimals(min_value=0, max_value=Decimal("9999999999999999.99"), places=2))
def test_any_amount_is_its_own_twin(value: Decimal) -> None:
    amount = F["amount"].format(value)
    assert amount is not None
    (m,), (u,) = MONEY.extract(amount), UPPER.extract(amount)
    assert m.value == u.value == value
    assert (m.unit, m.decimals, u.unit) == ("元", 2, "元")


PACK_RULES = """rules:
  - id: amount-upper-and-lower
    describe: d
    message: 金额须大小写双显
    check: every money in output has twin money_upper and every money_upper in output has twin money
    on_fail: retry
  - id: price-format
    describe: d
    message: 价格须含单位元且保留两位小数
    check: every money in output (has unit "元" and decimals == 2)
    on_fail: fix reformat money
  - id: date-format
    describe: d
    message: 日期写成 YYYY-MM-DD
    check: every date in output matches /^\\d{4}-\\d{2}-\\d{2}$/
    on_fail: fix reformat date
"""  # the finance and zh-customer-service rules, as written there


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    pack = tmp_path_factory.mktemp("pack")
    (pack / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (pack / "rules.yaml").write_text(PACK_RULES, encoding="utf-8")
    reg = registry()
    compiled, diags = compile_path(Path(pack), reg, cache_dir=None)
    assert compiled is not None, diags
    return Engine(compiled, reg)


ALL_PASS = {"amount-upper-and-lower": "pass", "price-format": "pass", "date-format": "pass"}


@pytest.mark.parametrize("value", [12345.6, "5000", 0.05, 100000000, "1,234.5", -12.3])
def test_the_finance_rules_accept_what_amount_writes(engine: Engine, value: Any) -> None:
    text = f"尾号1234的储蓄账户余额为{F['amount'].format(value)}，数据截至{F['date'].format('2024-05-02')}。"
    assert engine.evaluate(text) == ALL_PASS


@pytest.mark.parametrize("name", ["money", "yuan"])
def test_the_price_format_rule_accepts_money_and_yuan(engine: Engine, name: str) -> None:
    text = f"这款耳机现价{F[name].format(199)}。"
    assert engine.evaluate(text)["price-format"] == "pass"
    assert engine.evaluate(text)["amount-upper-and-lower"] == "fail"  # no upper-case twin


# ---- percent -------------------------------------------------------------------------------

PERCENTS = [
    (5.2, "5.2%"),
    ("5.2", "5.2%"),
    ("5.20", "5.20%"),
    (Decimal("5.20"), "5.20%"),
    (0.052, "0.052%"),  # as given: never multiplied by 100
    (5, "5%"),
    (12345.6, "12345.6%"),
    ("1,200", "1,200%"),
    ("５．２", "5.2%"),
    ("5.2%", "5.2%"),
    ("5.2 ％", "5.2%"),
    (-3.5, "-3.5%"),
    (1e-07, "0.0000001%"),
]


@pytest.mark.parametrize(("value", "written"), PERCENTS)
def test_percent(value: Any, written: str) -> None:
    assert F["percent"].format(value) == written
    read = whole(PERCENT.extract(written.lstrip("-")), written.lstrip("-"))
    assert read == abs(Decimal(written[:-1].replace(",", "")))


@pytest.mark.parametrize(
    "value", [None, True, "abc", "5.2%%", "百分之五", "5‰", [5], float("nan"), ""]
)
def test_what_is_no_percentage_is_none(value: Any) -> None:
    assert F["percent"].format(value) is None


# ---- dates and times -----------------------------------------------------------------------

DATES: list[tuple[Any, str, str]] = [  # value, date, when
    ("2024-05-02", "2024-05-02", "2024-05-02"),
    ("2024-05-02T08:00/2024-05-02T12:00", "2024-05-02", "2024-05-02 08:00-12:00"),
    # a part of the day the time extractor read (明天上午, 后天下午) is written as said
    ("2024-05-02T06:00/2024-05-02T12:00", "2024-05-02", "2024-05-02上午"),
    ("2024-05-02T12:00/2024-05-02T18:00", "2024-05-02", "2024-05-02下午"),
    ("2024-05-02T18:00/2024-05-03T00:00", "2024-05-02", "2024-05-02晚上"),
    ("2024-05-02T00:00/2024-05-02T06:00", "2024-05-02", "2024-05-02凌晨"),
    ("2024-05-01/2024-05-03", "2024-05-01至2024-05-03", "2024-05-01至2024-05-03"),
    ("2025-12-01/2025-12-31", "2025-12-01至2025-12-31", "2025-12-01至2025-12-31"),
    ("2024-05-02/2024-05-02", "2024-05-02", "2024-05-02"),
    ("2024-05-01至2024-05-03", "2024-05-01至2024-05-03", "2024-05-01至2024-05-03"),
    ("2024-05-02T10:30/2024-05-02T10:31", "2024-05-02", "2024-05-02 10:30"),  # 10点半
    ("2024-05-02T10:00/2024-05-02T11:00", "2024-05-02", "2024-05-02 10:00-11:00"),  # 10点
    ("2024-05-01T15:00/2024-05-02T00:00", "2024-05-01", "2024-05-01 15:00-24:00"),
    ("2024-05-01T09:00/2024-05-02T10:00", "2024-05-01至2024-05-02",
     "2024-05-01 09:00至2024-05-02 10:00"),
    ("2024-05-01T00:00/2024-05-03T00:00", "2024-05-01至2024-05-02", "2024-05-01至2024-05-02"),
    ("2024-05-02T08:00", "2024-05-02", "2024-05-02 08:00"),
    ("2024-05-02 08:00:59", "2024-05-02", "2024-05-02 08:00"),
    ("2024-05-02T08:00:00+08:00", "2024-05-02", "2024-05-02 08:00"),  # the time as written
    ("2024-05-02T08:00Z", "2024-05-02", "2024-05-02 08:00"),
    ("2024-05", "2024年5月", "2024年5月"),
    ("--01-10", "1月10日", "1月10日"),
    ("--02-29", "2月29日", "2月29日"),
    ("2024年5月1日", "2024-05-01", "2024-05-01"),
    ("２０２４年５月１日", "2024-05-01", "2024-05-01"),
    ("２０２４－０５－０１", "2024-05-01", "2024-05-01"),
    ("2024/5/1", "2024-05-01", "2024-05-01"),
    ("2024.5.1", "2024-05-01", "2024-05-01"),
    ("5月1日", "5月1日", "5月1日"),
    ("2024年5月", "2024年5月", "2024年5月"),
    (date(2024, 5, 2), "2024-05-02", "2024-05-02"),
    (datetime(2024, 5, 2, 8, 30), "2024-05-02", "2024-05-02 08:30"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "day", "when"), DATES)
def test_dates(value: Any, day: str, when: str) -> None:
    assert (F["date"].format(value), F["when"].format(value)) == (day, when)


@pytest.mark.parametrize(
    ("written", "values"),
    [
        ("2024-05-02", [date(2024, 5, 2)]),
        ("2024-05-01至2024-05-03", [date(2024, 5, 1), date(2024, 5, 3)]),
        ("2024-05-02 08:00-12:00", [date(2024, 5, 2)]),
        ("2024-05-02下午", [date(2024, 5, 2)]),
        ("2024-05-01 15:00-24:00", [date(2024, 5, 1)]),
        ("2024-05-01 09:00至2024-05-02 10:00", [date(2024, 5, 1), date(2024, 5, 2)]),
        ("2024年5月", [(2024, 5, None)]),
        ("1月10日", [(None, 1, 10)]),
    ],
)
def test_what_date_and_when_write_reads_back(written: str, values: list[Any]) -> None:
    assert written in {d for _, day, when in DATES for d in (day, when)}
    assert [i.value for i in DATE.extract(written)] == values


def test_a_slot_value_round_trips_through_the_planner() -> None:
    """What the planner puts in a slot from a date item, ``date`` writes back as that item."""
    from charter.goals.planner import slot_value

    now = datetime(2024, 5, 1, 9, 0)
    for text in ("2024年5月2日", "2024年5月", "1月10日", "2024-05-02"):
        (item,) = DATE.extract(text)
        written = F["date"].format(slot_value(item.value, now))
        assert written is not None
        assert whole(DATE.extract(written), written) == item.value


NOT_DATES = [
    None, True, 20240502, "abc", "2024-13-01", "2023-02-29", "--02-30", "2024-00", "0999-01-01",
    "3000-01-01", "2024-05-03/2024-05-01", "2024-05-02T12:00/2024-05-02T08:00",
    "2024-05-02T08:00/2024-05-02T08:00", "2024-05-01/2024-05-03T00:00", "2024-05/2024-06",
    "2024-05-01/abc", "2024-05-01至", "2024年", "5月", "明天", "2024-05-02T25:00", [2024, 5, 2],
    "2024-05-01/2024-05-02/2024-05-03", "20240502",
]  # fmt: skip


@pytest.mark.parametrize("value", NOT_DATES)
def test_what_is_no_date_is_none(value: Any) -> None:
    assert (F["date"].format(value), F["when"].format(value)) == (None, None)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@settings(max_examples=examples(300), deadline=None)
@given(JSON)
def test_no_formatter_raises(value: Any) -> None:
    for formatter in FORMATTERS:
        out = formatter.format(value)
        assert out is None or isinstance(out, str)
