"""``identifier``: ASCII codes in any language's text — order numbers, coupon codes, card tails.

Matched: ``DD202405010001``, ``SAVE20``, ``1234`` (尾号1234), ``91110108MA01ABCD2X``, ``A-1023``,
and their full-width spellings (``ＤＤ２０２４``, ``１２３４``): a run of letters, digits and inner
hyphens, at least four characters long, with at least one digit, not glued to another ASCII letter
or digit. The value is the run in half-width characters (``１２３４`` -> ``1234``).

Deliberately not matched, because another extractor owns them or they are no codes:

* quantities and amounts: a run followed by a unit (``2024年``, ``1000元``, ``5000 块``,
  ``2500人``, ``1200%``, ``2024款``) or led by a currency sign (``¥1000``, ``$1000``, ``RMB1000``);
* numbers with a decimal point, a thousands separator or a clock colon on either side
  (``12345.60``, ``12,345``, ``10:30``, ``2024/05/01``);
* numeric dates and year-months written with hyphens (``2024-05-01``, ``2024-05``, ``05-01``);
* words without a digit (``VIP``, ``Wi-Fi``) and runs shorter than four characters (``5G``).

Language-neutral and installed by ``charter.plugins.builtin``: the model-text checks
(``charter.reflect.grounding``) ask that every identifier an answer writes occurs in what the
turn gave it.
"""

from __future__ import annotations

import re

from charter.compile.literals import fold_width
from charter.contracts.rules import Item, ValueKind

MIN_LENGTH = 4
# a run of at least MIN_LENGTH letters, digits and inner hyphens holding a digit, not glued to
# ASCII letters or digits (the lookahead keeps the short runs of ordinary text out cheaply)
_RUN = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z-]*[0-9])[A-Za-z0-9][A-Za-z0-9-]{2,}[A-Za-z0-9](?![A-Za-z0-9])"
)
# what follows a quantity: units of money, time, age, counts and measures (first character)
_UNITS = frozenset(
    "元块角毛%％‰年月日号点时分秒岁天周个次件万亿千百人名位张条份台笔页倍米克斤升期度折小公毫厘款版届季级"
)
_CURRENCY = frozenset("¥￥$＄")
_NUMBER_SEPARATORS = frozenset(".,:/")
_DATE_LIKE = re.compile(r"[0-9]{4}-[0-9]{1,2}(?:-[0-9]{1,2})?|[0-9]{1,2}-[0-9]{1,2}")
_CURRENCY_CODE = re.compile(r"(?:RMB|CNY|USD)[0-9]")
_DIGIT = re.compile(r"[0-9]")


def _next_char(text: str, at: int, step: int) -> str:
    """The first character from ``at`` in direction ``step`` that is not a space."""
    while 0 <= at < len(text) and text[at] in " \u3000":
        at += step
    return text[at] if 0 <= at < len(text) else ""


def _is_code(folded: str, start: int, end: int) -> bool:
    run = folded[start:end]
    if len(run) < MIN_LENGTH or _DIGIT.search(run) is None:
        return False
    if _next_char(folded, end, 1) in _UNITS or _next_char(folded, start - 1, -1) in _CURRENCY:
        return False
    if end + 1 < len(folded) and folded[end] in _NUMBER_SEPARATORS and folded[end + 1].isdigit():
        return False
    if start >= 2 and folded[start - 1] in _NUMBER_SEPARATORS and folded[start - 2].isdigit():
        return False
    return _DATE_LIKE.fullmatch(run) is None and _CURRENCY_CODE.match(run) is None


class IdentifierExtractor:
    """ASCII codes (order numbers, coupon codes, card tails); the value is the half-width run."""

    name: str = "identifier"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        folded = fold_width(text)
        return tuple(
            Item(m.start(), m.end(), text[m.start() : m.end()], m.group())
            for m in _RUN.finditer(folded)
            if _is_code(folded, m.start(), m.end())
        )

    def canonical(self, item: Item) -> str | None:
        """The half-width spelling."""
        return str(item.value)
