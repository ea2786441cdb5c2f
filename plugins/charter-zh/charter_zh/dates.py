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
* Chinese-numeral dates (``二〇二四年五月一日``) and times of day.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from charter.protocols import Item, ValueKind
from charter_zh._common import ASCII_ALNUM, DIGITS, non_overlapping

# Anchored on the separator-bearing year so the scan only stops at 1xxx/2xxx runs.
_NUMERIC = re.compile(
    r"[12][0-9]{3}(?P<sep>[-/.])(?P<m>[0-9]{1,2})(?P=sep)(?P<d>[0-9]{1,2})"
    r"(?![0-9A-Za-z]|[-/.][0-9A-Za-z])"
)
# Chinese forms are found from their 月 and read backwards for the month and the year.
_DAY = re.compile(r" ?(?P<d>[0-9]{1,2}) ?[日号]")
_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
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


def _numeric(text: str) -> list[Item]:
    items: list[Item] = []
    for m in _NUMERIC.finditer(text):
        start = m.start()
        if start > 0 and (
            text[start - 1] in ASCII_ALNUM
            or (start >= 2 and text[start - 1] in "-/." and text[start - 2] in DIGITS)
        ):
            continue
        value = _value(int(text[start : start + 4]), int(m["m"]), int(m["d"]))
        if value is None:
            continue
        items.append(_item(text, start, m.end(), value))
    return items


def _digits_before(text: str, end: int, most: int) -> int:
    """Start of the run of ASCII digits ending at ``end`` (at most ``most + 1`` are looked at)."""
    start = end
    while start > 0 and end - start <= most and text[start - 1] in DIGITS:
        start -= 1
    return start


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
    """The date around the 月 at ``pos``, read backwards by hand (cheaper than a regex search)."""
    m_end = pos - 1 if pos > 0 and text[pos - 1] == " " else pos
    m_start = _digits_before(text, m_end, 2)
    if not 1 <= m_end - m_start <= 2:
        return None
    start, year = m_start, None
    y_end = m_start - 1 if m_start > 0 and text[m_start - 1] == " " else m_start
    if y_end > 0 and text[y_end - 1] == "年":
        y_end -= 1
        if y_end > 0 and text[y_end - 1] == " ":
            y_end -= 1
        y_start = _digits_before(text, y_end, 4)
        if y_end - y_start == 4 and not (y_start > 0 and text[y_start - 1] in ASCII_ALNUM):
            start, year = y_start, int(text[y_start:y_end])
    elif start > 0 and text[start - 1] in ASCII_ALNUM:
        return None
    day_m = _DAY.match(text, pos + 1)
    day = int(day_m["d"]) if day_m is not None else None
    if year is None and day is None:
        return None
    value = _value(year, int(text[m_start:m_end]), day)
    if value is None:
        return None
    return _item(text, start, day_m.end() if day_m is not None else pos + 1, value)


def _item(text: str, start: int, end: int, value: Any) -> Item:
    written = text[start:end]
    return Item(
        start=start,
        end=end,
        text=written,
        value=value,
        attrs={"iso": _ISO.fullmatch(written) is not None},
    )


class DateExtractor:
    """Gregorian dates in numeric and 年月日 forms; partial dates as tuples."""

    name: str = "date"
    value_kind: ValueKind = "date"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        items = _numeric(text)
        if "月" in text:
            items += _chinese(text)
        return non_overlapping(items)

    def canonical(self, item: Item) -> str | None:
        """``YYYY-MM-DD`` when the date is fully known, else None."""
        if isinstance(item.value, date):
            return f"{item.value.year:04d}-{item.value.month:02d}-{item.value.day:02d}"
        return None
