"""``jsonable`` turns what the turn loop has into plain JSON, the same way every time; traces
become JSON and come back from it unchanged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from pathlib import PurePosixPath
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel

from charter.traces.model import Trace, TraceStep, iso, jsonable, opaque
from tests.support.traces import RECALL, T0, trace


class Color(Enum):
    red = "red"


class Level(IntEnum):
    high = 3


class Step(StrEnum):
    entity = "entity"


@dataclass(frozen=True)
class Fact:
    key: str
    value: Any
    tags: frozenset[str] = field(default_factory=frozenset)


class Finding(BaseModel):
    rule: str
    at: datetime


class Opaque:
    pass


CST = timezone(timedelta(hours=8))


def stable_id(value: Any) -> str:
    """``repr``, with the items of a set in sorted order: a set of strings is ordered by their
    hashes, which differ from process to process, and every xdist worker must collect the same
    test ids."""
    if isinstance(value, set | frozenset):
        inner = ", ".join(sorted(stable_id(v) for v in value))
        return f"{type(value).__name__}({{{inner}}})"
    if is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name}={stable_id(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__name__}({inner})"
    return repr(value)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, None),
        (True, True),
        (7, 7),
        (1.5, 1.5),
        ("合同", "合同"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (Color.red, "red"),
        (Level.high, 3),
        (Step.entity, "entity"),
        ((1, (2, 3)), [1, [2, 3]]),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        ({1, "a"}, ["a", 1]),  # kinds that do not compare: by their JSON text, '"a"' < '1'
        ({(2, "b"), (1, "a")}, [[1, "a"], [2, "b"]]),
        (datetime(2024, 5, 1, 18, 0, tzinfo=CST), "2024-05-01T10:00:00Z"),
        (datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC), "2024-05-01T10:00:00.250000Z"),
        (datetime(2024, 5, 1, 10, 0), "2024-05-01T10:00:00"),  # naive: its zone is unknown
        (date(2024, 5, 1), "2024-05-01"),
        (time(9, 30), "09:30:00"),
        (timedelta(minutes=2, milliseconds=500), 120.5),
        (Decimal("1.10"), "1.10"),
        (UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (PurePosixPath("/srv/pack"), "/srv/pack"),
        ({"b": 1, "a": (Color.red,)}, {"b": 1, "a": ["red"]}),  # keys keep their order
        (
            {1: "x", None: "y", Color.red: "z", 2.5: "w"},
            {"1": "x", "null": "y", "red": "z", "2.5": "w"},
        ),
        (
            Fact("合同", Decimal("3.0"), frozenset({"y", "x"})),
            {"key": "合同", "value": "3.0", "tags": ["x", "y"]},
        ),
        (
            Finding(rule="no-promise", at=T0),
            {"rule": "no-promise", "at": "2024-05-01T10:00:00Z"},
        ),
        ([RECALL], [RECALL.as_dict()]),
    ],
    ids=stable_id,
)
def test_jsonable(value: Any, want: Any) -> None:
    got = jsonable(value)
    assert got == want
    assert json.loads(json.dumps(got, allow_nan=False)) == want


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Opaque(), "Opaque is not JSON-serialisable"),
        (b"raw", "bytes is not JSON-serialisable"),
        ({(1, 2): "x"}, "a JSON object key must be a string or a number, not (1, 2)"),
        ([1, {"deep": Opaque}], "type is not JSON-serialisable"),
    ],
)
def test_what_jsonable_does_not_know_is_a_type_error(value: Any, message: str) -> None:
    with pytest.raises(TypeError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        jsonable(value)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (Opaque(), "<Opaque>"),
        ({"skill": Opaque(), "data": b"raw"}, {"skill": "<Opaque>", "data": "<bytes>"}),
        ({(1, 2): "x"}, {"<tuple>": "x"}),
        (Fact("k", Opaque()), {"key": "k", "value": "<Opaque>", "tags": []}),
    ],
    ids=["object", "nested", "key", "dataclass field"],
)
def test_a_default_decides_for_unknown_values(value: Any, want: Any) -> None:
    assert jsonable(value, default=opaque) == want


def test_a_default_that_gives_lists_or_numbers_still_makes_keys() -> None:
    assert jsonable({(1, 2): "x"}, default=list) == {"[1, 2]": "x"}


def test_iso_is_utc_with_microseconds_only_when_there_are_some() -> None:
    assert iso(T0) == "2024-05-01T10:00:00Z"
    assert iso(datetime(2024, 5, 1, 10, 0)) == "2024-05-01T10:00:00Z"  # naive is UTC here
    assert iso(T0.replace(microsecond=5)) == "2024-05-01T10:00:00.000005Z"


TRACE_DICT = {
    "id": "tr-1",
    "tenant": "acme",
    "user_id": "u1",
    "session_id": "s1",
    "domain": "finance",
    "started_at": "2024-05-01T10:00:00Z",
    "duration_ms": 141.5,
    "verdict": "pass",
    "reply": "合同第三条约定了违约责任。",
    "steps": [
        {
            "name": "recall",
            "started_ms": 0.5,
            "duration_ms": 12.25,
            "decision": "ladder: entity",
            "inputs": {"text": "上次说的合同第三条", "top_k": 3},
            "outputs": {"step": "entity", "facts": [{"key": "contract", "value": "第三条"}]},
        },
        {
            "name": "reflect",
            "started_ms": 130.0,
            "duration_ms": 2.5,
            "decision": "rules failed: no-promise, cite-source",
            "inputs": {"output": "合同第三条规定……"},
            "outputs": {"verdict": "retry", "failed": ["no-promise", "cite-source"]},
        },
    ],
}


def test_a_trace_as_json_and_back() -> None:
    t = trace("tr-1", tenant="acme")
    assert t.as_dict() == TRACE_DICT
    assert Trace.from_dict(json.loads(json.dumps(t.as_dict()))) == t


def test_a_step_with_defaults() -> None:
    step = TraceStep("plan", 0.0, 1.0)
    assert step.as_dict() == {
        "name": "plan",
        "started_ms": 0.0,
        "duration_ms": 1.0,
        "decision": "",
        "inputs": {},
        "outputs": {},
    }
    assert TraceStep.from_dict({"name": "plan", "started_ms": 0, "duration_ms": 1}) == step


def test_traces_are_frozen() -> None:
    t = trace("tr-1")
    with pytest.raises(AttributeError):
        t.verdict = "block"  # type: ignore[misc]
