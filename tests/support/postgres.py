"""PostgreSQL for tests: whether a server is reachable, and a fresh schema per test.

The server is ``CHARTER_TEST_POSTGRES_URL``, by default the local ``test`` database. Without
one, tests that need it are skipped and say why; with one, each test gets a new, empty schema
(its connections' ``search_path``), dropped afterwards, so reruns and parallel tests never see
each other's tables.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def fresh_schema(prefix: str = "charter_test") -> Iterator[str]:
    """A URL whose connections use a new, empty schema; skips the test without a server."""
    problem = postgres_problem()
    if problem is not None:
        pytest.skip(
            f"PostgreSQL not reachable at {PG_URL}: {problem} "
            "(set CHARTER_TEST_POSTGRES_URL to use another server)"
        )
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
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
