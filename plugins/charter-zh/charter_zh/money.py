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
* full-width digits, and numbers longer than 30 integer digits.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from charter.protocols import Item, ValueKind, decimal_places
from charter_zh._common import (
    ASCII_ALNUM,
    EXACT,
    glued_after,
    is_cjk,
    non_overlapping,
    number_before,
    number_glued_before,
)

_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3}(?![0-9])){1,10}|[0-9]{1,30})(?:\.[0-9]{1,10})?"
_MULT = r"万亿|千万|百万|万|千|亿"
_SUFFIX = r"元|块钱|块|美元|美金|RMB|CNY|USD"

# Anchored on the prefix so the scan jumps straight to ¥/￥/$/RMB/CNY/USD/人民币.
_PREFIXED = re.compile(
    rf"""(?P<prefix>(?:¥|￥|\$|RMB|CNY|USD|US\$|人民币)[ \u00a0]?)
    (?P<num>{_NUMBER})(?![0-9]|[.,][0-9])
    (?P<mult>{_MULT})?
    (?:(?P<sp>[ ]?)(?P<suffix>{_SUFFIX}))?""",
    re.X,
)
# One scan over every currency marker; the number is read forwards after a prefix and by
# walking back (number_before) before a unit, which is far cheaper than a digit-led regex.
_MARK = re.compile(r"¥|￥|\$|RMB|CNY|USD|US\$|人民币|元|块|美[元金]")
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
_ASCII_CODES = frozenset({"RMB", "CNY", "USD"})
# 块 is also a measure word (3块蛋糕); it counts as money only before these, or a non-CJK char.
_KUAI_FOLLOWERS = frozenset("钱的左了吧呢啊呀吗哦嘛就都也还起以多")
_UPPER_NUMERALS = frozenset("零壹贰叁肆伍陆柒捌玖拾佰仟万亿貳參陸萬億")
_FEN = Decimal("0.01")


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
    text: str, start: int, end: int, prefix: str, num: str, mult: str, suffix: str
) -> Item:
    value = Decimal(num.replace(",", ""))
    if mult:
        value = _strip_fraction_zeros(EXACT.multiply(value, _MULTIPLIERS[mult]))
    bare_prefix = prefix.strip(" \u00a0")
    usd = bare_prefix in _USD_MARKS or suffix in _USD_MARKS
    symbol = bare_prefix if bare_prefix in ("¥", "￥", "$") else None
    attrs: dict[str, Any] = {
        "symbol": symbol,
        "prefix": prefix or None,
        "suffix": (mult + suffix) or None,
        "grouped": "," in num,
    }
    return Item(
        start=start,
        end=end,
        text=text[start:end],
        value=value,
        unit="USD" if usd else "元",
        decimals=decimal_places(num),
        attrs=attrs,
    )


def _prefixed_at(text: str, start: int) -> Item | None:
    m = _PREFIXED.match(text, start)
    if m is None:
        return None
    prefix = m["prefix"]
    if start > 0 and text[start - 1] in ASCII_ALNUM and prefix[0] in "$RCU":
        return None  # HK$5, XRMB5
    suffix = m["suffix"] or ""
    end = m.end()
    if (suffix in _ASCII_CODES and glued_after(text, end)) or (
        suffix == "块" and not _kuai_is_money(text, end)
    ):
        suffix, end = "", m.end("mult") if m["mult"] else m.end("num")
    if glued_after(text, end):
        return None
    return _make_item(text, start, end, prefix, m["num"], m["mult"] or "", suffix)


def _suffixed_at(text: str, mark_start: int, mark: str) -> Item | None:
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
    pos = mark_start
    if pos > 0 and text[pos - 1] == " ":
        pos -= 1
    mult = ""
    if pos > 0 and text[pos - 1] in "万千亿":
        two = text[max(0, pos - 2) : pos]
        mult = two if two in _MULTIPLIERS else text[pos - 1]
        pos -= len(mult)
    start = number_before(text, pos, _NUMBER_RE)
    if start is None or number_glued_before(text, start):
        return None
    if start > 0 and text[start - 1] in _UPPER_NUMERALS:
        return None
    return _make_item(text, start, end, "", text[start:pos], mult, suffix)


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
        if not text:
            return ()
        items: list[Item] = []
        last_end = 0
        for m in _MARK.finditer(text):
            mark, start = m.group(), m.start()
            if start < last_end:
                continue  # the 元 of ¥100元 or 人民币100元
            item = _prefixed_at(text, start) if mark in _PREFIX_MARKS else None
            if item is None and mark not in _PREFIX_ONLY:
                item = _suffixed_at(text, start, mark)
            if item is not None:
                items.append(item)
                last_end = item.end
        return non_overlapping(items)

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
