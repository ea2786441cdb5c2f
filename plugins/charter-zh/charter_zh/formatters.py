"""Formatters for response templates (``{balance|amount}``), written the way the ``zh``
extractors read: each output reads back as the same value through the extractor of its kind, so
a templated reply passes the rules those extractors serve.

==============  =========================================  =======================================
name            12345.6 / a slot value                     reads back through
==============  =========================================  =======================================
money           ``¥12,345.60``                             ``money`` (unit 元, two decimals)
money_upper     ``壹万贰仟叁佰肆拾伍元陆角``                ``money_upper``
amount          ``¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）``  ``money`` and its twin ``money_upper``
yuan            ``12345.60元``                             ``money`` (unit 元, two decimals)
percent         ``12345.6%``                               ``percent``
date            ``2024-05-02``, ``2024-05-01至2024-05-03``  ``date``
when            ``2024-05-02 08:00-12:00``                 ``date`` (the day; see below)
==============  =========================================  =======================================

Amounts (``money``, ``money_upper``, ``amount``, ``yuan``) take a number (``int``, ``float``,
``Decimal``; never a ``bool``), numeric text (``"5000"``, ``"1,234.5"``, full-width
``"１２３４５.６"``, a sign) or an amount the ``money`` or ``money_upper`` extractor reads whole
(``"¥12.30"``, ``"1.2万元"``, ``"伍仟元整"``), and round it half-up to the fen. A float is taken
as it prints (``2.675`` -> ``2.68``). A negative amount is written ``-¥12.30`` and
``负壹拾贰元叁角``: the extractors read the amount and leave the sign, as they do in any text.
Upper-case amounts follow the banking convention (``壹拾元整``, ``壹拾元零伍分``,
``壹佰万元零壹分``), as ``cn2an`` writes them (16 integer digits at most; see
``charter_zh.rmb``); ``money`` and ``yuan`` take up to 30 integer digits, what ``money`` reads.

``percent`` writes the number as it is given, followed by ``%``: ``5.2`` -> ``5.2%``, ``"5.20"``
-> ``5.20%``, ``0.052`` -> ``0.052%`` (a ratio is *not* multiplied by 100: the value must
already be the percentage). Text keeps its digits, grouping and decimals; a ``%`` or ``％``
already written is not doubled.

``date`` takes an ISO date (``2024-05-02``) or date-time (``2024-05-02T08:00``, seconds and a
UTC offset allowed; the date is the one written), a range ``a/b`` or ``a至b`` of such (what the
goal planner puts in a slot for a span of days or of times), a partial date as the planner
writes it (``2024-05``, ``--01-10``), a date the ``date`` extractor reads whole (``2024年5月1日``,
``2024/5/1``), or a ``datetime.date``. It writes ``2024-05-01``, a range of days
``2024-05-01至2024-05-03`` (one day when both ends fall on it), and a partial date in the form
the ``date`` extractor reads back as the same partial date: ``2024年5月``, ``1月10日``.

``when`` takes the same, and keeps the times of day: a range of times on one day
``2024-05-02 08:00-12:00`` (to midnight: ``20:00-24:00``; a part of the day the time extractor
reads, 上午 06:00-12:00 or 下午 12:00-18:00…, as its name: ``2024-05-02下午``), across days
``2024-05-01 09:00至2024-05-02 10:00``, one minute (the ``time`` extractor's span of
``10点半``) ``2024-05-02 10:30``. Ranges of whole days are written as ``date`` writes them. The
``time`` extractor does not read clock times without a day word, so only the dates of a
``when`` read back (through ``date``).

Every formatter returns None for what it cannot write (text that is no number or no date, a
list, a mapping, ``True``); none raises.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from charter.contracts.rules import Formatter
from charter_zh._common import EXACT
from charter_zh.dates import DateExtractor
from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor
from charter_zh.rmb import MAX_DIGITS, rmb_upper
from charter_zh.time_expr import PARTS_OF_DAY

_NUMBER = re.compile(r"[+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_FEN = Decimal("0.01")
_MAX_DIGITS = 30  # integer digits the money extractor reads
_MONEY = MoneyExtractor()
_MONEY_UPPER = MoneyUpperExtractor()
_DATE = DateExtractor()


def _text(value: str) -> str:
    """Full-width digits and signs as ASCII (``１２３４５．６`` -> ``12345.6``), trimmed."""
    return unicodedata.normalize("NFKC", value).strip()


def _number(value: Any) -> Decimal | None:
    """A number, or numeric text as written; None for anything else (``True`` included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str):
        text = _text(value)
        if _NUMBER.fullmatch(text) is not None:
            return Decimal(text.replace(",", ""))
    return None


def _whole(items: tuple[Any, ...], text: str) -> Any:
    """The value of the one item that covers all of ``text``, else None."""
    if len(items) == 1 and (items[0].start, items[0].end) == (0, len(text)):
        return items[0].value
    return None


def _yuan(value: Any) -> Decimal | None:
    """The amount in yuan, rounded half-up to the fen; None when it is no amount in yuan."""
    amount = _number(value)
    if amount is None and isinstance(value, str):
        text = _text(value)
        sign = -1 if text.startswith("-") else 1
        text = text.lstrip("+-")
        money = _MONEY.extract(text)
        if len(money) == 1 and money[0].unit != "元":
            return None  # US dollars
        found = _whole(money, text)
        if found is None:
            found = _whole(_MONEY_UPPER.extract(text), text)
        amount = None if found is None else sign * found
    if amount is None:
        return None
    try:
        rounded = amount.quantize(_FEN, rounding=ROUND_HALF_UP, context=EXACT)
    except InvalidOperation:  # more digits than EXACT holds
        return None
    if rounded.adjusted() >= _MAX_DIGITS:
        return None
    return abs(rounded) if rounded == 0 else rounded  # never -0.00


def _sign(amount: Decimal) -> str:
    return "-" if amount < 0 else ""


def _upper(amount: Decimal) -> str | None:
    if amount.adjusted() >= MAX_DIGITS:
        return None
    return rmb_upper(amount)  # what cn2an writes, without importing it (see charter_zh.rmb)


class Money:
    """``¥12,345.60``: grouped thousands, two decimals."""

    name = "money"

    def format(self, value: Any) -> str | None:
        amount = _yuan(value)
        return None if amount is None else f"{_sign(amount)}¥{abs(amount):,.2f}"


class MoneyUpper:
    """``壹万贰仟叁佰肆拾伍元陆角``: the upper-case amount (大写金额)."""

    name = "money_upper"

    def format(self, value: Any) -> str | None:
        amount = _yuan(value)
        return None if amount is None else _upper(amount)


class Amount:
    """``¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）``: both forms, as finance rules require."""

    name = "amount"

    def format(self, value: Any) -> str | None:
        amount = _yuan(value)
        upper = None if amount is None else _upper(amount)
        if amount is None or upper is None:
            return None
        return f"{_sign(amount)}¥{abs(amount):,.2f}（{upper}）"


class Yuan:
    """``12345.60元``: ungrouped, two decimals, the unit after."""

    name = "yuan"

    def format(self, value: Any) -> str | None:
        amount = _yuan(value)
        return None if amount is None else f"{amount:.2f}元"


class Percent:
    """``5.2%``: the number as given, followed by ``%`` (never multiplied by 100)."""

    name = "percent"

    def format(self, value: Any) -> str | None:
        if isinstance(value, str):
            text = _text(value)
            text = text[:-1].rstrip() if text.endswith("%") else text  # NFKC made ％ a %
            return f"{text}%" if _NUMBER.fullmatch(text) is not None else None
        number = _number(value)
        return None if number is None else f"{number:f}%"


# ---- dates and times ---------------------------------------------------------------------

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
)
_YEAR_MONTH = re.compile(r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})")
_MONTH_DAY = re.compile(r"--(?P<m>[0-9]{2})-(?P<d>[0-9]{2})")
_RANGE_SEPARATORS = ("/", "至")
_MINUTE = timedelta(minutes=1)
_DAY = timedelta(days=1)

Partial = tuple[int | None, int, int | None]  # (year, month, day), as the date extractor gives
Point = date | datetime | Partial  # a datetime is a date too: test it first


def _readable(day: date) -> bool:
    """Years the date extractor reads (1000-2999)."""
    return 1000 <= day.year <= 2999


def _partial(year: int | None, month: int, day: int | None) -> Partial | None:
    """A partial date the date extractor would give for the same date, or None."""
    if year is not None and day is None and 1000 <= year <= 2999 and 1 <= month <= 12:
        return (year, month, None)
    if year is None and day is not None:
        try:
            date(2000, month, day)  # a leap year: --02-29 is a date
        except ValueError:
            return None
        return (None, month, day)
    return None


def _point(value: Any) -> Point | None:
    """One date, date-time or partial date; None for anything else."""
    if isinstance(value, date):  # datetime included
        return value if _readable(value) else None
    if not isinstance(value, str):
        return None
    text = _text(value)
    found: Any = None
    try:
        if _ISO_DATE.fullmatch(text):
            found = date.fromisoformat(text)
        elif _ISO_DATETIME.fullmatch(text):
            found = datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
        elif m := _YEAR_MONTH.fullmatch(text):
            return _partial(int(m["y"]), int(m["m"]), None)
        elif m := _MONTH_DAY.fullmatch(text):
            return _partial(None, int(m["m"]), int(m["d"]))
        else:
            found = _whole(_DATE.extract(text), text)  # 2024年5月1日, 2024/5/1, 5月1日
    except ValueError:  # 2024-13-45
        return None
    if isinstance(found, date):
        return found if _readable(found) else None
    if isinstance(found, tuple):
        return _partial(*found)
    return None


Span = tuple[date, date] | tuple[datetime, datetime]  # days: both ends in; times: end out


def _span(value: Any) -> Point | Span | None:
    """A point, or a range ``a/b`` (``a至b``) of two dates or two date-times in order."""
    if isinstance(value, str):
        text = _text(value)
        for sep in _RANGE_SEPARATORS:
            parts = text.split(sep)
            if len(parts) == 2:
                start, end = _point(parts[0]), _point(parts[1])
                if isinstance(start, datetime) and isinstance(end, datetime):
                    return (start, end) if start < end else None
                if (
                    isinstance(start, date)
                    and isinstance(end, date)
                    and not isinstance(start, datetime)
                    and not isinstance(end, datetime)
                ):
                    return (start, end) if start <= end else None
                if sep == "至" or start is not None or end is not None:
                    return None
    return _point(value)


def _days(span: Point | Span) -> str:
    """The dates of a point or span: ``2024-05-01``, ``2024-05-01至2024-05-03``, ``2024年5月``."""
    if isinstance(span, tuple) and len(span) == 2:
        first, last = span
        if isinstance(first, datetime) and isinstance(last, datetime):
            first, last = first.date(), (last - timedelta(microseconds=1)).date()
        return first.isoformat() if first == last else f"{first.isoformat()}至{last.isoformat()}"
    if isinstance(span, datetime):
        return span.date().isoformat()
    if isinstance(span, date):
        return span.isoformat()
    year, month, day = span
    return f"{year}年{month}月" if day is None else f"{month}月{day}日"


def _clock(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M}"


def _times(start: datetime, end: datetime) -> str:
    """A range of times: a part of the day as the time extractor reads it (``2024-05-02下午``
    for 12:00-18:00, as the user said it), on one day, to its midnight, one minute, or across
    days."""
    if end - start == _MINUTE:
        return _clock(start)
    for name, first, last, _ in PARTS_OF_DAY:
        day = datetime.combine(start.date(), datetime.min.time())
        if start == day + timedelta(hours=first) and end == day + timedelta(hours=last):
            return f"{start.date().isoformat()}{name}"
    if end.date() == start.date():
        return f"{_clock(start)}-{end:%H:%M}"
    if end == datetime.combine(start.date() + _DAY, datetime.min.time()):
        return f"{_clock(start)}-24:00"
    return f"{_clock(start)}至{_clock(end)}"


def _midnight(moment: datetime) -> bool:
    return moment.time() == datetime.min.time()


class Date:
    """``2024-05-02``, ``2024-05-01至2024-05-03``, ``2024年5月``: the dates, without times."""

    name = "date"

    def format(self, value: Any) -> str | None:
        span = _span(value)
        return None if span is None else _days(span)


class When:
    """``2024-05-02 08:00-12:00``: a day, a range of days, or a time or range of times."""

    name = "when"

    def format(self, value: Any) -> str | None:
        span = _span(value)
        if span is None:
            return None
        if isinstance(span, datetime):
            return _clock(span)
        if isinstance(span, tuple) and len(span) == 2:
            start, end = span
            if (
                isinstance(start, datetime)
                and isinstance(end, datetime)
                and not (_midnight(start) and _midnight(end))
            ):
                return _times(start, end)
        return _days(span)  # whole days: as date writes them


FORMATTERS: tuple[Formatter, ...] = (
    Money(),
    MoneyUpper(),
    Amount(),
    Yuan(),
    Percent(),
    Date(),
    When(),
)
