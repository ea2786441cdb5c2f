"""The typed pack model's building blocks: fields that keep what the JSON Schema check let
through and stand in a default for what it rejected.

A pack file is checked against its JSON Schema first; every problem there becomes a Diagnostic
at its line and column. The compile stages then run on the same file anyway, so that one
``charter validate`` reports every problem (a misspelt slot and a wrong type in one run). The
typed model is what those stages read: a value of the wrong type becomes the field's default (the
schema has said so already), an item of a list that is no mapping becomes ``None`` (so the
indexes the stages point into stay the YAML file's indexes), and validating a model never fails,
whatever the document holds. ``tests/unit/pack/test_typed.py`` checks that for any JSON value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict

T = TypeVar("T")


class DocModel(BaseModel):
    """A mapping of a pack file. Keys the schema does not know were reported by it (additional
    properties are errors there), so the model has no field for them; it is frozen like every
    other compiled value."""

    # built on first use: a warm `charter validate` reads two of these models, not fifty
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, defer_build=True)

    @classmethod
    def read(cls: type[M], value: Any) -> M:
        """The model of ``value``: a mapping's fields, or every default when it is none."""
        return cls.model_validate(value if isinstance(value, dict) else {})


M = TypeVar("M", bound=DocModel)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _keep(test: Callable[[Any], bool], default: Any) -> BeforeValidator:
    return BeforeValidator(lambda v: v if test(v) else default)


Str = Annotated[str, _keep(lambda v: isinstance(v, str), "")]
"""A string; "" when the value is none."""

OptStr = Annotated[str | None, _keep(lambda v: isinstance(v, str), None)]
"""A string, or None when the value is none (absent and wrong alike)."""

OptInt = Annotated[int | None, _keep(_is_int, None)]
"""An integer (never a bool), or None."""


def _is_number(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:  # an integer of 400 digits is a number no float holds
        float(value)
    except OverflowError:
        return False
    return True


OptNum = Annotated[float | None, _keep(_is_number, None)]
"""A number (never a bool), or None."""

Flag = Annotated[bool, _keep(lambda v: v is True, False)]
"""True only when the value is ``true``."""

Raw = Any
"""A value read by a checker of its own (a JSON Schema, a template, a DSL string)."""

# a YAML document holds lists; a tuple is what a model made in Python holds
_SEQ = (list, tuple)

Strs = Annotated[
    tuple[str, ...],
    BeforeValidator(
        lambda v: tuple(x for x in v if isinstance(x, str)) if isinstance(v, _SEQ) else ()
    ),
]
"""The strings of a list; other items and a value that is no list are dropped."""

RawList = Annotated[tuple[Any, ...], _keep(lambda v: isinstance(v, _SEQ), ())]
"""A list as written (its items checked by the stage that reads them), or ()."""

RawMap = Annotated[dict[str, Any], _keep(lambda v: isinstance(v, dict), {})]
"""A mapping as written, or {}."""


def _mapping(x: Any) -> Any:
    return x if isinstance(x, dict | DocModel) else None


def _items(v: Any) -> list[Any]:
    return [_mapping(x) for x in v] if isinstance(v, _SEQ) else []


def _entries(v: Any) -> dict[str, Any]:
    return {str(k): _mapping(x) for k, x in v.items()} if isinstance(v, dict) else {}


Items = Annotated[tuple[M | None, ...], BeforeValidator(_items)]
"""A list of mappings, each read as model ``M``; an item that is no mapping is None, so that
item ``i`` of the model is item ``i`` of the file."""

Entries = Annotated[dict[str, M | None], BeforeValidator(_entries)]
"""A mapping of names to mappings, each read as model ``M``; a value that is no mapping is
None."""

Sub = Annotated[M, BeforeValidator(lambda v: v if isinstance(v, dict | DocModel) else {})]
"""A nested mapping read as model ``M``; every default when the value is no mapping."""

OptBool = Annotated[bool | None, _keep(lambda v: isinstance(v, bool), None)]
"""``true`` or ``false``, or None: for a key whose default is true (``x is not False``), or
whose absence means something else than ``false``."""

OptMap = Annotated[dict[str, Any] | None, _keep(lambda v: isinstance(v, dict), None)]
"""A mapping as written, or None: for a key whose absence means something else than ``{}``
(no input schema says nothing about the arguments; an empty one says there are none)."""

MapOf = Annotated[dict[str, T], BeforeValidator(lambda v: v if isinstance(v, dict) else {})]
"""A mapping of names to values each read as ``T``, itself a field type that reads any value
(``Strs``, ``Items[M]``, ``OptStr``); {} when the value is no mapping."""

__all__ = [
    "DocModel",
    "Entries",
    "Flag",
    "Items",
    "MapOf",
    "OptBool",
    "OptInt",
    "OptMap",
    "OptNum",
    "OptStr",
    "Raw",
    "RawList",
    "RawMap",
    "Str",
    "Strs",
    "Sub",
]
