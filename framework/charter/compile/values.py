"""The values of a parameter mapping's ``set:`` (``learning`` compile stage), read once when the
pack compiles: ``current_<year|quarter|month|day>`` optionally followed by ``+ N`` or ``- N``
(spaces optional, N a whole number), evaluated on the turn's date by ``ValueExpr.evaluate``; any
other YAML value is a constant.

A string counts as an expression when it starts with a word beginning with ``current`` or close
to one of the four names (``curent_year``); ``year - 1``, ``SKU-100`` or 上半年 are constants. An
expression that does not read raises ``ValueSyntaxError`` with the span of the bad token, which
the stage reports as CH342 with the caret there.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from charter.compile.specs import learn as L
from charter.diagnostics import did_you_mean

NAMES = tuple(f"current_{unit}" for unit in L.UNITS)
VALUE_HINT = (
    "write current_year, current_quarter, current_month or current_day, optionally followed by "
    "+ N or - N (current_year - 1), or a constant"
)
_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>[0-9]+(?:\.[0-9]*)?)|(?P<op>[+-])|(?P<other>\S))"
)
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")
# a number as the planner reads a number slot: digits, thousands commas, a decimal point
_NUMERIC = re.compile(r"\s*[+-]?(?:[0-9][0-9,]*(?:\.[0-9]*)?|\.[0-9]+)\s*")


class ValueSyntaxError(Exception):
    """A value that starts like ``current_<unit>`` but does not read as one."""

    def __init__(self, message: str, start: int, end: int, hint: str = VALUE_HINT) -> None:
        super().__init__(message)
        self.message, self.start, self.end, self.hint = message, start, end, hint


def is_expression(text: str) -> bool:
    """Whether a string value is meant as ``current_<unit> [+|- N]`` rather than a constant:
    it starts with a word beginning with ``current`` or close to one of the names."""
    m = _NAME.match(text)
    if m is None:
        return False
    word = m[1].lower()
    return word.startswith("current") or bool(difflib.get_close_matches(word, NAMES, 1, 0.75))


def _closest(name: str) -> str:
    """``current_yaer`` -> current_year; ``current_week`` is no typo: every name there is."""
    word = name.lower()
    if word.startswith("current_"):
        close = difflib.get_close_matches(word.removeprefix("current_"), L.UNITS, 1, 0.6)
        return f"did you mean 'current_{close[0]}'?" if close else did_you_mean("", NAMES)
    return did_you_mean(word, NAMES) or VALUE_HINT


def parse_value(raw: Any) -> L.ValueExpr:
    """A mapping's value: ``current_<unit>`` optionally ``+ N`` / ``- N`` (spaces optional),
    else the YAML constant as it is. Raises ``ValueSyntaxError`` with the bad token's span."""
    if not isinstance(raw, str) or not is_expression(raw):
        return L.ValueExpr(constant=raw)
    tokens = []
    pos = 0
    while pos < len(raw) and raw[pos:].strip():
        m = _TOKEN.match(raw, pos)
        assert m is not None and m.lastgroup is not None  # `other` takes any non-space
        tokens.append((m.lastgroup, m[m.lastgroup], m.start(m.lastgroup), m.end()))
        pos = m.end()
    _, name, start, end = tokens[0]
    unit = next((u for u in L.UNITS if f"current_{u}" == name), None)
    if unit is None:
        raise ValueSyntaxError(f"unknown name '{name}'", start, end, _closest(name))
    if len(tokens) == 1:
        return L.ValueExpr(unit=unit)
    kind, op, start, end = tokens[1]
    if kind != "op":
        raise ValueSyntaxError(f"expected + or - after '{name}', not '{op}'", start, end)
    whole = f"write a whole number of {unit}s: {name} {op} 1"
    if len(tokens) == 2:
        at = len(raw.rstrip())
        raise ValueSyntaxError(f"expected a whole number after '{op}'", at, at + 1, whole)
    kind, num, start, end = tokens[2]
    if kind != "num":
        raise ValueSyntaxError(
            f"expected a whole number after '{op}', not '{num}'", start, end, whole
        )
    if not num.isdigit():
        raise ValueSyntaxError(f"the offset must be a whole number, not '{num}'", start, end, whole)
    if len(tokens) > 3:
        _, extra, start, _ = tokens[3]
        shown = raw[:start].strip()
        raise ValueSyntaxError(f"unexpected '{extra}' after '{shown}'", start, len(raw.rstrip()))
    return L.ValueExpr(unit=unit, offset=int(num) if op == "+" else -int(num))


def is_numeric(expr: L.ValueExpr) -> bool:
    """Whether a number slot can hold the value."""
    value = expr.constant
    if expr.unit is not None or (isinstance(value, float | int) and not isinstance(value, bool)):
        return True
    return isinstance(value, str) and _NUMERIC.fullmatch(value) is not None
