"""The typed model of ``pack.yaml`` (schema ``pack.json``): what the loader reads of a pack's
manifest, leniently (``_lenient``), after the schema has reported what is wrong with it.

``thresholds`` and ``messages`` come out whole, over their defaults: the DSL reads them as
``pack.thresholds.<key>`` and ``pack.messages.<key>``, and the compiled pack carries them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from charter.pack.model import DEFAULT_MESSAGES, DEFAULT_THRESHOLDS
from charter.pack.typed._lenient import DocModel, OptStr, Str, Sub

# what pack.json allows for each threshold; a value outside (CH010 / CH013 said so) is replaced
# by the default, so that the stages after the schema never read a string or a huge number. A
# key the schema does not know (CH012) is kept when it is a finite number, as it always was:
# the rules that read it then report nothing more than the schema did.
_THRESHOLD_RANGE: Mapping[str, tuple[type, float, float]] = {
    "uncertainty": (float, 0.0, 1.0),
    "max_retries": (int, 0, 10),
    "retrieval_top_k": (int, 1, 50),
}


def _thresholds(value: Any) -> dict[str, float | int]:
    out = dict(DEFAULT_THRESHOLDS)
    for key, v in value.items() if isinstance(value, dict) else ():
        kind, low, high = _THRESHOLD_RANGE.get(key, (float, -math.inf, math.inf))
        number = isinstance(v, int | float) and not isinstance(v, bool)
        if kind is int and not isinstance(v, int):
            number = False  # 2.0 retries is no count
        # an int is finite however long (math.isfinite would overflow converting it)
        if number and (isinstance(v, int) or math.isfinite(v)) and low <= v <= high:
            out[key] = v
    return out


def _messages(value: Any) -> dict[str, Any]:
    # kept as written over the defaults: the schema reported a wrong value or an unknown key
    return {**DEFAULT_MESSAGES, **(value if isinstance(value, dict) else {})}


def _str_items(value: Any) -> tuple[str | None, ...]:
    return (
        tuple(x if isinstance(x, str) else None for x in value) if isinstance(value, list) else ()
    )


StrItems = Annotated[tuple[str | None, ...], BeforeValidator(_str_items)]
"""A list of strings with None for an item that is none, so that item ``i`` is the file's
(``("extends", i)`` points at it)."""

Thresholds = Annotated[dict[str, float | int], BeforeValidator(_thresholds)]
"""``DEFAULT_THRESHOLDS`` with each value of the file that is in its range."""

Messages = Annotated[dict[str, Any], BeforeValidator(_messages)]
"""``DEFAULT_MESSAGES`` with the file's messages over them."""


class Requires(DocModel):
    """``requires:``: what must be installed for the pack to compile."""

    charter: OptStr = None
    plugins: StrItems = ()


class PackFile(DocModel):
    """A ``pack.yaml``. Absent and wrong values alike read as "" (the loader puts in the
    directory's name, version "0", kind "domain" and locale "zh-CN")."""

    name: Str = ""
    version: Str = ""
    kind: Str = ""
    description: Str = ""
    locale: Str = ""
    extends: StrItems = ()
    requires: Sub[Requires] = Requires()
    thresholds: Thresholds = Field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    messages: Messages = Field(default_factory=lambda: dict(DEFAULT_MESSAGES))
