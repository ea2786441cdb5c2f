"""Plain values read from pack data the schema may have rejected: each read falls back to an
empty value (or the default threshold) instead of a wrong type, so that loading goes on after
the schema stage has reported the problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from charter.pack.model import DEFAULT_THRESHOLDS


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _list(v: Any) -> Sequence[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


# what pack.json allows for each threshold; a value outside (CH010 / CH013 said so) is replaced
# by the default, so that the stages after the schema never read a string or a huge number
_THRESHOLD_RANGE: Mapping[str, tuple[type, float, float]] = {
    "uncertainty": (float, 0.0, 1.0),
    "max_retries": (int, 0, 10),
    "retrieval_top_k": (int, 1, 50),
}


def thresholds(v: Any) -> dict[str, float | int]:
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in _dict(v).items():
        kind, low, high = _THRESHOLD_RANGE.get(key, (float, -math.inf, math.inf))
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if kind is int and not isinstance(value, int):
            number = False
        if number and math.isfinite(value) and low <= value <= high:
            out[key] = value
    return out
