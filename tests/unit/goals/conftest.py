"""Databases for the goal store tests: a fresh SQLite file per test, and a fresh PostgreSQL
schema per test when a server is reachable (``CHARTER_TEST_POSTGRES_URL``, default the local
``test`` database); without one the PostgreSQL variants are skipped and say why."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

PG_URL = os.environ.get(
    "CHARTER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


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
def goal_pg_url() -> Iterator[str]:
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
def goal_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'goals.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def goal_db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "goal_sqlite_url" if request.param == "sqlite" else "goal_pg_url"
    url: str = request.getfixturevalue(name)
    return url
