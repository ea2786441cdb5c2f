"""Traces built by hand for the trace tests, so every id, time and duration is known, and a
``time.perf_counter`` that moves only when the test says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from charter.traces.model import Trace, TraceStep

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


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
