"""Unresolved time expressions (``TimeExpr``) and what they resolve to (``TimeSpan``).

The ``time`` extractor (``charter_zh.times``) stays pure: ``去年一季度`` becomes a ``TimeExpr``, a
chain of ``Step``\\ s (``year -1``, then ``quarter 1``), and only ``TimeExpr.resolve(reference)``
turns it into dates. Each step narrows the span the steps before it produced, or starts from the
reference when it comes first:

========================  ==============================================================
step (kind, value)        span
========================  ==============================================================
``year n``                the year ``n`` years from the reference's (今年 0, 去年 -1)
``year_abs y``            the year ``y``
``half h``                first (1) or second (2) half of the year
``quarter q``             quarter ``q`` (1-4) of the year
``quarter_rel n``         the quarter ``n`` quarters from the reference's (上季度 -1)
``month m``               month ``m`` of the year (the reference's year when first)
``month_rel n``           the month ``n`` months from the reference's (上个月 -1)
``xun k``                 days 1-10 (1: 月初, 上旬), 11-20 (2: 中旬), 21-end (3: 月底)
``day d``                 day ``d`` of the month; past the month's end, its last day
``week_rel n``            the week ``n`` weeks from the reference's (下周 +1)
``weekday w``             day ``w`` (0 Monday ... 6 Sunday) of the week
``weekend``               Saturday and Sunday of the week
``day_rel n``             the day ``n`` days from the reference's (明天 +1)
``part_of_day p``         a part of the day, ``PARTS_OF_DAY[p]`` (下午: 12:00-18:00)
``clock m``               ``m`` minutes after the day's midnight; ``unit`` says "hour" (10点)
                          or "minute" (10点半)
``offset n, unit``        ``n`` units from the reference (3天后 +3 day, 2小时前 -2 hour)
``within n, unit``        from the reference for ``n`` units (3天内)
``recent n, unit``        the ``n`` units up to and including the reference's day (近一年)
========================  ==============================================================

Weeks start on Monday (ISO 8601, and how Chinese calendars print them): ``本周五`` is the Friday
of the week holding the reference, ``下周二`` the Tuesday of the week after it (even said on a
Monday, when "next Tuesday" in English would be tomorrow), and a bare ``周二`` is the Tuesday of
the reference's week, past or not.

The parser reads a clock hour after a part of the day on a 12-hour dial (``pm_hour``):
``下午3点`` is 15:00, ``晚上12点`` midnight at the end of that day, ``中午1点`` 13:00; ``凌晨``,
``早上`` and ``上午`` keep the hour as written.

``bound`` turns a span into a deadline or a start. ``before`` (前, 之前, 以前) ends at a clock
time itself (``明天10点前``: until 10:00) or at the end of a longer span (``月底前``: until the
month is over, as in business usage), and starts at the reference, or, when the deadline has
passed, at the start of the deadline's day. ``after`` (后, 之后, 以后) follows clock times only
and lasts to the end of that day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

# name, first hour, end hour (exclusive), whether a clock hour below 12 is p.m.
PARTS_OF_DAY: tuple[tuple[str, int, int, bool], ...] = (
    ("凌晨", 0, 6, False),
    ("早上", 6, 9, False),
    ("上午", 6, 12, False),
    ("中午", 11, 14, True),
    ("下午", 12, 18, True),
    ("傍晚", 17, 19, True),
    ("晚上", 18, 24, True),
    ("夜里", 21, 24, True),
)


def pm_hour(part: int, hour: int) -> int:
    """The hour of the day ``hour`` o'clock means in part of the day ``part``: ``下午3点`` is
    15, ``晚上12点`` 24 (midnight ending the day), ``中午11点`` 11 and ``中午1点`` 13."""
    name, _, _, pm = PARTS_OF_DAY[part]
    if name == "晚上" and hour == 12:
        return 24
    if pm and hour < 12 and not (name == "中午" and hour >= 11):
        return hour + 12
    return hour


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """``start`` <= t < ``end``; ``granularity`` is the precision of the expression (``year``,
    ``half``, ``quarter``, ``month``, ``xun``, ``week``, ``weekend``, ``day``, ``part_of_day``,
    ``hour`` or ``minute``)."""

    start: datetime
    end: datetime
    granularity: str


@dataclass(frozen=True, slots=True)
class Step:
    """One part of an expression; see the module docstring for the kinds."""

    kind: str
    value: int
    unit: str = ""


@dataclass(frozen=True, slots=True)
class TimeExpr:
    """A time expression as written, resolved only against a reference (``resolve``)."""

    steps: tuple[Step, ...]
    bound: str | None = None  # "before" or "after"

    def resolve(self, reference: datetime) -> TimeSpan:
        """The span this expression names, said at ``reference`` (naive or aware: the span
        carries the reference's ``tzinfo``). Raises ``ValueError`` when the result falls outside
        the years ``datetime`` can hold."""
        if not self.steps:
            raise ValueError("an expression needs at least one step")
        try:
            span: TimeSpan | None = None
            for step in self.steps:
                span = _apply(step, span, reference)
            assert span is not None
            if self.bound == "before":
                return _before(span, reference)
            if self.bound == "after":
                next_day = _midnight(span.start.date() + timedelta(1), reference)
                return TimeSpan(span.start, next_day, span.granularity)
            return span
        except OverflowError as exc:  # date arithmetic past year 9999 (or before year 1)
            raise ValueError(f"{self} lies outside the supported years") from exc


def _midnight(day: date, reference: datetime) -> datetime:
    return datetime.combine(day, time(), tzinfo=reference.tzinfo)


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + n
    return index // 12, index % 12 + 1


def _month_start(year: int, month: int, reference: datetime) -> datetime:
    return _midnight(date(year, month, 1), reference)


def _months(year: int, month: int, count: int, granularity: str, ref: datetime) -> TimeSpan:
    end_year, end_month = _add_months(year, month, count)
    return TimeSpan(
        _month_start(year, month, ref), _month_start(end_year, end_month, ref), granularity
    )


def _days(first: date, count: int, granularity: str, reference: datetime) -> TimeSpan:
    return TimeSpan(
        _midnight(first, reference), _midnight(first + timedelta(count), reference), granularity
    )


def _shift_date(day: date, n: int, unit: str) -> date:
    """``day`` moved by ``n`` days, weeks, months or years; a month end is kept in range
    (1月31日 plus one month is 2月29日 or 28日)."""
    if unit in ("day", "week"):
        return day + timedelta(n * (7 if unit == "week" else 1))
    year, month = _add_months(day.year, day.month, n * (12 if unit == "year" else 1))
    return date(year, month, min(day.day, _month_length(year, month)))


def _month_length(year: int, month: int) -> int:
    following = date(*_add_months(year, month, 1), 1)
    return (following - timedelta(1)).day


def _shift(moment: datetime, n: int, unit: str) -> datetime:
    if unit == "minute":
        return moment + timedelta(minutes=n)
    if unit == "hour":
        return moment + timedelta(hours=n)
    return datetime.combine(_shift_date(moment.date(), n, unit), moment.timetz())


def _year_of(span: TimeSpan | None, reference: datetime) -> int:
    return reference.year if span is None else span.start.year


def _month_of(span: TimeSpan | None, reference: datetime) -> tuple[int, int]:
    moment = reference if span is None else span.start
    return moment.year, moment.month


def _day_of(span: TimeSpan | None, reference: datetime) -> date:
    return reference.date() if span is None else span.start.date()


def _apply(step: Step, span: TimeSpan | None, ref: datetime) -> TimeSpan:
    kind, n = step.kind, step.value
    if kind in ("year", "year_abs"):
        year = ref.year + n if kind == "year" else n
        return _months(year, 1, 12, "year", ref)
    if kind in ("half", "quarter"):
        size = 6 if kind == "half" else 3
        return _months(_year_of(span, ref), (n - 1) * size + 1, size, kind, ref)
    if kind == "quarter_rel":
        year, month = _add_months(ref.year, (ref.month - 1) // 3 * 3 + 1, 3 * n)
        return _months(year, month, 3, "quarter", ref)
    if kind == "month":
        return _months(_year_of(span, ref), n, 1, "month", ref)
    if kind == "month_rel":
        year, month = _add_months(ref.year, ref.month, n)
        return _months(year, month, 1, "month", ref)
    if kind == "xun":
        year, month = _month_of(span, ref)
        first = 1 + 10 * (n - 1)
        count = 10 if n < 3 else _month_length(year, month) - 20
        return _days(date(year, month, first), count, "xun", ref)
    if kind == "day":
        year, month = _month_of(span, ref)
        return _days(date(year, month, min(n, _month_length(year, month))), 1, "day", ref)
    if kind == "week_rel":
        today = ref.date()
        return _days(today - timedelta(today.weekday() - 7 * n), 7, "week", ref)
    if kind in ("weekday", "weekend"):
        day = _day_of(span, ref)
        monday = day - timedelta(day.weekday())
        if kind == "weekend":
            return _days(monday + timedelta(5), 2, "weekend", ref)
        return _days(monday + timedelta(n), 1, "day", ref)
    if kind == "day_rel":
        return _days(ref.date() + timedelta(n), 1, "day", ref)
    if kind == "part_of_day":
        midnight = _midnight(_day_of(span, ref), ref)
        _, first, end, _ = PARTS_OF_DAY[n]
        return TimeSpan(
            midnight + timedelta(hours=first), midnight + timedelta(hours=end), "part_of_day"
        )
    if kind == "clock":
        return _clock(step, span, ref)
    if kind == "offset":
        if step.unit in ("minute", "hour"):
            start = _shift(ref, n, step.unit)
            return TimeSpan(start, _shift(start, 1, step.unit), step.unit)
        return _days(_shift_date(ref.date(), n, step.unit), 1, "day", ref)
    if kind == "within":
        return TimeSpan(ref, _shift(ref, n, step.unit), step.unit)
    if kind == "recent":
        tomorrow = ref.date() + timedelta(1)
        since = _shift_date(tomorrow, -n, step.unit)
        return TimeSpan(_midnight(since, ref), _midnight(tomorrow, ref), "day")
    raise ValueError(f"unknown step kind {kind!r}")


def _clock(step: Step, span: TimeSpan | None, ref: datetime) -> TimeSpan:
    start = _midnight(_day_of(span, ref), ref) + timedelta(minutes=step.value)
    unit = step.unit or "minute"
    return TimeSpan(start, _shift(start, 1, unit), unit)


def _before(span: TimeSpan, reference: datetime) -> TimeSpan:
    end = span.start if span.granularity in ("hour", "minute") else span.end
    if reference < end:
        return TimeSpan(reference, end, span.granularity)
    return TimeSpan(_midnight(span.start.date(), reference), end, span.granularity)
