"""Small total functions the compiled closures are made of: comparison, regexes, excuses."""

from __future__ import annotations

import dataclasses
import math
import operator
import unicodedata
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import regex

from charter.contracts.rules import Item, as_decimal
from charter.dsl import ast as A
from charter.text.patterns import BoundedPattern, bounded

_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def regex_flags(flags: str) -> int:
    table = {
        "i": regex.IGNORECASE,
        "m": regex.MULTILINE,
        "s": regex.DOTALL,
        "x": regex.VERBOSE,
        "a": regex.ASCII,
        "u": 0,
    }
    out = regex.V0
    for f in flags:
        out |= table[f]
    return out


def compile_regex(node: A.Regex) -> BoundedPattern:
    """A DSL ``/pattern/flags``, its searches bounded in time (``charter.text.patterns``)."""
    return bounded(node.pattern, regex_flags(node.flags))


def normalise(value: Any) -> Any:
    """Context values as the DSL sees them: numbers are Decimals, the rest as JSON gives them.

    A float is read as written (``0.72`` is ``Decimal("0.72")``, not the binary fraction), and
    NaN counts as a missing value: it is neither equal to nor ordered with anything.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str | Decimal):
        return None if isinstance(value, Decimal) and value.is_nan() else value
    if isinstance(value, int):
        return Decimal(value)  # not via str(): that refuses ints of more than 4300 digits
    if isinstance(value, float):
        return None if math.isnan(value) else Decimal(repr(value))
    return value


def compare(op: str, left: Any, right: Any) -> bool:
    """Total comparison: a missing value or mismatched types never raise."""
    if left is None or right is None:
        # a missing value equals only another missing value, and is never ordered
        same = left is None and right is None
        return same if op == "==" else (not same) if op == "!=" else False
    if isinstance(left, bool) or isinstance(right, bool):
        if not (isinstance(left, bool) and isinstance(right, bool)):
            return op == "!="
        return op in ("==", "!=") and _CMP[op](left, right)
    if isinstance(left, Decimal) != isinstance(right, Decimal):
        left_n, right_n = as_decimal(left), as_decimal(right)
        if left_n is None or right_n is None:
            return op == "!="
        left, right = left_n, right_n
    try:
        return _CMP[op](left, right)
    except (TypeError, ArithmeticError):  # unorderable types, a NaN from a string
        return op == "!="


def _excuser(unless: tuple[A.Unless, ...]) -> Callable[[str, tuple[int, int]], bool] | None:
    """``unless preceded by [..] within N`` / ``unless followed by``: is an occurrence excused?"""
    if not unless:
        return None
    clauses = tuple((u.side, u.terms.values, u.within) for u in unless)

    def excused(text: str, occ: tuple[int, int]) -> bool:
        start, end = occ
        for side, terms, within in clauses:
            if side == "preceded":
                for k in range(within + 1):
                    if start - k >= 0 and text.endswith(terms, 0, start - k):
                        return True
            else:
                for k in range(within + 1):
                    if text.startswith(terms, end + k):
                        return True
        return False

    return excused


def literals_of(node: object) -> set[str]:
    """Literals the automaton must know: contained terms and adjacency targets."""
    out: set[str] = set()
    for n in A.walk(node):
        if isinstance(n, A.Contains):
            out.update(n.terms.values)
        elif isinstance(n, A.IAdjacent | A.Near) and isinstance(n.target, A.Terms):
            out.update(n.target.values)
    return out


# ---- found in -------------------------------------------------------------------------------


def comparable(value: Any) -> Any:
    """An item value as ``found in`` compares it: numbers as Decimals (``12345.60`` equals
    ``12345.6``), strings in NFKC (full-width ``１２３`` equals ``123``), tuples, lists and
    dataclasses field by field; anything else (a date) as it is. A NaN is equal to nothing."""
    if isinstance(value, str):
        return value if value.isascii() else unicodedata.normalize("NFKC", value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float | Decimal):
        number = as_decimal(value)
        return object() if number is None or number.is_nan() else number
    if isinstance(value, tuple | list):
        return tuple(comparable(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value), *(comparable(getattr(value, f.name)) for f in fields if f.compare))
    return value


def item_key(item: Item) -> tuple[Any, Any] | None:
    """What makes two items equal for ``found in``: the unit and the value; None when the item
    has no value, which is never found."""
    if item.value is None:
        return None
    value = item.value
    unit = item.unit
    if type(value) is not Decimal or value.is_nan():  # Decimals, the common case, as they are
        value = comparable(value)
    return (unit if unit is None or unit.isascii() else unicodedata.normalize("NFKC", unit), value)


def ground_texts(value: Any) -> list[str]:
    """The strings of a ``found in`` path's value: the value itself, or the strings inside its
    lists and mapping values, recursively, in order. Numbers and other values are no text."""
    out: list[str] = []
    seen: set[int] = set()  # a list that contains itself is read once
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, Mapping | list | tuple | set | frozenset) and id(v) not in seen:
            seen.add(id(v))
            inner = list(v.values()) if isinstance(v, Mapping) else list(v)
            stack.extend(reversed(inner))
    return out
