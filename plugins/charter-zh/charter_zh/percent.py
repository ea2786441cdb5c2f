"""``percent``: ``3.5%``, ``3.5％``, ``3.5 %``, ``1,200%`` and ``百分之三点五`` / ``百分之5``.

The value is the number before the sign as a Decimal; ``decimals`` counts the digits written
after the point (``三点五`` -> 1). Chinese numerals go through ``cn2an`` for the integer part
(``百分之百`` reads as 一百); the digits after 点 are mapped here so the value stays exact.

Deliberately not matched:

* ``5个百分点`` — percentage points are a difference, not a percentage, and share no unit;
* ``‰`` and ``万分之``;
* the sign: ``-3.5%`` yields ``3.5%``; ranges like ``3-5%`` yield ``5%``;
* numbers glued to ASCII letters/digits (``x12%``) and full-width digits (rules fold them to ASCII
  before they call an extractor);
* anything inside a URL or an e-mail address (``https://x.cn/rate/3.5%``, ``?q=5%25off``):
  it is part of the address (``web.outside_links``).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from charter.contracts.rules import Item, ValueKind, decimal_places
from charter_zh._common import (
    ASCII_ALNUM,
    DIGITS,
    MAX_NUMBER,
    NUMBER_CHARS,
    cn2an_value,
    non_overlapping,
)
from charter_zh.web import outside_links

_NUMBER = re.compile(r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,30})(?:\.[0-9]{1,10})?")
_CHINESE = re.compile(
    r"百分之(?:(?P<int>[零〇一二两三四五六七八九十百千万]{1,12})(?:点(?P<frac>[零〇一二三四五六七八九]{1,10}))?"
    r"|(?P<num>[0-9]{1,30}(?:\.[0-9]{1,10})?)(?![0-9A-Za-z]))"
)
_NUMBER_CHARS = "".join(sorted(NUMBER_CHARS))
_FRACTION_DIGITS = str.maketrans("零〇一二三四五六七八九", "00123456789")


@lru_cache(maxsize=1024)
def _chinese_integer(run: str) -> int | None:
    if run[0] in "百千万":  # 百分之百: the leading 一 is usually left out
        run = "一" + run
    try:
        value = cn2an_value(run, "normal")
    except Exception:  # cn2an signals malformed input with assorted exception types
        return None
    return value if isinstance(value, int) and value >= 0 else None


# A number written before a sign: its value and decimals, or None when the run of digits, dots
# and commas is no number (``1,2345``). Numbers repeat across texts; Decimal() is dear.
_NUMBERS: dict[str, tuple[Decimal, int] | None] = {}
_MAX_CACHED = 4096
_UNSEEN = (Decimal(0), -1)  # no cached value is this one


def _number_fields(num: str) -> tuple[Decimal, int] | None:
    fields = None
    if _NUMBER.fullmatch(num) is not None:
        dot = num.find(".")
        fields = (
            Decimal(num.replace(",", "")) if "," in num else Decimal(num),
            len(num) - dot - 1 if dot >= 0 else 0,
        )
    if len(_NUMBERS) >= _MAX_CACHED:
        _NUMBERS.clear()
    _NUMBERS[num] = fields
    return fields


def _signs(text: str, sign: str, items: list[Item]) -> bool:
    """Adds the numbers before each ``sign`` (one space allowed), True if any. The walk back
    of number_before is done by rstrip and lstrip, in C. The items are in order and disjoint:
    a walk back stops at the sign before."""
    found = len(items)
    numbers = _NUMBERS
    pos = text.find(sign)
    while pos != -1:
        end = pos + 1
        stop = pos - 1 if pos and text[pos - 1] == " " else pos
        lo = stop - MAX_NUMBER if stop > MAX_NUMBER else 0
        run = text[lo:stop]
        num = run[len(run.rstrip(_NUMBER_CHARS)) :].lstrip(".,")
        start = stop - len(num)
        if num and not (
            start
            and (
                text[start - 1] in ASCII_ALNUM
                or (text[start - 1] in ".," and start >= 2 and text[start - 2] in DIGITS)
            )
        ):
            fields = numbers.get(num, _UNSEEN)
            if fields is _UNSEEN:
                fields = _number_fields(num)
            if fields is not None:
                value, decimals = fields
                attrs = {"number": num, "chinese": False}
                items.append(Item(start, end, text[start:end], value, "%", decimals, attrs))
        pos = text.find(sign, end)
    return len(items) > found


def _chinese(text: str) -> list[Item]:
    items: list[Item] = []
    for m in _CHINESE.finditer(text):
        if m["num"] is not None:
            num = m["num"]
        else:
            integer = _chinese_integer(m["int"])
            if integer is None:
                continue
            frac = (m["frac"] or "").translate(_FRACTION_DIGITS)
            num = f"{integer}.{frac}" if frac else str(integer)
        items.append(
            Item(
                start=m.start(),
                end=m.end(),
                text=m.group(),
                value=Decimal(num),
                unit="%",
                decimals=decimal_places(num),
                attrs={"number": num, "chinese": True},
            )
        )
    return items


class PercentExtractor:
    """Percentages written with % / ％ or as 百分之…; unit ``"%"``."""

    name: str = "percent"
    value_kind: ValueKind = "number"
    has_units: bool = True

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        kinds = 0  # how many of the three scans found percentages
        if "%" in text:
            kinds += _signs(text, "%", items)
        if "％" in text:
            kinds += _signs(text, "％", items)
        if "百" in text and "百分之" in text:  # a one-character test first: far cheaper
            found = len(items)
            items += _chinese(text)
            kinds += len(items) > found
        if not items:
            return ()
        if kinds == 1:  # the items of one scan are in order and disjoint
            return tuple(outside_links(text, items))
        return non_overlapping(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """The number as written (digits, grouping and decimals kept) followed by ASCII ``%``."""
        found = self.extract(item.text)
        if len(found) != 1 or (found[0].start, found[0].end) != (0, len(item.text)):
            return None
        return f"{found[0].attrs['number']}%"
