"""Fixtures for the fact store tests: databases (a fresh SQLite file per test, and a fresh
PostgreSQL schema per test when a server is reachable: ``CHARTER_TEST_POSTGRES_URL``, default
the local ``test`` database; without one the PostgreSQL variants are skipped and say why), a
fake clock, counting ids, and a factory of prepared facts."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.memory.records import PreparedFact

PG_URL = os.environ.get(
    "CHARTER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


@functools.cache
def postgres_problem() -> str | None:
    """Why PostgreSQL cannot be used for tests, or None when it can."""
    try:
        engine = sa.create_engine(PG_URL, connect_args={"connect_timeout": 3})
    except ImportError as exc:
        return f"{exc} (pip install 'charter[postgres]')"
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        return str(exc).splitlines()[0]
    finally:
        engine.dispose()
    return None


@pytest.fixture
def memory_pg_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema, dropped after the test."""
    problem = postgres_problem()
    if problem is not None:
        pytest.skip(
            f"PostgreSQL not reachable at {PG_URL}: {problem} "
            "(set CHARTER_TEST_POSTGRES_URL to use another server)"
        )
    schema = f"charter_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = sa.make_url(PG_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


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
