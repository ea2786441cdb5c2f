"""What the reference skills share: the packaged JSON files and money formatting.

Amounts are exact decimal strings in the data and in the results ("12345.60"): a float would
turn 0.1 + 0.2 into 0.30000000000000004 and the finance pack's rules compare the digits and the
upper-case form of every amount to the cent.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from importlib import resources
from typing import Any

CENT = Decimal("0.01")
_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_SMALL_UNITS = ("", "拾", "佰", "仟")
_GROUP_UNITS = ("", "万", "亿", "万亿")


@cache
def load(name: str) -> Any:
    """The parsed ``data/<name>.json``; read once per process (the files never change)."""
    text = resources.files("charter_skills").joinpath("data", f"{name}.json").read_text("utf-8")
    return json.loads(text)


def money(value: str | int | float | Decimal) -> Decimal:
    """``value`` as an exact amount rounded to the cent; a float goes through its shortest
    repr, so 19.9 is 19.90 and not 19.899999999999998578."""
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def plain(amount: Decimal) -> str:
    """``12345.60``: the form results carry."""
    return f"{amount:.2f}"


def yuan(amount: Decimal) -> str:
    """``12,345.60元`` for the user (two decimals and the unit, as the price-format rule asks)."""
    return f"{amount:,.2f}元"


def _group(n: int) -> str:
    """Upper-case digits of 0 < n < 10000, with inner zeros read once (1005 is 壹仟零伍)."""
    out: list[str] = []
    zero = False
    for pos in range(3, -1, -1):
        d = n // 10**pos % 10
        if d == 0:
            zero = bool(out)
            continue
        if zero:
            out.append("零")
            zero = False
        out.append(_DIGITS[d] + _SMALL_UNITS[pos])
    return "".join(out)


def upper(amount: Decimal) -> str:
    """The amount in Chinese financial capitals (大写), as cheques and the finance pack's
    amount rule write it: 12345.60 is 壹万贰仟叁佰肆拾伍元陆角, 200000 is 贰拾万元整, a negative
    amount is prefixed 负."""
    sign = "负" if amount < 0 else ""
    cents = int((abs(amount) * 100).to_integral_value(rounding=ROUND_HALF_UP))
    whole, jiao, fen = cents // 100, cents // 10 % 10, cents % 10
    parts: list[str] = []
    groups: list[int] = []
    while whole:
        groups.append(whole % 10000)
        whole //= 10000
    pending_zero = False
    for i in range(len(groups) - 1, -1, -1):
        g = groups[i]
        if g == 0:
            pending_zero = bool(parts)
            continue
        # a gap before this group (1,0005 or 1,0000,0500) is read as one 零
        if parts and (pending_zero or g < 1000):
            parts.append("零")
        parts.append(_group(g) + _GROUP_UNITS[i])
        pending_zero = False
    head = "".join(parts)
    if not head and not jiao and not fen:
        return f"{sign}零元整"
    text = f"{head}元" if head else ""
    if not jiao and not fen:
        return f"{sign}{text}整"
    if jiao:
        text += _DIGITS[jiao] + "角"
    elif head:
        text += "零"
    if fen:
        text += _DIGITS[fen] + "分"
    return sign + text
