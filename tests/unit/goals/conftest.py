"""Databases for the goal store tests: a fresh SQLite file per test, and a fresh PostgreSQL
schema per test when a server is reachable (``CHARTER_TEST_POSTGRES_URL``, default the local
``test`` database); without one the PostgreSQL variants are skipped and say why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from charter.contracts.events import GoalTransition
from charter.goals.store import GoalStore
from tests.support.goals import FakeClock
from tests.support.postgres import fresh_schema


@pytest.fixture
def goal_pg_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema, dropped after the test."""
    with fresh_schema("charter_test") as url:
        yield url


@pytest.fixture
def goal_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'goals.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def goal_db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "goal_sqlite_url" if request.param == "sqlite" else "goal_pg_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def events() -> list[GoalTransition]:
    return []


@pytest.fixture
def store(goal_db_url: str, clock: FakeClock, events: list[GoalTransition]) -> Iterator[GoalStore]:
    """A store on SQLite and on PostgreSQL, on the fake clock, recording its events."""
    with GoalStore(goal_db_url, clock=clock, on_transition=events.append) as s:
        yield s
