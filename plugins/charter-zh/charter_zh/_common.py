"""Helpers the extractors share: the ASCII-boundary convention and span bookkeeping.

The boundary convention: a match that starts (ends) with an ASCII letter or digit must not be
glued to another ASCII letter or digit on that side. Chinese has no spaces, so CJK neighbours
never count as glue; ASCII neighbours do, because ``A100元`` or ``ID13812345678`` are codes.
"""

from __future__ import annotations

import re
from decimal import Context
from typing import Any

from charter.contracts.rules import Item

ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
DIGITS = frozenset("0123456789")

# Amounts carry at most a few dozen digits; a roomy context keeps the scaling by 万/亿 exact.
EXACT = Context(prec=120)


def glued_after(text: str, end: int) -> bool:
    """True when ``text[end - 1]`` is ASCII alphanumeric and so is ``text[end]``."""
    return 0 < end < len(text) and text[end - 1] in ASCII_ALNUM and text[end] in ASCII_ALNUM


def number_glued_before(text: str, start: int) -> bool:
    """A number starting at ``start`` continues something: ``x12``, ``1,2345`` or ``3.14``."""
    if start <= 0:
        return False
    before = text[start - 1]
    if before in ASCII_ALNUM:
        return True
    return before in ".," and start >= 2 and text[start - 2] in DIGITS


NUMBER_CHARS = frozenset("0123456789.,")
MAX_NUMBER = 64  # characters number_before looks back at most


def number_before(text: str, end: int, number: re.Pattern[str]) -> int | None:
    """Start of the number written just before ``end``, or None.

    The whole run of digits, dots and commas counts and must ``fullmatch`` the ``number``
    pattern (so ``1,2345`` and ``1.2.3`` are no numbers at all, rather than ``2345`` or ``2.3``).
    Walking back by hand is much cheaper than a regex search anchored at the end.
    """
    start = end
    limit = max(0, end - MAX_NUMBER)
    while start > limit and text[start - 1] in NUMBER_CHARS:
        start -= 1
    while start < end and text[start] in ".,":
        start += 1
    if start == end or number.fullmatch(text, start, end) is None:
        return None
    return start


def is_cjk(ch: str) -> bool:
    """CJK unified ideographs (basic block and extension A)."""
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def _span_key(item: Item) -> tuple[int, int]:
    return (item.start, -item.end)


def non_overlapping(items: list[Item]) -> tuple[Item, ...]:
    """Sorted by start; on overlap the earlier, then the longer, item wins."""
    end = -1
    for item in items:  # nearly always already in order and disjoint: no sort then
        if item.start < end:
            break
        end = item.end
    else:
        return tuple(items)
    out: list[Item] = []
    last = -1
    for item in sorted(items, key=_span_key):
        if item.start >= last:
            out.append(item)
            last = item.end
    return tuple(out)


def cn2an_value(text: str, mode: str) -> Any:
    """``cn2an.cn2an(text, mode)``, the module imported on first use: importing cn2an takes
    about 110 ms (it loads a whole text-processing package), which every ``charter`` command
    would otherwise pay at start-up, also those that never read a Chinese numeral."""
    import cn2an

    return cn2an.cn2an(text, mode)
