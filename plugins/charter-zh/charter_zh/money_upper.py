"""``money_upper``: upper-case financial amounts (大写金额) such as ``壹万贰仟叁佰肆拾伍元陆角``.

Matched: an integer part of 零壹贰叁肆伍陆柒捌玖拾佰仟万亿 (and the traditional 貳參陸萬億圓)
followed by 元/圆, then optional 角 and 分 and an optional 整/正; or 角/分 alone (``伍角``,
``伍角陆分``). A leading ``人民币`` is part of the item. The integer part goes through
``cn2an.cn2an(..., "strict")`` (strict, unlike "normal", rejects digit-by-digit runs such as
``壹壹``); 角 and 分 are computed here, so the value is exact.

Deliberately not matched:

* lower-case numerals (``一百元``, ``三块``): they are not 大写 and ``money`` leaves them out too;
* a run without 元/角/分 (``壹万贰仟``) — it is a number, not an amount;
* runs glued to Arabic digits or lower-case numerals (``1万贰仟元``), and runs that start with a
  unit character (``万元`` in ``1.2万元``);
* malformed runs cn2an rejects (``壹壹元``, ``壹佰拾元``);
* 角/分 without 元 after a CJK word (``队伍分成``, ``伍分钟``): 伍 and 陆 occur in ordinary words,
  so a bare ``伍分`` counts only at the start, after punctuation, or after words such as 大写/金额.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import DIGITS, cn2an_value, is_cjk
from charter_zh.rmb import canonical_value

_DIGIT_CHARS = "零壹贰叁肆伍陆柒捌玖貳參陸"
_RUN_CHARS = _DIGIT_CHARS + "拾佰仟万亿萬億"
_NONZERO = "壹贰叁肆伍陆柒捌玖貳參陸"
_DIGIT_VALUE = {
    "零": 0, "壹": 1, "贰": 2, "貳": 2, "叁": 3, "參": 3, "肆": 4,
    "伍": 5, "陆": 6, "陸": 6, "柒": 7, "捌": 8, "玖": 9,
}  # fmt: skip
_TO_SIMPLIFIED = str.maketrans({"貳": "贰", "參": "叁", "陸": "陆", "萬": "万", "億": "亿"})

# Found by one finditer (its class of first characters is scanned in C, cheaper than finding
# the units and searching back from each); a leading 人民币 is picked up by hand.
_UPPER = re.compile(
    rf"""(?P<run>[{_DIGIT_CHARS}拾][{_RUN_CHARS}]{{0,30}})
    (?:
      [元圆](?:零?(?P<jiao>[{_NONZERO}])角|)(?:零?(?P<fen>[{_NONZERO}])分|)
    | (?P<jiao_only>角)(?:零?(?P<fen2>[{_NONZERO}])分|)
    | (?P<fen_only>分)
    )
    (?:(?P<zheng>[整正])|)""",
    re.X,
)
_RMB = "人民币"
_ZERO = Decimal(0)
# Characters that, just before a run, mean the run is the tail of a longer (mixed) numeral.
_GLUE = frozenset(_RUN_CHARS + "一二三四五六七八九十百千两〇.") | DIGITS


# CJK characters after which a bare 伍角/陆分 still reads as an amount (大写：伍角, 共计伍角).
_STANDALONE_AFTER = frozenset("写计为是额付收共合价")


def _standalone_ok(text: str, start: int, end: int) -> bool:
    if text.startswith("钟", end):
        return False
    return start == 0 or not is_cjk(text[start - 1]) or text[start - 1] in _STANDALONE_AFTER


@lru_cache(maxsize=1024)
def _integer(run: str) -> tuple[int, Decimal] | None:
    """The run's value, also as a Decimal (immutable: items may share it), or None."""
    simplified = run.translate(_TO_SIMPLIFIED)
    canonical = canonical_value(simplified)  # what templates render: no need to import cn2an
    if canonical is not None:
        return canonical, Decimal(canonical)
    try:
        value = cn2an_value(simplified, "strict")
    except Exception:  # cn2an signals malformed input with assorted exception types
        return None
    return (value, Decimal(value)) if isinstance(value, int) and value >= 0 else None


# What a match is worth, by the match as written: value, decimals, whether 整/正 is written,
# and whether it is a bare 角/分 amount (which must stand alone); None when it is no amount.
Fields = tuple[Decimal, int, bool, bool]
_PARSED: dict[str, Fields | None] = {}
_UNSEEN: Fields = (_ZERO, -1, False, False)  # no cached value is this one
_MAX_CACHED = 4096


def _parse(m: re.Match[str]) -> Fields | None:
    run, jiao, fen, jiao_only, fen2, fen_only, zheng = m.groups()
    fields: Fields | None = None
    standalone = bool(jiao_only or fen_only)
    maybe: tuple[int, Decimal] | None = None
    if standalone:
        if len(run) == 1 and run in _NONZERO:
            maybe = 0, _ZERO
            jiao = run if jiao_only else None
            fen = fen2 if jiao_only else run
    else:
        maybe = _integer(run)
    if maybe is not None:
        integer, whole = maybe
        if fen:
            value = Decimal(f"{integer}.{_DIGIT_VALUE[jiao] if jiao else 0}{_DIGIT_VALUE[fen]}")
            fields = (value, 2, zheng is not None, standalone)
        elif jiao:
            fields = (Decimal(f"{integer}.{_DIGIT_VALUE[jiao]}"), 1, zheng is not None, standalone)
        else:
            fields = (whole, 0, zheng is not None, standalone)
    if len(_PARSED) >= _MAX_CACHED:
        _PARSED.clear()
    _PARSED[m.group()] = fields
    return fields


class MoneyUpperExtractor:
    """Upper-case amounts; the value is a Decimal in yuan with one digit per 角/分 written."""

    name: str = "money_upper"
    value_kind: ValueKind = "number"
    has_units: bool = True

    def extract(self, text: str) -> tuple[Item, ...]:
        if "元" not in text and "圆" not in text and "角" not in text and "分" not in text:
            return ()
        items: list[Item] = []
        parsed = _PARSED
        for m in _UPPER.finditer(text):
            written = m.group()
            fields = parsed.get(written, _UNSEEN)
            if fields is _UNSEEN:
                fields = _parse(m)
            if fields is None:
                continue
            value, decimals, whole, standalone = fields
            start, end = m.span()
            rmb = start >= 3 and text.startswith(_RMB, start - 3)
            if rmb:
                start -= 3
            elif (start > 0 and text[start - 1] in _GLUE) or (
                standalone and not _standalone_ok(text, start, end)
            ):
                continue
            attrs = {"prefix": _RMB if rmb else None, "whole": whole}
            items.append(Item(start, end, text[start:end], value, "元", decimals, attrs))
        # In order and disjoint: a 人民币 before a match is no part of the match before it.
        return tuple(items)

    def canonical(self, item: Item) -> str | None:
        """None: an upper-case amount has no other canonical spelling to rewrite it into."""
        return None
