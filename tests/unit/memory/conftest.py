"""Fixtures for the fact store tests: databases (a fresh SQLite file per test, and a fresh
PostgreSQL schema per test when a server is reachable: ``CHARTER_TEST_POSTGRES_URL``, default
the local ``test`` database; without one the PostgreSQL variants are skipped and say why), a
fake clock, counting ids, and a factory of prepared facts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from charter.memory.records import PreparedFact
from tests.postgres import fresh_schema

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


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


@dataclass
class FakeClock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@dataclass
class Ids:
    """Fact ids f-001, f-002 ... in write order: outputs can be pinned."""

    made: list[str] = field(default_factory=list)

    def __call__(self) -> str:
        self.made.append(f"f-{len(self.made) + 1:03d}")
        return self.made[-1]


@pytest.fixture
def ids() -> Ids:
    return Ids()


MakeFact = Callable[..., PreparedFact]


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
