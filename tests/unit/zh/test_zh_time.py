"""The ``time`` extractor and the resolution of its expressions against reference dates.

References, chosen at the boundaries resolution gets wrong first:

* ``WED``: Wednesday 2024-05-22 15:00, an ordinary day in the middle of a week and a month;
* ``NEW_YEAR``: Monday 2024-01-01 09:30, the first day of a year, a quarter and a week;
* ``EVE``: Sunday 2023-12-31 23:00, the last day of a year and of a week (weeks start Monday);
* ``LEAP``: Thursday 2024-02-29 10:00, a leap day at the end of a short month;
* ``QUARTER_END``: Sunday 2024-03-31 08:00, the last day of a quarter and of a 31-day month.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from charter_zh.time_expr import Step, TimeExpr, TimeSpan
from charter_zh.times import TimeExtractor, resolve

TIME = TimeExtractor()

WED = datetime(2024, 5, 22, 15, 0)
NEW_YEAR = datetime(2024, 1, 1, 9, 30)
EVE = datetime(2023, 12, 31, 23, 0)
LEAP = datetime(2024, 2, 29, 10, 0)
QUARTER_END = datetime(2024, 3, 31, 8, 0)


def d(*parts: int) -> datetime:
    return datetime(*parts)  # type: ignore[arg-type]


# text, reference, item text, start, end (exclusive), granularity
RESOLVED: list[tuple[str, datetime, str, datetime, datetime, str]] = [
    ("去年一季度的销量", WED, "去年一季度", d(2023, 1, 1), d(2023, 4, 1), "quarter"),
    ("今年上半年", WED, "今年上半年", d(2024, 1, 1), d(2024, 7, 1), "half"),
    ("上个月的账单", WED, "上个月", d(2024, 4, 1), d(2024, 5, 1), "month"),
    ("下周二出发", WED, "下周二", d(2024, 5, 28), d(2024, 5, 29), "day"),
    ("本周五", WED, "本周五", d(2024, 5, 24), d(2024, 5, 25), "day"),
    ("明天10点前发送报告", WED, "明天10点前", WED, d(2024, 5, 23, 10), "hour"),
    ("后天下午3点开会", WED, "后天下午3点", d(2024, 5, 24, 15), d(2024, 5, 24, 16), "hour"),
    ("3天后到货", WED, "3天后", d(2024, 5, 25), d(2024, 5, 26), "day"),
    ("三天后", WED, "三天后", d(2024, 5, 25), d(2024, 5, 26), "day"),
    ("2024年第二季度", WED, "2024年第二季度", d(2024, 4, 1), d(2024, 7, 1), "quarter"),
    ("前年", WED, "前年", d(2022, 1, 1), d(2023, 1, 1), "year"),
    ("月底", WED, "月底", d(2024, 5, 21), d(2024, 6, 1), "xun"),
    ("月底前提交", WED, "月底前", WED, d(2024, 6, 1), "xun"),
    ("明天十点", WED, "明天十点", d(2024, 5, 23, 10), d(2024, 5, 23, 11), "hour"),
    ("下个月5号", WED, "下个月5号", d(2024, 6, 5), d(2024, 6, 6), "day"),
    ("近一年收益率", WED, "近一年", d(2023, 5, 23), d(2024, 5, 23), "day"),
    ("最近7天", WED, "最近7天", d(2024, 5, 16), d(2024, 5, 23), "day"),
    ("半小时后", WED, "半小时后", d(2024, 5, 22, 15, 30), d(2024, 5, 22, 15, 31), "minute"),
    ("3天内发货", WED, "3天内", WED, d(2024, 5, 25, 15), "day"),
    ("今晚8点半", WED, "今晚8点半", d(2024, 5, 22, 20, 30), d(2024, 5, 22, 20, 31), "minute"),
    ("周末", WED, "周末", d(2024, 5, 25), d(2024, 5, 27), "weekend"),
    # a deadline already past at the reference covers its own day up to the deadline
    ("今天10点前", WED, "今天10点前", d(2024, 5, 22), d(2024, 5, 22, 10), "hour"),
    ("晚上12点", WED, "晚上12点", d(2024, 5, 23), d(2024, 5, 23, 1), "hour"),
    ("中午1点", WED, "中午1点", d(2024, 5, 22, 13), d(2024, 5, 22, 14), "hour"),
    ("上季度", WED, "上季度", d(2024, 1, 1), d(2024, 4, 1), "quarter"),
    ("两周后", WED, "两周后", d(2024, 6, 5), d(2024, 6, 6), "day"),
    ("三个月后", WED, "三个月后", d(2024, 8, 22), d(2024, 8, 23), "day"),
    ("1年前", WED, "1年前", d(2023, 5, 22), d(2023, 5, 23), "day"),
    ("去年底", WED, "去年底", d(2023, 12, 1), d(2024, 1, 1), "month"),
    ("下午3点以后", WED, "下午3点以后", d(2024, 5, 22, 15), d(2024, 5, 23), "hour"),
    ("2024Q2", WED, "2024Q2", d(2024, 4, 1), d(2024, 7, 1), "quarter"),
    ("二〇二四年五月", WED, "二〇二四年五月", d(2024, 5, 1), d(2024, 6, 1), "month"),
    ("5月1日前往上海", WED, "5月1日", d(2024, 5, 1), d(2024, 5, 2), "day"),  # 前往: go
    ("周五前", WED, "周五前", WED, d(2024, 5, 25), "day"),  # by the end of Friday
    ("上上周三", WED, "上上周三", d(2024, 5, 8), d(2024, 5, 9), "day"),
    ("2024年5月中旬", WED, "2024年5月中旬", d(2024, 5, 11), d(2024, 5, 21), "xun"),
    # the first day of a year, a quarter and a week
    ("下周二", NEW_YEAR, "下周二", d(2024, 1, 9), d(2024, 1, 10), "day"),
    ("上周五", NEW_YEAR, "上周五", d(2023, 12, 29), d(2023, 12, 30), "day"),
    ("本周日", NEW_YEAR, "本周日", d(2024, 1, 7), d(2024, 1, 8), "day"),
    ("上个月", NEW_YEAR, "上个月", d(2023, 12, 1), d(2024, 1, 1), "month"),
    ("昨天", NEW_YEAR, "昨天", d(2023, 12, 31), d(2024, 1, 1), "day"),
    ("上季度", NEW_YEAR, "上季度", d(2023, 10, 1), d(2024, 1, 1), "quarter"),
    ("去年一季度", NEW_YEAR, "去年一季度", d(2023, 1, 1), d(2023, 4, 1), "quarter"),
    # the last day of a year, and a Sunday: the last day of its week
    ("明天", EVE, "明天", d(2024, 1, 1), d(2024, 1, 2), "day"),
    ("下周一", EVE, "下周一", d(2024, 1, 1), d(2024, 1, 2), "day"),
    ("本周一", EVE, "本周一", d(2023, 12, 25), d(2023, 12, 26), "day"),
    ("周末", EVE, "周末", d(2023, 12, 30), d(2024, 1, 1), "weekend"),
    ("下个月", EVE, "下个月", d(2024, 1, 1), d(2024, 2, 1), "month"),
    ("下季度", EVE, "下季度", d(2024, 1, 1), d(2024, 4, 1), "quarter"),
    ("明年上半年", EVE, "明年上半年", d(2024, 1, 1), d(2024, 7, 1), "half"),
    ("2小时后", EVE, "2小时后", d(2024, 1, 1, 1), d(2024, 1, 1, 2), "hour"),
    # a leap day: month ends are kept in range
    ("一年后", LEAP, "一年后", d(2025, 2, 28), d(2025, 3, 1), "day"),
    ("一个月后", LEAP, "一个月后", d(2024, 3, 29), d(2024, 3, 30), "day"),
    ("本月底", LEAP, "本月底", d(2024, 2, 21), d(2024, 3, 1), "xun"),
    ("上个月底", LEAP, "上个月底", d(2024, 1, 21), d(2024, 2, 1), "xun"),
    ("下个月31号", LEAP, "下个月31号", d(2024, 3, 31), d(2024, 4, 1), "day"),
    ("下下个月31号", LEAP, "下下个月31号", d(2024, 4, 30), d(2024, 5, 1), "day"),
    # the last day of a quarter and of a 31-day month
    ("一个月后", QUARTER_END, "一个月后", d(2024, 4, 30), d(2024, 5, 1), "day"),
    ("下周", QUARTER_END, "下周", d(2024, 4, 1), d(2024, 4, 8), "week"),
    ("本季度", QUARTER_END, "本季度", d(2024, 1, 1), d(2024, 4, 1), "quarter"),
    ("下季度", QUARTER_END, "下季度", d(2024, 4, 1), d(2024, 7, 1), "quarter"),
    ("凌晨2点", QUARTER_END, "凌晨2点", d(2024, 3, 31, 2), d(2024, 3, 31, 3), "hour"),
]


@pytest.mark.parametrize(("text", "ref", "written", "start", "end", "granularity"), RESOLVED)
def test_time_resolves(
    text: str, ref: datetime, written: str, start: datetime, end: datetime, granularity: str
) -> None:
    (item,) = TIME.extract(text)
    assert item.text == written
    assert text[item.start : item.end] == written
    assert isinstance(item.value, TimeExpr)
    assert item.value.resolve(ref) == TimeSpan(start, end, granularity)
    assert TIME.canonical(item) is None


def test_resolve_helper_resolves_every_expression_in_order() -> None:
    text = "去年一季度和今年上半年的数据，请在明天10点前、最晚下周二前发给我。"
    assert resolve(text, WED) == [
        TimeSpan(d(2023, 1, 1), d(2023, 4, 1), "quarter"),
        TimeSpan(d(2024, 1, 1), d(2024, 7, 1), "half"),
        TimeSpan(WED, d(2024, 5, 23, 10), "hour"),
        TimeSpan(WED, d(2024, 5, 29), "day"),
    ]


def test_extraction_is_pure_and_resolution_follows_the_reference() -> None:
    first, second = TIME.extract("下周二"), TIME.extract("下周二")
    assert first == second
    expr = first[0].value
    assert expr == TimeExpr((Step("week_rel", 1), Step("weekday", 1)))
    assert expr.resolve(WED).start == d(2024, 5, 28)
    assert expr.resolve(EVE).start == d(2024, 1, 2)  # Sunday: next week starts tomorrow


def test_an_aware_reference_gives_aware_spans() -> None:
    tz = timezone(timedelta(hours=8))
    span = TIME.extract("明天下午3点")[0].value.resolve(WED.replace(tzinfo=tz))
    assert span == TimeSpan(
        datetime(2024, 5, 23, 15, tzinfo=tz), datetime(2024, 5, 23, 16, tzinfo=tz), "hour"
    )


def test_resolution_outside_datetime_years_is_left_out() -> None:
    assert resolve("999年后", datetime(9500, 1, 1)) == []
    with pytest.raises(ValueError):
        TIME.extract("999年后")[0].value.resolve(datetime(9500, 1, 1))


NEGATIVE = [
    "以下三点建议",  # a count
    "我们3点到",  # a clock time without a day or a deadline
    "10:30",
    "比分10:30前落后",
    "下个周期",  # 周期 is a cycle
    "十周年庆典",
    "每周一例会",  # every Monday: no single time
    "每月底结算",
    "3个工作日内",  # working days need a holiday calendar
    "正月初一",  # lunar months
    "腊月初八",
    "几天后",
    "建国路8号楼",  # a house number, not a day
    "2023年2月29日",  # no such day
    "13月",
    "25点前",
    "Q3业绩",  # a quarter needs a year
    "共3天",  # a duration
    "持有3年",
    "这是一点心意",
    "https://example.com/3天后/2024年",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_time_leaves_alone(text: str) -> None:
    assert TIME.extract(text) == ()


def test_partial_matches_keep_what_is_a_time() -> None:
    assert [i.text for i in TIME.extract("明天25点")] == ["明天"]
    assert [i.text for i in TIME.extract("今天一点也不冷")] == ["今天"]
    assert [i.text for i in TIME.extract("3月后再说")] == ["3月"]  # March, not three months
    assert [i.text for i in TIME.extract("今年是个好年头")] == ["今年"]


def test_every_expression_holds_a_key_character() -> None:
    """``extract`` gives up on texts without one of ``KEYS``: every expression found without
    that shortcut must hold one (a word may not: 10:30 counts only after 明天 or 下午)."""
    from charter_zh.time_words import KEYS, scan
    from charter_zh.times import _chains, _item

    texts = [row[0] for row in RESOLVED] + NEGATIVE + ["下午3点", "10点前", "今早", "半年后"]
    for text in texts:
        for chain in _chains(scan(text)):
            item = _item(text, chain)
            if item is not None:
                assert any(key in item.text for key in KEYS), item.text
