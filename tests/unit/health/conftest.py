"""Databases for the health tests, filled row by row: a fresh SQLite file per test and, when a
server is reachable (``CHARTER_TEST_POSTGRES_URL``), a fresh PostgreSQL schema (the variant is
skipped, saying why, without one). ``World`` writes exactly the rows a case needs — turns with
their recall and skills steps, facts, reads, goals, reflections, patch uses — at known times."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.health import World
from tests.support.postgres import fresh_schema


@pytest.fixture
def health_pg_url() -> Iterator[str]:
    with fresh_schema("charter_health") as url:
        yield url


@pytest.fixture
def health_sqlite_url(tmp_path: Path) -> str:
    path = tmp_path / "health.db"
    path.touch()
    return f"sqlite:///{path}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "health_sqlite_url" if request.param == "sqlite" else "health_pg_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    w = World(db_url)
    try:
        yield w
    finally:
        w.close()


@pytest.fixture
def sqlite_world(health_sqlite_url: str) -> Iterator[World]:
    w = World(health_sqlite_url)
    try:
        yield w
    finally:
        w.close()
