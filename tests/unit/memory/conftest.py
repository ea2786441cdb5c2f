"""Fixtures for the fact store tests: databases (a fresh SQLite file per test, and a fresh
PostgreSQL schema per test when a server is reachable: ``CHARTER_TEST_POSTGRES_URL``, default
the local ``test`` database; without one the PostgreSQL variants are skipped and say why), a
fake clock, counting ids, and a factory of prepared facts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from charter.memory.records import PreparedFact
from tests.support.memory import FakeClock, Ids, MakeFact
from tests.support.postgres import fresh_schema


@pytest.fixture
def memory_pg_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema, dropped after the test."""
    with fresh_schema("charter_mem") as url:
        yield url


@pytest.fixture
def memory_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "memory_sqlite_url" if request.param == "sqlite" else "memory_pg_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ids() -> Ids:
    return Ids()


@pytest.fixture
def make_fact() -> MakeFact:
    """``make_fact(key, value, **changes)``: a plain confirmed fact of user u1, valid for ever
    unless the changes say otherwise."""

    def make(key: str, value: str, **changes: Any) -> PreparedFact:
        fields: dict[str, Any] = {
            "user_id": "u1",
            "key": key,
            "value": value,
            "memory_type": "fact",
            "level": "L0",
            "encrypted": False,
            "confidence": 1.0,
            "source": "user_confirmed",
            "domain": "default",
            "valid_until": None,
        }
        fields.update(changes)
        return PreparedFact(**fields)

    return make
