"""``date``: ``2024-05-01``, ``2024/5/1``, ``2024.5.1``, ``2024年5月1日``/``号``, ``5月1日``,
``2024年5月``.

The value is a ``datetime.date`` when year, month and day are all written and form a real
date, else a ``(year, month, day)`` tuple with ``None`` for what is missing. ``attrs["iso"]``
says whether the text is already ``YYYY-MM-DD``.

Deliberately not matched:

* impossible dates (``2024-13-45``, ``2023-02-29``, ``2月30日``) — they are not dates at all;
* a year alone (``2024年``) or a month alone (``5月``): too often a count or a period;
* years outside 1000–2999; a year that is not four digits is dropped (``24年5月1日`` and
  ``12024年5月1日`` yield only ``5月1日``);
* numeric dates with mixed separators (``2024-5/1``), or glued to more digits/letters
  (``2024-05-01-7``, ``v2024.5.1``), year-month numeric forms (``2024-05``: also a range);
* Chinese-numeral dates (``二〇二四年五月一日``) and times of day;
* anything inside a URL or an e-mail address (``https://bank.cn/notice/2024/05/01``): it is
  part of the address, and rewriting it as ``2024-05-01`` would break the link
  (``web.outside_links``).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import ASCII_ALNUM, DIGITS, non_overlapping
from charter_zh.web import outside_links


def _numeric_pattern(sep: str) -> re.Pattern[str]:
    """A numeric date with ``sep``, led by the separator itself: ``re`` finds a pattern that
    starts with one literal character several times faster than one that starts with a class
    ([12] or [-/.]), and three such scans cost less than one class scan. The year is checked
    by a lookbehind: four digits, not glued to a letter or digit, nor to a ``digit + separator``
    (``1-2024-05-01`` is a code)."""
    s = re.escape(sep)
    return re.compile(
        rf"{s}(?<=(?<![0-9A-Za-z])(?<![0-9][-/.])[12][0-9]{{3}}{s})"
        rf"(?P<m>[0-9]{{1,2}}){s}(?P<d>[0-9]{{1,2}})(?![0-9A-Za-z]|[-/.][0-9A-Za-z])"
    )


_DASHED, _SLASHED, _DOTTED = (_numeric_pattern(sep) for sep in "-/.")
# Chinese forms are found from their 月 and read backwards for the month and the year.
_DAY = re.compile(r" ?(?P<d>[0-9]{1,2}) ?[日号]")
_DAY_LEAD = frozenset("0123456789 ")
_MAX_DAY = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _value(year: int | None, month: int, day: int | None) -> Any:
    """A date, a partial tuple, or None when the parts cannot belong to any real date."""
    if year is not None and not 1000 <= year <= 2999:
        return None
    if not 1 <= month <= 12:
        return None
    if day is None:
        return (year, month, None)
    if year is None:
        return (None, month, day) if 1 <= day <= _MAX_DAY[month] else None
    try:
        return date(year, month, day)
    except ValueError:
        return None


# A numeric date's value (None: no real date) and whether it is ISO, by the date as written:
# the same dates come back text after text, and date() costs more than the rest of an item.
_NUMERIC_SEEN: dict[str, tuple[date | None, bool]] = {}
_MAX_CACHED = 4096


def _numeric_fields(written: str) -> tuple[date | None, bool]:
    """``written`` is a match of a numeric pattern, with its four-digit year."""
    sep = written[4]
    _, month, day = written.split(sep)
    try:  # the pattern keeps the year in 1000-2999; date() rejects the rest
        value: date | None = date(int(written[:4]), int(month), int(day))
    except ValueError:
        value = None
    fields = (value, sep == "-" and len(month) == 2 and len(day) == 2)
    if len(_NUMERIC_SEEN) >= _MAX_CACHED:
        _NUMERIC_SEEN.clear()
    _NUMERIC_SEEN[written] = fields
    return fields


def _numeric(text: str, items: list[Item], pattern: re.Pattern[str]) -> bool:
    """Adds the dates of one numeric pattern, True if any; a loop of searches gives what
    finditer would (matches are never empty), without finditer's scanner object, dear on one
    or two dates."""
    found = len(items)
    seen = _NUMERIC_SEEN
    m = pattern.search(text)
    while m is not None:
        start, end = m.span()
        start -= 4
        written = text[start:end]
        value, iso = seen.get(written) or _numeric_fields(written)
        if value is not None:
            items.append(Item(start, end, written, value, None, None, {"iso": iso}))
        m = pattern.search(text, end)
    return len(items) > found


def _chinese(text: str) -> list[Item]:
    items: list[Item] = []
    pos = text.find("月")
    while pos != -1:
        item = _chinese_at(text, pos)
        if item is not None:
            items.append(item)
        pos = text.find("月", pos + 1)
    return items


def _chinese_at(text: str, pos: int) -> Item | None:
    """The date around the 月 at ``pos``, read backwards by hand (cheaper than a regex search):
    a month of one or two digits, then maybe a year of exactly four digits and 年 before it
    (kept only when not glued to more letters or digits), maybe a day and 日/号 after it."""
    m_end = pos - 1 if pos and text[pos - 1] == " " else pos
    m_start = m_end - 1
    if m_start < 0 or text[m_start] not in DIGITS:
        return None
    if m_start and text[m_start - 1] in DIGITS:
        m_start -= 1
        if m_start and text[m_start - 1] in DIGITS:
            return None  # three digits or more: no month
    start, year = m_start, None
    y_end = m_start - 1 if m_start and text[m_start - 1] == " " else m_start
    if y_end and text[y_end - 1] == "年":
        y_end -= 1
        if y_end and text[y_end - 1] == " ":
            y_end -= 1
        y_start = y_end - 4
        written = text[y_start:y_end] if y_start >= 0 else ""
        if (
            written.isdigit()
            and written.isascii()
            and not (y_start and text[y_start - 1] in ASCII_ALNUM)
        ):
            start, year = y_start, int(written)
    elif m_start and text[m_start - 1] in ASCII_ALNUM:
        return None
    end = pos + 1
    day = None
    if end < len(text) and text[end] in _DAY_LEAD:
        day_m = _DAY.match(text, end)
        if day_m is not None:
            day, end = int(day_m["d"]), day_m.end()
    if year is None and day is None:
        return None
    value = _value(year, int(text[m_start:m_end]), day)
    if value is None:
        return None
    return Item(start, end, text[start:end], value, None, None, {"iso": False})


class DateExtractor:
    """Gregorian dates in numeric and 年月日 forms; partial dates as tuples."""

    name: str = "date"
    value_kind: ValueKind = "date"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        kinds = 0  # how many of the four scans found dates
        if "-" in text:
            kinds += _numeric(text, items, _DASHED)
        if "/" in text:
            kinds += _numeric(text, items, _SLASHED)
        if "." in text:
            kinds += _numeric(text, items, _DOTTED)
        if "月" in text:
            found = len(items)
            items += _chinese(text)
            kinds += len(items) > found
        if not items:
            return ()
        if kinds == 1:  # the dates of one scan are in order and disjoint
            return tuple(outside_links(text, items))
        return non_overlapping(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """``YYYY-MM-DD`` when the date is fully known, else None."""
        if isinstance(item.value, date):
            return f"{item.value.year:04d}-{item.value.month:02d}-{item.value.day:02d}"
        return None
