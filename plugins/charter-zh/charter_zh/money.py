"""``money``: amounts written with Arabic digits and a currency marker.

Matched: ``¥1,234.50``, ``￥99``, ``1234.5元``, ``1,234.50 元``, ``1.2万元`` (12000), ``3亿元``,
``人民币100元``, ``RMB 100``, ``CNY100``, ``100块``/``100块钱`` (unit 元); US dollars as unit
``"USD"``: ``$5``, ``US$5``, ``USD 5``, ``5美元``, ``5美金``, ``5 USD``.

Deliberately not matched:

* a number without a currency marker (``2024年``, ``100%``, ``3个``, ``1.2万``);
* other currencies (``100日元``, ``100港元``, ``HK$100``, ``€5``) — they are not CNY and
  naming them USD would be wrong;
* amounts in Chinese numerals, upper-case (``壹佰元``, see ``money_upper``) or lower-case
  (``一百元``, ``三块``): lower-case numerals are mostly counts, and a partial parse would
  be worse than none;
* Arabic digits glued to upper-case numerals (``壹佰2元``) or to ASCII letters/digits (``A100元``);
* ``块`` used as a measure word: ``3块蛋糕`` (``块`` followed by a CJK noun) is not money;
* the sign: ``-100元`` yields ``100元``; ranges like ``1-3元`` yield ``3元``;
* full-width digits, and numbers longer than 30 integer digits;
* anything inside a URL or an e-mail address (``https://x.cn/pay?amount=100元``,
  ``RMB100@bank.cn``): it is part of the address (``web.outside_links``).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from charter.protocols import Item, ValueKind
from charter_zh._common import (
    ASCII_ALNUM,
    DIGITS,
    EXACT,
    glued_after,
    is_cjk,
    non_overlapping,
    number_before,
    number_glued_before,
)
from charter_zh.web import outside_links

_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3}(?![0-9])){1,10}|[0-9]{1,30})(?:\.[0-9]{1,10})?"
_MULT = r"万亿|千万|百万|万|千|亿"
_SUFFIX = r"元|块钱|块|美元|美金|RMB|CNY|USD"

# Matched at a prefix mark found by _marks; the groups are read in one m.groups() call.
_PREFIXED = re.compile(
    rf"""(?P<mark>¥|￥|\$|RMB|CNY|USD|US\$|人民币)(?P<gap>[ \u00a0]?)
    (?P<num>{_NUMBER})(?![0-9]|[.,][0-9])
    (?P<mult>{_MULT})?
    (?:(?P<sp>[ ]?)(?P<suffix>{_SUFFIX}))?""",
    re.X,
)
# Currency marks by their first character, in the order a regex alternation would try them.
# The number is read forwards after a prefix and by walking back (number_before) before a unit,
# which is far cheaper than a digit-led regex.
_LEADS = (
    ("¥", ("¥",)),
    ("￥", ("￥",)),
    ("$", ("$",)),
    ("R", ("RMB",)),
    ("C", ("CNY",)),
    ("U", ("USD", "US$")),
    ("人", ("人民币",)),
    ("元", ("元",)),
    ("块", ("块",)),
    ("美", ("美元", "美金")),
)
_UNITS = frozenset("元块")
# What may stand just before a 元/块 that ends an amount: 100元, 100 元, 1.2万元.
_BEFORE_UNIT = frozenset("0123456789 万千亿")
_PREFIX_ONLY = frozenset({"¥", "￥", "$", "US$", "人民币"})
_PREFIX_MARKS = _PREFIX_ONLY | {"RMB", "CNY", "USD"}
_NUMBER_RE = re.compile(_NUMBER)
_FULL_SUFFIXED = re.compile(
    rf"(?P<num>{_NUMBER})(?P<mult>{_MULT})?(?P<sp>[ ]?)(?P<suffix>{_SUFFIX})"
)

_MULTIPLIERS = {
    "千": Decimal(10**3),
    "万": Decimal(10**4),
    "百万": Decimal(10**6),
    "千万": Decimal(10**7),
    "亿": Decimal(10**8),
    "万亿": Decimal(10**12),
}
_USD_MARKS = frozenset({"$", "US$", "USD", "美元", "美金"})
_SYMBOLS = frozenset({"¥", "￥", "$"})
_ASCII_CODES = frozenset({"RMB", "CNY", "USD"})
# 块 is also a measure word (3块蛋糕); it counts as money only before these, or a non-CJK char.
_KUAI_FOLLOWERS = frozenset("钱的左了吧呢啊呀吗哦嘛就都也还起以多")
_UPPER_NUMERALS = frozenset("零壹贰叁肆伍陆柒捌玖拾佰仟万亿貳參陸萬億")
_FEN = Decimal("0.01")


def _marks(text: str) -> list[tuple[int, str]]:
    """Every currency mark as (start, mark), in order, marks never overlapping (the 元 of 美元 is
    no mark of its own): what finditer over the alternation of the marks gives, less the 元 and
    块 that cannot end an amount (the 元 of 壹仟元整), which would only be skipped later.

    Found with str.find on one character at a time, which is several times faster than letting
    re scan for the class of first characters (one-character ``in`` tests skip the absent ones).
    """
    found: list[tuple[int, str]] = []
    for lead, marks in _LEADS:
        if lead not in text:
            continue
        pos = text.find(lead)
        if lead in _UNITS:
            while pos != -1:
                if pos > 0 and text[pos - 1] in _BEFORE_UNIT:
                    found.append((pos, lead))
                pos = text.find(lead, pos + 1)
        elif marks[0] == lead:
            while pos != -1:
                found.append((pos, lead))
                pos = text.find(lead, pos + 1)
        else:
            while pos != -1:
                for mark in marks:
                    if text.startswith(mark, pos):
                        found.append((pos, mark))
                        break
                pos = text.find(lead, pos + 1)
    if len(found) > 1:
        found.sort()
    return found


def _kuai_is_money(text: str, after: int) -> bool:
    if after >= len(text):
        return True
    ch = text[after]
    return not is_cjk(ch) or ch in _KUAI_FOLLOWERS


def _strip_fraction_zeros(value: Decimal) -> Decimal:
    """12000.0 -> 12000 and 12345.60 -> 12345.6, never the exponent form normalize() gives."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite: built from digits
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    return Decimal((sign, digits, exponent))


def _make_item(
    text: str, start: int, end: int, mark: str, prefix: str, num: str, mult: str, suffix: str
) -> Item:
    """``mark`` is the bare prefix mark (``¥``, ``RMB``…) or "", ``prefix`` the mark as written
    with its space."""
    value = Decimal(num.replace(",", "")) if "," in num else Decimal(num)
    dot = num.find(".")
    if mult:
        value = EXACT.multiply(value, _MULTIPLIERS[mult])
        if dot >= 0:  # 50万 is 500000 already; 1.20万 is 12000.0 and becomes 12000
            value = _strip_fraction_zeros(value)
    return Item(
        start,
        end,
        text[start:end],
        value,
        "USD" if mark in _USD_MARKS or suffix in _USD_MARKS else "元",
        len(num) - dot - 1 if dot >= 0 else 0,
        {
            "symbol": mark if mark in _SYMBOLS else None,
            "prefix": prefix or None,
            "suffix": (mult + suffix) or None,
            "grouped": "," in num,
        },
    )


def _prefixed_at(text: str, start: int) -> Item | None:
    m = _PREFIXED.match(text, start)
    if m is None:
        return None
    mark, gap, num, mult, _, suffix = m.groups()
    if start and mark[0] in "$RCU" and text[start - 1] in ASCII_ALNUM:
        return None  # HK$5, XRMB5
    end = m.end()
    if suffix is not None and (
        (suffix in _ASCII_CODES and glued_after(text, end))
        or (suffix == "块" and not _kuai_is_money(text, end))
    ):
        suffix, end = None, m.end("mult") if mult else m.end("num")
    if end < len(text) and text[end] in ASCII_ALNUM and text[end - 1] in ASCII_ALNUM:
        return None  # glued after: ¥100abc
    return _make_item(text, start, end, mark, mark + gap, num, mult or "", suffix or "")


def _suffixed_at(text: str, mark_start: int, mark: str) -> Item | None:
    pos = mark_start
    if pos > 0 and text[pos - 1] == " ":
        pos -= 1
    mult = ""
    if pos > 0 and text[pos - 1] in "万千亿":
        two = text[max(0, pos - 2) : pos]
        mult = two if two in _MULTIPLIERS else text[pos - 1]
        pos -= len(mult)
    if pos == 0 or text[pos - 1] not in DIGITS:
        return None  # the common case: 元 after a word or an upper-case numeral
    end = mark_start + len(mark)
    suffix = mark
    if mark in _ASCII_CODES:
        if glued_after(text, end):
            return None
    elif mark == "块":
        if text.startswith("钱", end):
            suffix, end = "块钱", end + 1
        elif not _kuai_is_money(text, end):
            return None
    start = number_before(text, pos, _NUMBER_RE)
    if start is None or number_glued_before(text, start):
        return None
    if start > 0 and text[start - 1] in _UPPER_NUMERALS:
        return None
    return _make_item(text, start, end, "", "", text[start:pos], mult, suffix)


def _format(amount: Decimal, grouped: bool) -> str | None:
    try:
        rounded = amount.quantize(_FEN, rounding=ROUND_HALF_UP, context=EXACT)
    except InvalidOperation:
        return None
    return f"{rounded:,.2f}" if grouped else f"{rounded:.2f}"


class MoneyExtractor:
    """Arabic-digit amounts with ¥/￥/元/万元/人民币/RMB/块 (unit 元) or $/USD/美元 (unit USD)."""

    name: str = "money"
    value_kind: ValueKind = "number"
    has_units: bool = True

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        last_end = consumed = 0
        for start, mark in _marks(text):
            if start < consumed:
                continue  # inside the previous mark: the 元 of 美元
            consumed = start + len(mark)
            if start < last_end:
                continue  # the 元 of ¥100元 or 人民币100元
            item = _prefixed_at(text, start) if mark in _PREFIX_MARKS else None
            if item is None and mark not in _PREFIX_ONLY:
                item = _suffixed_at(text, start, mark)
            if item is not None:
                items.append(item)
                last_end = item.end
        if not items:
            return ()
        return non_overlapping(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """Two decimals, rounded half-up to the fen, in the writer's style; 万/亿 expanded."""
        found = self.extract(item.text)
        if len(found) != 1 or (found[0].start, found[0].end) != (0, len(item.text)):
            return None
        attrs = found[0].attrs
        number = _format(found[0].value, bool(attrs["grouped"]))
        if number is None:
            return None
        prefix = attrs["prefix"] or ""
        m = _PREFIXED.fullmatch(item.text) if prefix else _FULL_SUFFIXED.fullmatch(item.text)
        if m is None:
            return None
        suffix = m["suffix"] or ""
        if suffix in ("块", "块钱"):
            suffix = "元"
        # The multiplier is folded into the digits: 1.2万元 -> 12000.00元, ¥1.2万 -> ¥12000.00.
        space = (m["sp"] or "") if suffix else ""
        return f"{prefix}{number}{space}{suffix}"
