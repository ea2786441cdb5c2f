"""``money``: amounts written with Arabic digits and a currency marker.

Matched: ``¥1,234.50``, ``￥99``, ``1234.5元``, ``1,234.50 元``, ``1.2万元`` (12000), ``3亿元``,
``人民币100元``, ``RMB 100``, ``CNY100``, ``100块``/``100块钱`` (unit 元), and the spoken 角
(``3块5``, ``3块5毛``, ``3元5角``: 3.5); US dollars as unit ``"USD"``: ``$5``, ``US$5``,
``USD 5``, ``5美元``, ``5美金``, ``5 USD``.

Spoken amounts with a marker (``charter_zh.spoken``): lower-case and mixed numerals
(``五百块``, ``两千元``, ``三千五百元``, ``一万二千块钱``, ``2万5千元``: value 25000), and
approximate ones with ``attrs["approximate"] = True`` (``八百来块``, ``五百多块``, ``500多元``,
``两三千块``: the lower end). They have ``attrs["spoken"] = True`` and are written canonically
as two decimals and 元 (``3500.00元``; an approximate one has no canonical form).

Deliberately not matched:

* a number without a currency marker (``2024年``, ``100%``, ``3个``, ``1.2万``);
* other currencies (``100日元``, ``100港元``, ``HK$100``, ``€5``) — they are not CNY and
  naming them USD would be wrong;
* amounts in upper-case Chinese numerals (``壹佰元``, see ``money_upper``);
* Arabic digits glued to upper-case numerals (``壹佰2元``) or to ASCII letters/digits (``A100元``);
* ``块`` used as a measure word: ``3块蛋糕`` (``块`` followed by a CJK noun) is not money;
* the sign: ``-100元`` yields ``100元``; ranges like ``1-3元`` yield ``3元``;
* full-width digits (rules fold them to ASCII before they call an extractor), and numbers longer
  than 30 integer digits;
* anything inside a URL or an e-mail address (``https://x.cn/pay?amount=100元``,
  ``RMB100@bank.cn``): it is part of the address (``web.outside_links``).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from charter.contracts.rules import Item, ValueKind
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
from charter_zh.spoken import marked_amounts
from charter_zh.web import outside_links

# Optional parts are written (?:x|) rather than (?:x)?: the same matches, and cheaper in re
# (a branch, where ? on a group is a general repeat).
_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3}(?![0-9])){1,10}|[0-9]{1,30})(?:\.[0-9]{1,10}|)"
_MULT = r"万亿|千万|百万|万|千|亿"
_SUFFIX = r"元|块钱|块|美元|美金|RMB|CNY|USD"

# Matched at a prefix mark found by _marks; the groups are read in one m.groups() call.
_MARKS_ALTERNATION = r"¥|￥|\$|RMB|CNY|USD|US\$|人民币"
_PREFIXED = re.compile(
    rf"""(?P<mark>{_MARKS_ALTERNATION})(?P<gap>[ \u00a0]?)
    (?P<num>{_NUMBER})(?![0-9]|[.,][0-9])
    (?:(?P<mult>{_MULT})|)
    (?:(?P<sp>[ ]?)(?P<suffix>{_SUFFIX})|)""",
    re.X,
)
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
# a currency word, and what a spoken amount before it is written with: the amount is spoken
# (三千五百元, 八百来块, 500多元) when the run holds a lower-case numeral or an approximation;
# 1.2万元 is Arabic and 伍万元 upper-case, both read elsewhere
_CURRENCY_WORD = re.compile("块|元|美[元金]")
_SPOKEN_RUN = frozenset("0123456789.０１２３４５６７８９〇零一二两三四五六七八九十百千万亿来多余几")
_SPOKEN_MARK = frozenset("〇一二两三四五六七八九十百千来多余几")


def _may_be_spoken(text: str) -> bool:
    """Whether a spoken amount may stand before a currency word of ``text``: a cheap look
    before the full reading, which most texts (Arabic and upper-case amounts only) skip."""
    for m in _CURRENCY_WORD.finditer(text):
        i = m.start()
        while i > 0 and text[i - 1] in _SPOKEN_RUN:
            i -= 1
        if any(c in _SPOKEN_MARK for c in text[i : m.start()]):
            return True
    return False


def _start(item: Item) -> int:
    return item.start


def _prefix_pattern(mark: str) -> re.Pattern[str]:
    """``_PREFIXED`` for one mark, led by it: ``re`` skips to a literal first character fast."""
    return re.compile(_PREFIXED.pattern.replace(_MARKS_ALTERNATION, re.escape(mark), 1), re.X)


# Prefix-only marks whose match cannot hold the mark again: searching for their pattern finds
# their amounts, the same matches _PREFIXED.match gives at each mark (a failed one only sets
# ``consumed`` past itself, where no other mark starts). With a character tested first (币: 人
# is common, and "人民币" in text is a slow substring search).
_SCANNED = tuple((mark[-1], mark, _prefix_pattern(mark)) for mark in ("¥", "￥", "$", "人民币"))
_YEN = _SCANNED[0][2]
# Marks looked up one by one: the codes (RMB100RMB200 must try the second RMB as a prefix) and
# US$ (whose $ the $ scan also finds: the 元 of 美元 rule skips it, as before).
_LOOKED_UP = (("R", ("RMB",)), ("C", ("CNY",)), ("U", ("USD", "US$")))
# A 元/块/美元/美金 can end an amount only after a digit, maybe a multiplier, maybe a space:
# the lookbehinds keep the rest (the 元 of 壹仟元, of 万元整) out of Python entirely.
_DIGIT_BEFORE = (
    r"(?:(?<=[0-9]{u})|(?<=[0-9] {u})|(?<=[0-9][万千亿]{u})|(?<=[0-9][万千亿] {u})"
    r"|(?<=[0-9][万千百亿][万亿]{u})|(?<=[0-9][万千百亿][万亿] {u}))"
)
_YUAN = re.compile("元" + _DIGIT_BEFORE.format(u="元"))
_SUFFIX_SCANS = (
    ("元", _YUAN),
    ("块", re.compile("块" + _DIGIT_BEFORE.format(u="块"))),
    ("美", re.compile("美" + _DIGIT_BEFORE.format(u="美") + "[元金]")),
)

Mark = tuple[int, str, "re.Match[str] | None"]


def _search_all(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """What finditer gives (the matches are never empty), found by a loop of searches: cheaper
    than finditer's scanner object on texts with a match or two."""
    found = []
    m = pattern.search(text)
    while m is not None:
        found.append(m)
        m = pattern.search(text, m.end())
    return found


def _marks(text: str, scanned: list[re.Pattern[str]], others: list[Mark]) -> list[Mark]:
    """Every currency mark that may start or end an amount, as (start, mark, prefix match or
    None), in order: what finditer over the alternation of the marks gives, less the marks that
    cannot start or end an amount (failed prefixes, a 元 after a word or an upper-case numeral),
    which would only be skipped later."""
    found = others
    for pattern in scanned:
        found += [(m.start(), m.group("mark"), m) for m in _search_all(pattern, text)]
    if len(found) > 1:
        found.sort(key=_first)
    return found


def _other_marks(text: str) -> list[Mark]:
    """The marks _SCANNED leaves out, in no particular order."""
    found: list[Mark] = []
    for lead, marks in _LOOKED_UP:
        if lead not in text:
            continue
        pos = text.find(lead)
        while pos != -1:
            for mark in marks:
                if text.startswith(mark, pos):
                    found.append((pos, mark, None))
                    break
            pos = text.find(lead, pos + 1)
    for lead, pattern in _SUFFIX_SCANS:
        if lead in text:
            m = pattern.search(text)
            while m is not None:
                found.append((m.start(), m.group(), None))
                m = pattern.search(text, m.end())
    return found


def _any_marks(text: str) -> tuple[Item, ...]:
    """The amounts of a text with any marks: each mark in order, prefix first."""
    scanned = [pattern for lead, mark, pattern in _SCANNED if lead in text and mark in text]
    items: list[Item] = []
    last_end = consumed = 0
    for start, mark, found in _marks(text, scanned, _other_marks(text)):
        if start < consumed:
            continue  # inside the previous mark: the 元 of 美元
        consumed = start + len(mark)
        if start < last_end:
            continue  # the 元 of ¥100元 or 人民币100元
        if found is None and mark in _PREFIX_MARKS:
            found = _PREFIXED.match(text, start)
        item = None if found is None else _prefixed(text, found)
        if item is None and mark not in _PREFIX_ONLY:
            item = _suffixed_at(text, start, mark)
        if item is not None:
            items.append(item)
            last_end = item.end
    if not items:
        return ()
    return non_overlapping(outside_links(text, items))


def _first(mark: Mark) -> int:
    return mark[0]


def _kuai_is_money(text: str, after: int) -> bool:
    """块 is money at the end, before a particle or 钱, or before a kind of money (闲钱,
    零花钱, 私房钱: 钱 within three characters); else a measure word (3块蛋糕)."""
    if after >= len(text):
        return True
    ch = text[after]
    return not is_cjk(ch) or ch in _KUAI_FOLLOWERS or "钱" in text[after : after + 3]


def _strip_fraction_zeros(value: Decimal) -> Decimal:
    """12000.0 -> 12000 and 12345.60 -> 12345.6, never the exponent form normalize() gives."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite: built from digits
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    return Decimal((sign, digits, exponent))


Fields = tuple[Decimal, str, int, dict[str, Any]]
# Value, unit, decimals and attrs of an amount, by the amount as written (they depend on nothing
# else: a prefixed amount starts with its mark, a suffixed one with a digit). Amounts repeat
# across texts, and building a Decimal costs more than the rest of an item.
_FIELDS: dict[str, Fields] = {}
_MAX_CACHED = 4096


def _fields(mark: str, prefix: str, num: str, mult: str, suffix: str) -> Fields:
    value = Decimal(num.replace(",", "")) if "," in num else Decimal(num)
    dot = num.find(".")
    if mult:
        value = EXACT.multiply(value, _MULTIPLIERS[mult])
        if dot >= 0:  # 50万 is 500000 already; 1.20万 is 12000.0 and becomes 12000
            value = _strip_fraction_zeros(value)
    return (
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


def _make_item(
    text: str, start: int, end: int, mark: str, prefix: str, num: str, mult: str, suffix: str
) -> Item:
    """``mark`` is the bare prefix mark (``¥``, ``RMB``…) or "", ``prefix`` the mark as written
    with its space."""
    written = text[start:end]
    fields = _FIELDS.get(written)
    if fields is None:
        if len(_FIELDS) >= _MAX_CACHED:
            _FIELDS.clear()
        fields = _FIELDS[written] = _fields(mark, prefix, num, mult, suffix)
    value, unit, decimals, attrs = fields
    return Item(start, end, written, value, unit, decimals, attrs.copy())


# By the whole match of a prefix pattern, when its suffix needs no look at what follows:
# the fields, and whether the amount starts (ends) with an ASCII letter or digit, so the
# character before (after) it must be checked for glue.
Hit = tuple[Decimal, str, int, dict[str, Any], bool, bool]
_HITS: dict[str, Hit] = {}
_CHECKED_SUFFIXES = _ASCII_CODES | {"块"}


def _prefixed(text: str, m: re.Match[str]) -> Item | None:
    """The amount of a match of _PREFIXED (or of a _SCANNED pattern), or None."""
    written = m.group()
    hit = _HITS.get(written)
    start, end = m.span()
    if hit is None:
        mark, gap, num, mult, _, suffix = m.groups()
        if suffix in _CHECKED_SUFFIXES:
            return _prefixed_checked(text, m)
        if len(_HITS) >= _MAX_CACHED:
            _HITS.clear()
        fields = _fields(mark, mark + gap, num, mult or "", suffix or "")
        hit = _HITS[written] = (*fields, mark[0] in "$RCU", written[-1] in ASCII_ALNUM)
    value, unit, decimals, attrs, glue_before, glue_after = hit
    if glue_before and start and text[start - 1] in ASCII_ALNUM:
        return None  # HK$5, XRMB5
    if glue_after and end < len(text) and text[end] in ASCII_ALNUM:
        return None  # glued after: ¥100abc
    return Item(start, end, written, value, unit, decimals, attrs.copy())


def _prefixed_checked(text: str, m: re.Match[str]) -> Item | None:
    """_prefixed when the suffix is a code or 块: what follows it may take it off the amount."""
    mark, gap, num, mult, _, suffix = m.groups()
    start, end = m.span()
    if start and mark[0] in "$RCU" and text[start - 1] in ASCII_ALNUM:
        return None  # HK$5, XRMB5
    if suffix is not None and (
        (suffix in _ASCII_CODES and glued_after(text, end))
        or (suffix == "块" and not _kuai_is_money(text, end))
    ):
        suffix, end = None, m.end("mult") if mult else m.end("num")
    if end < len(text) and text[end] in ASCII_ALNUM and text[end - 1] in ASCII_ALNUM:
        return None  # glued after: ¥100abc
    return _make_item(text, start, end, mark, mark + gap, num, mult or "", suffix or "")


# the 角 of a spoken amount: 3块5 / 3块5毛 / 3元5角 (元 needs its 角: 3元5 is no amount); the
# digit is not followed by a unit of its own (3块5斤 is three yuan for five jin)
_JIAO = re.compile(r"([1-9])(毛|角|)(?![0-9])")
_JIAO_FOLLOWERS = frozenset("的了吧呢啊呀吗哦嘛就都也还一")


def _jiao(text: str, after: int, mark: str) -> re.Match[str] | None:
    m = _JIAO.match(text, after)
    if m is None or (mark == "元" and not m[2]):
        return None
    nxt = text[m.end()] if m.end() < len(text) else ""
    if m[2] or not nxt or not is_cjk(nxt) or nxt in _JIAO_FOLLOWERS:
        return m
    return None


def _with_jiao(text: str, start: int, num: str, m: re.Match[str]) -> Item:
    written = text[start : m.end()]
    value = Decimal(num) + Decimal(m[1]) / 10
    attrs = {"symbol": None, "prefix": None, "suffix": text[start + len(num) : m.end()]}
    return Item(start, m.end(), written, value, "元", 1, {**attrs, "grouped": False, "jiao": True})


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
    num = text[start:pos]
    if suffix in ("块", "元") and end < len(text) and text[end] in DIGITS:
        jiao = _jiao(text, end, mark) if not mult and num.isdigit() and pos == mark_start else None
        if jiao is not None:
            return _with_jiao(text, start, num, jiao)
        if suffix == "块" and (mult or text[end + 1 : end + 2] in DIGITS):
            return None  # 3块50, 1万块5: spoken amounts too loose to read a value from
    return _make_item(text, start, end, "", "", num, mult, suffix)


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
        items = self._arabic(text)
        if ("元" in text or "块" in text or "美" in text) and _may_be_spoken(text):
            spoken = marked_amounts(text)
            if spoken:
                return non_overlapping(outside_links(text, sorted([*items, *spoken], key=_start)))
        return items

    def _arabic(self, text: str) -> tuple[Item, ...]:
        """The amounts written with Arabic digits (below, the spoken ones are added)."""
        if (
            "R" in text
            or "C" in text
            or "U" in text
            or "$" in text
            or "￥" in text
            or "块" in text
            or "美" in text
            or ("币" in text and "人民币" in text)
            or ("元" in text and _YUAN.search(text) is not None)
        ):
            return _any_marks(text)
        if "¥" not in text:
            return ()
        # The common case: the ¥ amounts are the only marks (元 only in upper-case amounts or
        # after words), and disjoint, so each one's amount is the answer, in order.
        # _prefixed, inlined for amounts seen before.
        items: list[Item] = []
        hits, size = _HITS, len(text)
        m = _YEN.search(text)
        while m is not None:
            written = m.group()
            hit = hits.get(written)
            if hit is None:
                item = _prefixed(text, m)
                if item is not None:
                    items.append(item)
            else:
                start, end = m.span()
                value, unit, decimals, attrs, glue_before, glue_after = hit
                if not (
                    (glue_before and start and text[start - 1] in ASCII_ALNUM)
                    or (glue_after and end < size and text[end] in ASCII_ALNUM)
                ):
                    items.append(Item(start, end, written, value, unit, decimals, attrs.copy()))
            m = _YEN.search(text, m.end())
        if not items:
            return ()
        return tuple(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """Two decimals, rounded half-up to the fen, in the writer's style; 万/亿 expanded."""
        found = self.extract(item.text)
        if len(found) != 1 or (found[0].start, found[0].end) != (0, len(item.text)):
            return None
        attrs = found[0].attrs
        number = _format(found[0].value, bool(attrs["grouped"]))
        if number is None:
            return None
        if attrs.get("jiao"):  # 3块5 -> 3.50元
            return f"{number}元"
        if attrs.get("spoken"):  # 三千五百元 -> 3500.00元; 八百来块: no amount to write
            if attrs.get("approximate"):
                return None
            return f"{number}美元" if found[0].unit == "USD" else f"{number}元"
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
