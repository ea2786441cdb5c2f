"""The small interfaces plugins implement: extractors, predicates, repairs and formatters.

They sit at the bottom of the dependency graph so that plugins, the compiler and the checker
engine can all name them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, Protocol, runtime_checkable

ValueKind = Literal["number", "date", "text"]


@dataclass(slots=True)
class Item:
    """One thing an extractor found in a text: where, what was written, and its typed value.

    Items are shared by every rule that reads the same extractor on the same text: treat them
    as read-only. (Not ``frozen=True`` only because a frozen dataclass is three times slower to
    construct, and extractors build thousands per second on the hot path.)

    ``value`` is a ``Decimal`` for numbers (money, percent), a ``datetime.date`` or a
    partial-date tuple for dates, a ``str`` otherwise. ``unit`` is the normalised unit (money in
    yuan has unit ``"元"`` whether written ``¥`` or ``元``); ``decimals`` counts the digits written
    after the decimal point, ``None`` when the notion does not apply.
    """

    start: int
    end: int
    text: str
    value: Any
    unit: str | None = None
    decimals: int | None = None
    attrs: Mapping[str, Any] = field(default_factory=dict, compare=False)


@runtime_checkable
class Extractor(Protocol):
    """Finds typed items in a text. Must be pure: same text, same items, no I/O."""

    name: str
    value_kind: ValueKind
    has_units: bool

    def extract(self, text: str) -> tuple[Item, ...]:
        """Items in order of ``start``; spans never overlap."""
        ...

    def canonical(self, item: Item) -> str | None:
        """The item rewritten in the extractor's canonical form, or None if it cannot be.

        Used by the ``reformat`` repair: the canonical form must satisfy the format rules the
        extractor is meant for (money: two decimals and a unit; date: YYYY-MM-DD).
        """
        ...


# value: a path (context.x, memory.facts, goal.missing_count, pack.thresholds...) whose value the
# turn gives, passed as it is (lists and mappings included; None when missing)
ArgKind = Literal["string", "strings", "number", "regex", "name", "value"]


@runtime_checkable
class Predicate(Protocol):
    """A named test on a text subject, used in the DSL as ``name(subject, args...)``."""

    name: str
    params: Sequence[ArgKind]

    def __call__(self, text: str, *args: Any) -> bool: ...


@dataclass(frozen=True, slots=True)
class RepairArg:
    """One argument written after ``fix <repair>``: a string, a list of strings or a name.

    ``with`` and other bare words arrive as ``kind="name"``.
    """

    kind: Literal["string", "strings", "name"]
    value: str | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepairInput:
    """What a repair sees: the current text and what the failing rule found in it."""

    text: str
    spans: tuple[tuple[int, int], ...]
    items: tuple[Item, ...]
    extractors: Mapping[str, Extractor]


@runtime_checkable
class Repair(Protocol):
    """A deterministic fix named in ``on_fail: fix <name> <args>``."""

    name: str

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        """An empty string when the arguments fit, else a message saying what is expected."""
        ...

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        """The repaired text (the same text when there was nothing to repair)."""
        ...


@runtime_checkable
class Formatter(Protocol):
    """Writes a value into a response template: ``{balance|amount}``.

    The value comes from JSON (a skill's result: ``str``, ``int``, ``float``, ``bool``, a list,
    a mapping) or from a goal's slot (text such as ``"5000"``, ``"2024-05-02"``,
    ``"2025-12-01/2025-12-31"``, ``"2024-05-02T08:00/2024-05-02T12:00"``, ``"--01-10"``).
    Must be pure and total: the same value gives the same text, and it never raises. What it
    writes should read back as the same value through the extractor of the same kind (an amount
    through ``money``), so the reply passes the rules those extractors serve.
    """

    name: str

    def format(self, value: Any) -> str | None:
        """The value written this way, or None when it cannot be (then the template that
        uses it is not eligible and another variant is chosen)."""
        ...


def decimal_places(number_text: str) -> int:
    """Digits after the decimal point as written (``"1,234.50"`` -> 2, ``"12"`` -> 0)."""
    if "." not in number_text:
        return 0
    return len(number_text.rsplit(".", 1)[1].rstrip())


def as_decimal(value: Any) -> Decimal | None:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if isinstance(value, str):
        try:
            return Decimal(value.replace(",", ""))
        except ArithmeticError:
            return None
    return None


ItemTest = Callable[[Item], bool]
