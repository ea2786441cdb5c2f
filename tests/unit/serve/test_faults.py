"""Database faults told apart from bugs (``charter.serve.faults``), and the health probe."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.serve.faults import fault_kind, probe, read_retried
from charter.store.migrations import make_engine


class PgError(Exception):
    """What psycopg raises: an exception with a SQLSTATE."""

    def __init__(self, sqlstate: str, message: str = "") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def wrapped(orig: Exception, cls: type[sa.exc.DBAPIError] = sa.exc.OperationalError) -> Exception:
    return cls("SELECT 1", {"user_id": "secret"}, orig)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (wrapped(sqlite3.OperationalError("attempt to write a readonly database")), "read-only"),
        (wrapped(sqlite3.OperationalError("database is locked")), "locked"),
        (wrapped(sqlite3.OperationalError("disk I/O error")), "unreachable"),
        (wrapped(sqlite3.OperationalError("unable to open database file")), "unreachable"),
        (wrapped(PgError("25006"), sa.exc.InternalError), "read-only"),
        (wrapped(PgError("55P03")), "locked"),
        (wrapped(PgError("08006")), "unreachable"),
        (wrapped(PgError("53100"), sa.exc.InternalError), "unreachable"),
        (wrapped(PgError("23505"), sa.exc.IntegrityError), None),
        (wrapped(PgError("22021"), sa.exc.DataError), None),
        (wrapped(PgError("42601"), sa.exc.ProgrammingError), None),
        (sa.exc.TimeoutError("QueuePool limit reached"), "locked"),
        (RuntimeError("a bug"), None),
    ],
)
def test_fault_kind(exc: Exception, kind: str | None) -> None:
    assert fault_kind(exc) == kind


def test_a_lost_connection() -> None:
    exc = sa.exc.OperationalError("SELECT 1", {}, PgError("57P01"), connection_invalidated=True)
    assert fault_kind(exc) == "connection lost"


def test_a_read_whose_connection_died_is_run_once_more() -> None:
    calls = []

    def read() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise sa.exc.OperationalError(
                "SELECT 1", {}, PgError("57P01"), connection_invalidated=True
            )
        return "rows"

    assert (read_retried(read), len(calls)) == ("rows", 2)


def test_other_faults_are_not_retried() -> None:
    calls = []

    def read() -> str:
        calls.append(1)
        raise sa.exc.OperationalError(
            "SELECT 1", {}, sqlite3.OperationalError("database is locked")
        )

    with pytest.raises(sa.exc.OperationalError):
        read_retried(read)
    assert len(calls) == 1


def test_twice_dead_is_raised() -> None:
    def read() -> str:
        raise sa.exc.OperationalError("SELECT 1", {}, PgError("57P01"), connection_invalidated=True)

    with pytest.raises(sa.exc.OperationalError):
        read_retried(read)


def test_probe_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    engine = make_engine(url)
    try:
        assert probe(engine) is None
        holder = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        assert probe(engine) == "locked"
        holder.execute("ROLLBACK")
        holder.close()
        with engine.connect() as conn:  # the probe left the connection's busy timeout as it was
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
    finally:
        engine.dispose()
