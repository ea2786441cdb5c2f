"""What the reference skills share: the packaged JSON files and money formatting.

Amounts are exact decimal strings in the data and in the results ("12345.60"): a float would
turn 0.1 + 0.2 into 0.30000000000000004 and the finance pack's rules compare the digits and the
upper-case form of every amount to the cent.

The upper-case form (大写) is written by ``cn2an``, as charter-zh's ``money_upper`` and
``amount`` formatters write it, so a skill's summary and a reply template that formats the
same amount agree to the character (``¥5,000.00（伍仟元整）``).
"""

from __future__ import annotations

import json
import threading
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from importlib import resources
from typing import Any

from charter.contracts.skills import SkillContext

CENT = Decimal("0.01")


@cache
def load(name: str) -> Any:
    """The parsed ``data/<name>.json``; read once per process (the files never change)."""
    text = resources.files("charter_skills").joinpath("data", f"{name}.json").read_text("utf-8")
    return json.loads(text)


def day_of(context: SkillContext | None, demo_day: str) -> str:
    """The day a skill states and compares dates against (YYYY-MM-DD): the turn's day when its
    clock was set (``charter chat --now``, a conversation test's ``now:`` or its default, a skill
    case's ``now:``, the Agent's ``clock=``), else the demo data's ``as_of`` — on the wall clock
    every demo order would be long past its return window."""
    if context is not None and context.clock_set:
        return context.today.isoformat()
    return demo_day


class Serial:
    """Numbers ``<prefix>-<yyyymmdd>-<nnnn>`` for what an executing skill did (a transfer, an
    invoice, an after-sales request): counted per day from 0001, per instance and thread-safe,
    as ``AppointmentBook`` counts its bookings. A fresh instance gives the same numbers for the
    same calls (tests pin them), and two calls of one process never share a number."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def take(self, day: str) -> str:
        """The next number of ``day`` (YYYY-MM-DD)."""
        with self._lock:
            n = self._count.get(day, 0) + 1
            self._count[day] = n
        return f"{self.prefix}-{day.replace('-', '')}-{n:04d}"


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


def both(amount: Decimal) -> str:
    """``¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）``: an amount as the finance pack's rules want it
    said, the digits and the capitals together (charter-zh's ``amount`` formatter's form)."""
    digits = f"¥{amount:,.2f}" if amount >= 0 else f"-¥{-amount:,.2f}"
    return f"{digits}（{upper(amount)}）"


def upper(amount: Decimal) -> str:
    """The amount in Chinese financial capitals (大写), as cheques and the finance pack's
    amount rule write it: 12345.60 is 壹万贰仟叁佰肆拾伍元陆角, 200000 is 贰拾万元整, a negative
    amount is prefixed 负. Written by ``cn2an`` (charter-zh's formatters' form), which
    writes up to 16 integer digits and raises ValueError beyond."""
    import cn2an  # on first use: importing it takes about 110 ms

    return str(cn2an.an2cn(f"{amount:.2f}", "rmb"))
