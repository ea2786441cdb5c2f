"""``id_card``: mainland resident identity card numbers (居民身份证号码), 18 characters.

Six digits of region, eight of birth date, three of sequence and a check character (a digit or
``X``, ISO 7064 MOD 11-2): ``11010519491231002X``. Also written in 6-8-4 groups separated by
single spaces (``110105 19491231 002X``). The value is the number without spaces and with an
upper-case ``X``; ``attrs`` carry ``birth_date`` (a ``datetime.date``) and ``region`` (the
six-digit code as written in the number).

Checked with ``python-stdnum`` (``stdnum.cn.ric``): the check character, and that the birth date
is a real date. The first two digits must name a province-level division (11 北京 ... 82 澳门).

Deliberately not matched:

* 17 or 19 digits, a wrong check character, an impossible birth date (``19900230``) or one
  outside 1900-2099, an unknown province code (``99...``);
* numbers glued to ASCII letters or digits, or inside a longer digit run (``订单号
  2024051811010519491231002X7``), or followed by ``-`` and a digit (a code, not an ID);
* the old 15-digit numbers: they carry no check character, so any 15 digits would do;
* lower-case ``x`` as the check character is accepted (the value upper-cases it), full-width
  digits are not;
* anything inside a URL or an e-mail address (``web.outside_links``).

``stdnum.cn.ric.validate`` also looks the county code up in stdnum's own database of historical
codes; that reads a data file on first use, which an extractor may not do, and a code that was
valid when the card was issued stays on the card after the county is renamed. So only the
province is checked here.
"""

from __future__ import annotations

import re
from datetime import date

from stdnum.cn import ric
from stdnum.exceptions import ValidationError

from charter.contracts.rules import Item, ValueKind
from charter_zh.web import outside_links

# Led by a digit class (a scan that stops only at digits); the lookbehind after the first digit
# refuses a number that continues a longer run or a code.
_ID = re.compile(
    r"[0-9](?<![0-9A-Za-z][0-9])(?:[0-9]{16}|[0-9]{5} [0-9]{8} [0-9]{3})[0-9Xx]"
    r"(?![0-9A-Za-z]|-[0-9])"
)
# The province-level codes: 11 北京 ... 65 新疆, 71 台湾, 81 香港, 82 澳门.
_PROVINCE_CODES = (*range(11, 16), 21, 22, 23, *range(31, 38), *range(41, 47), *range(50, 55))
PROVINCES = frozenset(str(code) for code in (*_PROVINCE_CODES, *range(61, 66), 71, 81, 82))


def id_number(written: str) -> tuple[str, date] | None:
    """The normalised number and birth date of a written ID number, or None if it is none."""
    number = written.replace(" ", "").upper()
    if len(number) != 18 or number[:2] not in PROVINCES:
        return None
    try:
        if ric.calc_check_digit(number) != number[-1]:
            return None
        born = ric.get_birth_date(number)
    except (ValidationError, ValueError):
        return None
    if not 1900 <= born.year <= 2099:
        return None
    return number, born


class IdCardExtractor:
    """18-character resident ID numbers with a valid check character and birth date."""

    name: str = "id_card"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if len(text) < 18:
            return ()
        items: list[Item] = []
        for m in _ID.finditer(text):
            found = id_number(m.group())
            if found is None:
                continue
            number, born = found
            attrs = {"birth_date": born, "region": number[:6]}
            items.append(Item(m.start(), m.end(), m.group(), number, None, None, attrs))
        if not items:
            return ()
        return tuple(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """None: an ID number is reported (or redacted by a PII policy), never rewritten."""
        return None
