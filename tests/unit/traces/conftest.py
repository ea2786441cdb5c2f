"""Databases and traces for the trace tests: a fresh SQLite file per test, and a fresh
PostgreSQL schema per test when a server is reachable (``CHARTER_TEST_POSTGRES_URL``); without
one the PostgreSQL variants are skipped and say why. The hand-built traces are in
``tests/support/traces.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import fresh_schema


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
