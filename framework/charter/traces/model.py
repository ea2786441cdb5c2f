"""What a trace is: frozen values holding only JSON, and ``jsonable`` that makes them so.

A step's inputs and outputs are converted when the step ends, not when the trace is saved: the
turn loop hands in its live objects (findings, goals, fact rows) and may change them afterwards,
and the trace must show them as they were. Conversion is deterministic (same value, same JSON,
whatever the process): sets are sorted, times are UTC text, and an object Charter does not know
becomes what ``default`` makes of it, never a ``repr`` with a memory address in it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any
from uuid import UUID

Default = Callable[[Any], Any]

_SCALARS = (str, int, bool, type(None))


def as_utc(at: dt.datetime) -> dt.datetime:
    """Aware UTC; a naive value (SQLite reads them back so) is taken to be UTC already."""
    return at.replace(tzinfo=dt.UTC) if at.tzinfo is None else at.astimezone(dt.UTC)


def iso(at: dt.datetime) -> str:
    """``2024-05-01T10:00:00Z``, with microseconds only when there are some (as tickets)."""
    utc = as_utc(at)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{utc.microsecond:06d}Z" if utc.microsecond else f"{text}Z"


def _float(value: float) -> float | str:
    # JSON has no NaN or infinity; PostgreSQL's json type and strict parsers refuse them
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _key(key: Any, default: Default | None) -> str:
    if isinstance(key, Enum):
        key = key.value
    if isinstance(key, str):
        return key
    if isinstance(key, bool | int | float) or key is None:
        return json.dumps(key)  # what json.dumps itself does with such keys: 1 -> "1"
    if default is None:
        raise TypeError(f"a JSON object key must be a string or a number, not {key!r}")
    made = jsonable(default(key))
    return made if isinstance(made, str) else json.dumps(made, ensure_ascii=False)


def _sorted(items: list[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:  # mixed or unorderable kinds: order by their JSON text instead
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))


def jsonable(value: Any, *, default: Default | None = None) -> Any:
    """``value`` as plain JSON values (dict with str keys, list, str, int, float, bool, None).

    Dataclass instances become objects of their fields, pydantic models their JSON dump, enums
    their value, tuples lists, sets sorted lists, datetimes ``...Z`` text in UTC (naive ones
    as they are), dates and times ISO text, timedeltas seconds, Decimal/UUID/paths text, and
    NaN/infinite floats ``"NaN"``/``"Infinity"``/``"-Infinity"``. Mappings keep their order.
    Anything else is ``default(value)`` converted in turn, or a TypeError without a default.
    """
    if isinstance(value, Enum):
        return jsonable(value.value, default=default)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dt.datetime):
        return iso(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal | UUID | PurePath):
        return str(value)  # Decimal as text: money keeps its digits
    if isinstance(value, Mapping):
        return {_key(k, default): jsonable(v, default=default) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, default=default) for v in value]
    if isinstance(value, set | frozenset):
        return _sorted([jsonable(v, default=default) for v in value])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name), default=default)
            for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):  # a pydantic model
        return jsonable(dump(mode="json"), default=default)
    if default is not None:
        return jsonable(default(value))
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable: {value!r}")


def opaque(value: Any) -> str:
    """The recorder's default: the type's name, deterministic where a repr is not."""
    return f"<{type(value).__name__}>"


@dataclass(frozen=True)
class TraceStep:
    """One step of a turn. ``started_ms`` is its offset from the start of the trace."""

    name: str
    started_ms: float
    duration_ms: float
    inputs: Mapping[str, Any] = field(default_factory=dict)
    outputs: Mapping[str, Any] = field(default_factory=dict)
    decision: str = ""  # what was decided here, e.g. "ladder: entity", "fallback: faq"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "started_ms": self.started_ms,
            "duration_ms": self.duration_ms,
            "decision": self.decision,
            "inputs": jsonable(self.inputs),
            "outputs": jsonable(self.outputs),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceStep:
        return cls(
            name=data["name"],
            started_ms=float(data["started_ms"]),
            duration_ms=float(data["duration_ms"]),
            inputs=dict(data.get("inputs", {})),
            outputs=dict(data.get("outputs", {})),
            decision=data.get("decision", ""),
        )


@dataclass(frozen=True)
class Trace:
    """One turn: who, where, when, how long, its steps in the order they started, and what
    came of it (the reply sent and the reflection verdict). ``tenant`` scopes it on a shared
    server; None on a single-tenant one."""

    id: str
    user_id: str
    session_id: str
    domain: str
    started_at: dt.datetime
    duration_ms: float
    steps: tuple[TraceStep, ...]
    reply: str
    verdict: str
    tenant: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, times as ``2024-05-01T10:00:00Z``: what ``--format json`` prints."""
        return {
            "id": self.id,
            "tenant": self.tenant,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "domain": self.domain,
            "started_at": iso(self.started_at),
            "duration_ms": self.duration_ms,
            "verdict": self.verdict,
            "reply": self.reply,
            "steps": [s.as_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trace:
        """The inverse of ``as_dict`` (for clients of ``--format json`` and the HTTP API)."""
        return cls(
            id=data["id"],
            user_id=data["user_id"],
            session_id=data["session_id"],
            domain=data["domain"],
            started_at=as_utc(dt.datetime.fromisoformat(data["started_at"])),
            duration_ms=float(data["duration_ms"]),
            steps=tuple(TraceStep.from_dict(s) for s in data.get("steps", ())),
            reply=data["reply"],
            verdict=data["verdict"],
            tenant=data.get("tenant"),
        )
