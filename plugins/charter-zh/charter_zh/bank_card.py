"""``bank_card``: payment card numbers (银行卡号), 16 to 19 digits with a valid Luhn check digit.

Written as one run (``6222021234567890128``) or in groups of four separated by single spaces or
single hyphens, the same separator throughout, the last group holding the one to three digits
left over (``6222 0212 3456 7890 128``, ``4111-1111-1111-1111``). The value is the digits alone;
``attrs["grouped"]`` says whether the number was written in groups.

Checked with ``python-stdnum`` (``stdnum.luhn``), and the issuer prefix must be one a card
network uses: ``3`` (JCB), ``4`` (Visa), ``5`` (Mastercard), ``6`` (UnionPay, Discover,
Maestro) or Mastercard's ``2221``-``2720``.

Deliberately not matched:

* numbers failing the Luhn check (most order and tracking numbers), or whose prefix no card
  network uses: ``2023051812345678`` starts with a date, whatever its check digit;
* fewer than 16 or more than 19 digits; 15-digit American Express numbers (too easily a
  tracking number);
* numbers glued to ASCII letters or digits, inside a longer digit run, or followed by ``-`` or
  a space and more digits (the groups go on); groups of other sizes (``622202 1234567890128``) or
  mixed separators;
* an 18-digit run that is a valid resident ID number (``id_card``): the check digit of an ID
  number passes Luhn one time in ten, and an ID is far likelier than an 18-digit card;
* phone numbers and dates, which are too short to qualify;
* anything inside a URL or an e-mail address (``web.outside_links``).
"""

from __future__ import annotations

import re

from stdnum import luhn

from charter.contracts.rules import Item, ValueKind
from charter_zh.id_card import id_number
from charter_zh.web import outside_links

# Led by a digit class; the lookbehind after the first digit refuses a continued run. The
# grouped forms repeat their separator through a backreference.
_CARD = re.compile(
    r"[0-9](?<![0-9A-Za-z][0-9])"
    r"(?:[0-9]{15,18}|[0-9]{3}(?P<sep>[ \-])[0-9]{4}(?:(?P=sep)[0-9]{4}){2}(?:(?P=sep)[0-9]{1,3})?)"
    r"(?![0-9A-Za-z]|[ \-][0-9])"
)


def issued(digits: str) -> bool:
    """Whether a card network uses the number's prefix (see the module docstring)."""
    first = digits[0]
    if first in "3456":
        return True
    return first == "2" and 2221 <= int(digits[:4]) <= 2720


class BankCardExtractor:
    """16-19 digit card numbers passing Luhn, with a card network's prefix."""

    name: str = "bank_card"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if len(text) < 16:
            return ()
        items: list[Item] = []
        for m in _CARD.finditer(text):
            written = m.group()
            grouped = m.group("sep") is not None
            digits = written.replace(m.group("sep"), "") if grouped else written
            if not issued(digits) or not luhn.is_valid(digits):
                continue
            if len(digits) == 18 and id_number(digits) is not None:
                continue
            attrs = {"grouped": grouped}
            items.append(Item(m.start(), m.end(), written, digits, None, None, attrs))
        if not items:
            return ()
        return tuple(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """None: a card number is reported (or redacted by a PII policy), never rewritten."""
        return None
