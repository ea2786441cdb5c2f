"""What an entity of a user's words means at the time they were said: the reading ``charter
learn`` generalises with (``charter.learn.generalise``) and the contradiction trigger uses to
tell a value the input says from one the model made up (``explains``).

A time expression is taken apart into year, quarter, month and day; whether a part depends on
the date is not read off the plugin's step names: the expression is resolved again as if said a
day, and one to twelve months, earlier and later. A part that moves with the date by a fixed N
is relative (``current_<unit> + N``), one that never moves a constant, one that moves by an N
that changes (the year 上季度 means) cannot be written. Any extractor whose values have
``resolve(reference)`` (a span with ``start`` and ``granularity``) is read so; dates give their
parts as constants; other values are compared as they are.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from charter.compile.specs.goals import IntentSpec
from charter.compile.specs.learn import Unit, ValueExpr
from charter.contracts.rules import Extractor, Item
from charter.learn.log import Evidence

# the parts of a resolved span a slot can take, by the span's granularity (else _DAY_PARTS)
_YEAR: tuple[Unit, ...] = ("year",)
_PARTS = {"year": _YEAR, "half": _YEAR, "quarter": (*_YEAR, "quarter")}
_PARTS |= dict.fromkeys(("month", "xun", "week", "weekend"), (*_YEAR, "month"))
_DAY_PARTS: tuple[Unit, ...] = ("year", "month", "day")
# said a month, two... a year earlier or later, and a day either side
_PROBE_MONTHS = tuple(n for n in range(-12, 13) if n)
_DAY = timedelta(days=1)
# a part of what an entity means: (year, 2025, current_year - 1); (None, 3000, 3000) when the
# value is not a date; (year, 2026, None) when no current_year + N says it wherever in the year
# the words are said (the year of 上季度 said in the first quarter is the year before)
_Part = tuple[Unit | None, Any, ValueExpr | None]


@dataclass(frozen=True)
class Entity:
    extractor: str
    item: Item
    parts: tuple[_Part, ...]
    resolved: bool  # a time expression, read at the time it was said


def entities(
    extractors: Mapping[str, Extractor], intent: IntentSpec, said: Evidence
) -> list[Entity]:
    """What the extractors the intent's slots may take values from find in the input."""
    named = {s.extractor for s in intent.slots}
    names = sorted(extractors) if None in named else sorted(n for n in named if n)
    # the planner's calendar, on which the patches are read: the local date and time
    local = said.at.astimezone().replace(tzinfo=None) if said.at.tzinfo else said.at
    found: list[Entity] = []
    for name in names:
        if name not in extractors:
            continue
        for item in extractors[name].extract(said.content):
            resolved = callable(getattr(item.value, "resolve", None))
            meant = parts(item.value, local)
            if meant:
                found.append(Entity(name, item, meant, resolved))
    return sorted(found, key=lambda e: (e.item.start, not e.resolved, e.extractor))


def explain(
    entity: Entity, intent: IntentSpec, arg: str, slot: str | None, value: Any
) -> ValueExpr | Unit | None:
    """How ``entity`` writes the argument's value, or None when it does not explain it: the
    value must be what the entity meant, taken from a slot that reads this extractor (or
    none), and a part of a date must be what the slot's or the argument's name says. The
    part's unit when the entity means the value but no ``current_<unit> + N`` writes it."""
    spec = intent.slot(slot) if slot is not None else None
    if spec is None or spec.extractor not in (None, entity.extractor):
        return None
    want = normal(value)
    for unit, now, written in entity.parts:
        if normal(now) != want:
            continue
        if unit is None:
            return ValueExpr(constant=value)
        if _names_unit(arg, unit) or _names_unit(slot or "", unit):
            return unit if written is None else written
    return None


def _names_unit(name: str, unit: Unit) -> bool:
    """Whether a slot's or an argument's name says it holds this part of a date: ``year``,
    ``statement_year``, ``fiscal-year``."""
    return unit in re.split(r"[^a-z]+", name.lower())


# ---- what an entity means at the time it was said -----------------------------------------


def parts(value: Any, at: datetime) -> tuple[_Part, ...]:
    if callable(getattr(value, "resolve", None)):
        return _time_parts(value.resolve, at)
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        value = (value.year, value.month, value.day)
    if isinstance(value, tuple) and len(value) == 3:  # a (partial) date: (year, month, day)
        return tuple(
            (unit, n, ValueExpr(constant=n))
            for unit, n in zip(_DAY_PARTS, value, strict=True)
            if isinstance(n, int)
        )
    if isinstance(value, str | int | float | Decimal) and not isinstance(value, bool):
        return ((None, value, ValueExpr(constant=value)),)
    return ()


def _time_parts(resolve: Callable[[datetime], Any], at: datetime) -> tuple[_Part, ...]:
    """The year, quarter, month and day the expression means, said at ``at``: a constant when
    it means the same said at any of the probes, ``current_<unit> + N`` when it moves with
    them by the same N (counted across year ends), None when N changes."""
    try:
        span = resolve(at)
        refs = [_shift(at, months=n) for n in _PROBE_MONTHS] + [at - _DAY, at + _DAY]
        probes = [(ref, resolve(ref)) for ref in refs]
    except (ValueError, OverflowError):
        return ()
    out: list[_Part] = []
    for unit in _PARTS.get(span.granularity, _DAY_PARTS):
        now = _part(span.start, unit)
        offset = _index(span.start, unit) - _index(at, unit)
        expr: ValueExpr | None = ValueExpr(unit=unit, offset=offset)
        if all(_part(p.start, unit) == now for _, p in probes):
            expr = ValueExpr(constant=now)
        elif any(_index(p.start, unit) - _index(ref, unit) != offset for ref, p in probes):
            expr = None
        out.append((unit, now, expr))
    return tuple(out)


def _part(moment: datetime, unit: Unit) -> int:
    if unit == "year":
        return moment.year
    if unit == "quarter":
        return (moment.month - 1) // 3 + 1
    return moment.month if unit == "month" else moment.day


def _index(moment: datetime, unit: Unit) -> int:
    """A count of units since year 0, so that an offset crosses year ends (上个月 said in
    January is ``current_month - 1``, like in any other month)."""
    if unit == "year":
        return moment.year
    if unit == "quarter":
        return moment.year * 4 + (moment.month - 1) // 3
    if unit == "month":
        return moment.year * 12 + moment.month - 1
    return moment.toordinal()


def _shift(moment: datetime, *, months: int) -> datetime:
    year, month = divmod(moment.year * 12 + moment.month - 1 + months, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def normal(value: Any) -> Any:
    """Values compared as numbers when they read as one (2025, "2025", Decimal("2025"))."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        return value
    try:
        number = Decimal(str(value).replace(",", "").strip())
    except InvalidOperation:
        return str(value).strip()
    return number.normalize() if number.is_finite() else str(value)


def explains(
    extractors: Mapping[str, Extractor],
    intent: IntentSpec,
    slot: str,
    value: Any,
    text: str,
    at: datetime,
) -> bool:
    """Whether an entity the extractors find in ``text`` (said at ``at``) means ``value`` for
    the intent's ``slot``, by the same reading ``charter learn`` uses: 前年一季度 explains
    year 2024 said in 2026; 第1季度 does not explain year 2025 (it means this year's)."""
    for entity in entities(extractors, intent, Evidence("user_input", at, text)):
        if explain(entity, intent, slot, slot, value) is not None:
            return True
    return False
