"""Databases and traces for the trace tests: a fresh SQLite file per test, and a fresh
PostgreSQL schema per test when a server is reachable (``CHARTER_TEST_POSTGRES_URL``); without
one the PostgreSQL variants are skipped and say why. Traces are built by hand, so every id,
time and duration is known."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from charter.traces.model import Trace, TraceStep
from tests.postgres import fresh_schema

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def trace_pg_url() -> Iterator[str]:
    with fresh_schema("charter_trace") as url:
        yield url


@pytest.fixture
def trace_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'traces.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "trace_sqlite_url" if request.param == "sqlite" else "trace_pg_url"
    url: str = request.getfixturevalue(name)
    return url


class FakeClock:
    """``time.perf_counter`` for tests: seconds that move only when the test says so."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


RECALL = TraceStep(
    name="recall",
    started_ms=0.5,
    duration_ms=12.25,
    inputs={"text": "上次说的合同第三条", "top_k": 3},
    outputs={"step": "entity", "facts": [{"key": "contract", "value": "第三条"}]},
    decision="ladder: entity",
)
REFLECT = TraceStep(
    name="reflect",
    started_ms=130.0,
    duration_ms=2.5,
    inputs={"output": "合同第三条规定……"},
    outputs={"verdict": "retry", "failed": ["no-promise", "cite-source"]},
    decision="rules failed: no-promise, cite-source",
)


def trace(
    tid: str,
    *,
    user: str = "u1",
    session: str = "s1",
    minutes: float = 0,
    tenant: str | None = None,
    steps: tuple[TraceStep, ...] = (RECALL, REFLECT),
    **more: Any,
) -> Trace:
    """A trace that started ``minutes`` after T0 (or at ``started_at``)."""
    started_at = more.pop("started_at", T0 + timedelta(minutes=minutes))
    values: dict[str, Any] = {
        "domain": "finance",
        "duration_ms": 141.5,
        "reply": "合同第三条约定了违约责任。",
        "verdict": "pass",
        **more,
    }
    return Trace(
        id=tid,
        user_id=user,
        session_id=session,
        started_at=started_at,
        steps=steps,
        tenant=tenant,
        **values,
    )
