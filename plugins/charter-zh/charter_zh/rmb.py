"""Upper-case financial numerals (大写金额): writing ``5000.00`` as ``伍仟元整``, and reading
back what is written that way.

Exactly what ``cn2an.an2cn(f"{amount:.2f}", "rmb")`` writes, and the test compares the two over
every kind of amount. Why not call cn2an here: importing it (with ``proces``, which it imports)
takes about 110 ms, and ``charter validate`` renders the templates of a pack with sample values,
so every validate of a pack with an ``|amount`` template paid it. cn2an still reads Chinese
numerals written any other way (``money_upper`` falls back on it); ``canonical_value`` reads
only what ``integer_upper`` writes, which is what templates render and rules then check.

The rules are cn2an's: a 零 for each run of zeros inside a group of four digits and between
groups, none before 万/亿 or at the end, none between 万/亿 and a following 仟; then 元 and 角/分,
``整`` when there is no 角 or 分, ``零`` before 分 when there is no 角, and no ``零元`` before
an amount under one yuan.
"""

from __future__ import annotations

import re
from decimal import Decimal

_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_UNITS = ("", *"拾佰仟万拾佰仟亿拾佰仟万拾佰仟")  # by place, from the ones (which has none)
MAX_DIGITS = len(_UNITS)  # integer digits that can be written
_NO_ZERO_BEFORE_THOUSANDS = re.compile(f"([万亿])零([{_DIGITS[1:]}]仟)")


def integer_upper(digits: str) -> str:
    """The integer ``digits`` (no sign) in upper-case numerals: ``10010`` → ``壹万零壹拾``."""
    digits = str(int(digits))
    if len(digits) > MAX_DIGITS:
        raise ValueError(f"at most {MAX_DIGITS} digits can be written, not {len(digits)}")
    out = ""
    for i, d in enumerate(digits):
        place = len(digits) - i - 1
        if d != "0":
            out += _DIGITS[int(d)] + _UNITS[place]
            continue
        if place % 4 == 0:
            out += "零" + _UNITS[place]
        if i > 0 and out[-1] != "零":
            out += "零"
    out = out.replace("零零", "零").replace("零万", "万").replace("零亿", "亿")
    out = out.replace("亿万", "亿").strip("零")
    return _NO_ZERO_BEFORE_THOUSANDS.sub(r"\1\2", out) or "零"


def rmb_upper(amount: Decimal) -> str:
    """``amount`` rounded to fen, as a cheque writes it: ``1005.05`` → ``壹仟零伍元零伍分``."""
    text = f"{amount:.2f}"
    sign = "负" if text.startswith("-") else ""
    whole, fraction = text.lstrip("-").split(".")
    yuan = integer_upper(whole)
    jiao, fen = (_DIGITS[int(d)] for d in fraction)
    if jiao == fen == "零":
        return f"{sign}{yuan}元整"
    head = "" if yuan == "零" else f"{yuan}元"
    if jiao == "零":
        return f"{sign}{head}{'零' if head else ''}{fen}分"
    return f"{sign}{head}{jiao}角" + ("" if fen == "零" else f"{fen}分")


_SMALL_UNITS = {"拾": 10, "佰": 100, "仟": 1000}


def canonical_value(run: str) -> int | None:
    """The value of ``run`` when it is written exactly as ``integer_upper`` writes it (and as
    cn2an writes it), else None: then only a full parser (cn2an's strict mode) may decide."""
    total = section = digit = 0
    for ch in run:
        if (d := _DIGITS.find(ch)) >= 0:
            digit = d
        elif ch in _SMALL_UNITS:
            section += digit * _SMALL_UNITS[ch]
            digit = 0
        elif ch == "万":
            total += (section + digit) * 10_000
            section = digit = 0
        elif ch == "亿":
            total = (total + section + digit) * 100_000_000
            section = digit = 0
        else:
            return None
    value = total + section + digit
    # a loose reading, kept only when writing it back gives the very same characters
    if value >= 10**MAX_DIGITS or integer_upper(str(value)) != run:
        return None
    return value
