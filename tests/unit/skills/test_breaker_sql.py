"""Circuit-breaker state in the database (SQLite file, and PostgreSQL when a server is
reachable: ``CHARTER_TEST_POSTGRES_URL``, else those variants skip and say why): the schema,
the lifecycle, wall-clock rows, and threads and processes racing for the one probe."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.skills.breaker import (
    Admission,
    BreakerOpenError,
    BreakerRegistry,
    BreakerRow,
    CircuitBreaker,
)
from charter.skills.breaker_sql import COMPONENT, MIGRATIONS, SqlBreakerState
from charter.store.migrations import make_engine, migrate, schema_versions
from tests.support.postgres import fresh_schema

OPENED = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
T0 = OPENED.timestamp()


class FakeClock:
    """UNIX time standing still until moved; picklable, for the processes."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def breaker_pg_url() -> Iterator[str]:
    with fresh_schema("charter_breaker") as url:
        yield url


@pytest.fixture
def breaker_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'breaker.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "breaker_sqlite_url" if request.param == "sqlite" else "breaker_pg_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def state(db_url: str) -> Iterator[SqlBreakerState]:
    with SqlBreakerState(db_url) as s:
        yield s


def fail(b: CircuitBreaker, times: int = 1) -> None:
    for _ in range(times):
        b.record(b.admit(), ok=False, elapsed_s=0.1)


def refusal(b: CircuitBreaker) -> tuple[str, float]:
    with pytest.raises(BreakerOpenError) as caught:
        b.admit()
    return caught.value.state, caught.value.retry_in_s


def test_the_table_is_migrated_once(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with SqlBreakerState(engine) as first, SqlBreakerState(engine):
            assert first.engine is engine
        assert schema_versions(engine, COMPONENT) == [1]
        assert migrate(engine, component=COMPONENT, migrations=MIGRATIONS) == []
        columns = [c["name"] for c in sa.inspect(engine).get_columns("skill_breaker")]
        assert columns == [
            "name",
            "state",
            "strikes",
            "slow",
            "epoch",
            "opened_at",
            "probe_at",
            "reason",
            "updated_at",
        ]
        with engine.connect() as conn:  # an engine passed in is still the caller's
            assert conn.execute(sa.text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


def test_the_whole_lifecycle(state: SqlBreakerState) -> None:
    clock = FakeClock()
    events: list[tuple[str, str, str, str]] = []
    b = CircuitBreaker(
        "policy_search", clock=clock, state=state, on_transition=lambda *e: events.append(e)
    )
    assert b.snapshot().state == "closed" and state.names() == []
    b.record(b.admit(), ok=True, elapsed_s=2.5)
    fail(b)
    assert (b.snapshot().state, b.snapshot().strikes) == ("closed", 2)
    b.record(b.admit(), ok=True, elapsed_s=0.1)
    assert b.snapshot().strikes == 0
    late = b.admit()
    fail(b, 3)
    b.record(late, ok=False, elapsed_s=0.1)  # in flight when it opened: ignored
    assert state.read("policy_search") == BreakerRow(
        "open", 3, 0, 1, T0, None, "3 consecutive failures"
    )
    clock.now = T0 + 10
    assert refusal(b) == ("open", 20.0)
    clock.now = T0 + 30
    probe = b.admit()
    assert probe == Admission(probe=True, epoch=2)
    assert refusal(b) == ("half_open", 30.0)
    clock.now = T0 + 31
    b.record(probe, ok=True, elapsed_s=2.5)
    snap = b.snapshot()
    assert (snap.state, snap.strikes, snap.opened_at, snap.retry_in_s, snap.reason) == (
        "open",
        4,
        T0 + 31,
        30.0,
        "probe slower than 2 s",
    )
    clock.now = T0 + 61
    b.record(b.admit(), ok=True, elapsed_s=0.1)
    assert state.read("policy_search") == BreakerRow(epoch=5, reason="probe succeeded")
    assert [e[1:] for e in events] == [
        ("closed", "open", "3 consecutive failures"),
        ("open", "half_open", "cool-down over"),
        ("half_open", "open", "probe slower than 2 s"),
        ("open", "half_open", "cool-down over"),
        ("half_open", "closed", "probe succeeded"),
    ]
    assert state.names() == ["policy_search"]


def test_rows_hold_utc_wall_clock_times(state: SqlBreakerState) -> None:
    b = CircuitBreaker("s", clock=FakeClock(), state=state)
    fail(b, 3)
    with state.engine.connect() as conn:
        when = sa.DateTime(timezone=True)
        text = sa.text("SELECT opened_at, probe_at FROM skill_breaker WHERE name = 's'")
        query = text.columns(opened_at=when, probe_at=when)
        opened_at, probe_at = conn.execute(query).one()
    # SQLite keeps no zone: the naive value is UTC
    assert (opened_at if opened_at.tzinfo else opened_at.replace(tzinfo=UTC)) == OPENED
    assert probe_at is None


def test_processes_sharing_a_database_share_the_breaker(db_url: str) -> None:
    clock = FakeClock()
    with SqlBreakerState(db_url) as one, SqlBreakerState(db_url) as two:
        reg_one = BreakerRegistry(one, clock=clock)
        reg_two = BreakerRegistry(two, clock=clock)
        fail(reg_one.get("policy_search"), 3)
        assert refusal(reg_two.get("policy_search")) == ("open", 30.0)
        assert [(s.name, s.state, s.opened_at) for s in reg_two.snapshots()] == [
            ("policy_search", "open", T0)
        ]


def test_a_shared_breaker_runs_on_the_wall_clock(state: SqlBreakerState) -> None:
    with pytest.raises(ValueError, match="needs wall-clock"):
        CircuitBreaker("s", state=state, clock=time.monotonic)
    b = CircuitBreaker("s", state=state)
    before = time.time()
    fail(b, 3)
    after = time.time()
    opened = b.snapshot().opened_at
    # the database keeps microseconds
    assert opened is not None and before - 1e-6 <= opened <= after + 1e-6


def test_threads_race_for_the_probe(state: SqlBreakerState) -> None:
    clock = FakeClock()
    events: list[Any] = []
    b = CircuitBreaker("s", clock=clock, state=state, on_transition=lambda *e: events.append(e))
    fail(b, 3)
    clock.now = T0 + 30
    n = 8
    start = threading.Barrier(n)

    def try_once(_: int) -> str:
        start.wait(timeout=30)
        try:
            return "probe" if b.admit().probe else "closed"
        except BreakerOpenError as err:
            return f"refused while {err.state}"

    with ThreadPoolExecutor(n) as pool:
        outcomes = sorted(pool.map(try_once, range(n)))
    assert outcomes == ["probe"] + ["refused while half_open"] * (n - 1)
    assert [e[1:3] for e in events] == [("closed", "open"), ("open", "half_open")]


def _try_probe(url: str, now: float, start: Any, results: Any) -> None:
    with SqlBreakerState(url) as state:
        b = CircuitBreaker("policy_search", clock=FakeClock(now), state=state)
        b.snapshot()  # connected before the race
        start.wait(60)
        try:
            results.put("probe" if b.admit().probe else "closed")
        except BreakerOpenError as err:
            results.put(f"refused while {err.state}")


def test_processes_race_and_one_gets_the_probe(db_url: str) -> None:
    with SqlBreakerState(db_url) as state:
        fail(CircuitBreaker("policy_search", clock=FakeClock(), state=state), 3)
    ctx = mp.get_context("spawn")
    n = 4
    start, results = ctx.Barrier(n), ctx.Queue()
    procs = [
        ctx.Process(target=_try_probe, args=(db_url, T0 + 31, start, results)) for _ in range(n)
    ]
    for p in procs:
        p.start()
    try:
        outcomes = sorted(results.get(timeout=120) for _ in range(n))
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
    assert outcomes == ["probe"] + ["refused while half_open"] * (n - 1)
    assert [p.exitcode for p in procs] == [0] * n
    with SqlBreakerState(db_url) as state:
        row = state.read("policy_search")
    assert (row.state, row.epoch, row.probe_at) == ("half_open", 2, T0 + 31)
