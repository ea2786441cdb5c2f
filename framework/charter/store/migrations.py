"""Opening a database and bringing its schema up to date, once, even when processes race.

``charter_schema_version`` holds one row per applied migration and component: each store keeps
its own ordered list of migrations next to its tables (``goals.migrations``,
``memory.facts.migrations``, ``skills.tickets_migrations``, ``traces.migrations``...) and they
share this table. ``migrate`` runs in one
transaction that first takes a lock no other migrator can share, PostgreSQL's transaction-level
advisory lock or SQLite's write lock (``BEGIN IMMEDIATE``), then reads the applied versions and
applies the missing ones in order. Two processes that start at once therefore serialise: the
second one waits, finds everything applied and does nothing. Both databases have transactional
DDL, so a migration that fails leaves no half-made table behind.

Each migration is a frozen snapshot of the DDL at its version, not the table models as they are
today: version 1 must create what version 2 expects to alter, whatever the models look like
later. So a table's DDL is written twice on purpose, and each store's tests compare the migrated
schema with its models.
"""

from __future__ import annotations

import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

SCHEMA_TABLE = "charter_schema_version"
# how long a SQLite statement waits for another connection's write lock before "database is
# locked": a few seconds, so a request facing a stuck writer fails (503) instead of hanging;
# migrations, run once at start-up while other processes may migrate too, wait longer
SQLITE_BUSY_TIMEOUT_MS = 5_000
MIGRATION_BUSY_TIMEOUT_MS = 30_000
# PostgreSQL: seconds to wait for a connection (a wrong host otherwise waits for TCP's timeout)
PG_CONNECT_TIMEOUT_S = 10
# one lock for every Charter migrator on a PostgreSQL server, whatever the component
_PG_LOCK_KEY = zlib.crc32(b"charter_schema_version")


class SchemaError(RuntimeError):
    """The database's schema cannot be used by this version of Charter."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _wal(cur: Any) -> None:
    """Switch the file to WAL (a lasting property of the database file, so only the first
    connection ever changes it). The switch needs the file to itself and SQLite answers "locked"
    at once instead of waiting when other connections are opening at the same moment (seen with
    eight threads starting together): retry for a while."""
    if str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    deadline = time.monotonic() + MIGRATION_BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    # pysqlite's implicit BEGIN is DEFERRED: a transaction that reads and then writes can hit
    # SQLITE_BUSY without waiting. Charter issues BEGIN itself (see transaction()).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    _wal(cur)
    cur.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; only the last commits
    cur.execute("PRAGMA foreign_keys=ON")  # of a power cut may be lost, not the database
    # a forgotten user's rows are overwritten with zeros, not left in free pages, whatever
    # the SQLite build's default (Debian's is on, the upstream default off)
    cur.execute("PRAGMA secure_delete=ON")
    cur.close()


def make_engine(url: str | sa.URL) -> Engine:
    """An engine for ``sqlite:///path`` (WAL, a busy timeout, real transactions) or any other
    SQLAlchemy URL, e.g. ``postgresql+psycopg://user@host/db``: its connections are pinged
    before use, so one the server closed meanwhile (a terminated backend, a restart) is
    replaced instead of failing the statement, and a connection attempt gives up after
    ``PG_CONNECT_TIMEOUT_S`` unless the URL says otherwise."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args: dict[str, Any] = {}
        if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
        return sa.create_engine(
            parsed, pool_pre_ping=True, connect_args=connect_args, hide_parameters=True
        )
    memory = parsed.database in (None, "", ":memory:")
    engine = sa.create_engine(
        parsed,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        # an error's text names the statement, never the values bound to it (what users typed:
        # issue 16), whoever logs or shows it
        hide_parameters=True,
        # an in-memory database exists once per connection: share one (single-threaded use)
        **({"poolclass": StaticPool} if memory else {}),
    )
    # a pool event, not a connection event: those would put an event dispatch on every
    # statement (measured: a quarter of a transition's time)
    event.listen(engine, "connect", _sqlite_on_connect)
    return engine


def _driver(raw: Any, statement: str) -> None:
    """``statement`` on the driver's connection; its error as SQLAlchemy would raise it (an
    ``OperationalError`` for "database is locked"), so callers catch one family."""
    try:
        raw.execute(statement)
    except sqlite3.Error as exc:
        raise sa.exc.DBAPIError.instance(statement, None, exc, sqlite3.Error) from exc


@contextmanager
def transaction(
    engine: Engine, *, write: bool = False, wait_ms: int | None = None
) -> Iterator[Connection]:
    """A connection in a transaction, committed when the block ends, rolled back if it raises.

    On SQLite a writing transaction is ``BEGIN IMMEDIATE``: it takes the write lock up front,
    so the busy timeout applies to it instead of a lock upgrade failing halfway through;
    ``wait_ms`` replaces the busy timeout for this transaction.
    """
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        # straight to the driver: SQLAlchemy's own BEGIN is a no-op here (autocommit
        # driver), and its statement machinery would cost a tenth of a transition
        raw: Any = conn.connection.driver_connection if sqlite else None
        if sqlite and wait_ms is not None:
            raw.execute(f"PRAGMA busy_timeout={wait_ms}")
        try:
            with conn.begin():
                if sqlite:
                    _driver(raw, "BEGIN IMMEDIATE" if write else "BEGIN")
                yield conn
        finally:
            if sqlite and wait_ms is not None:
                raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


def checkpoint(engine: Engine) -> bool:
    """SQLite: copy every frame of the WAL into the database file and truncate the WAL to zero
    bytes (``PRAGMA wal_checkpoint(TRUNCATE)``), waiting up to the busy timeout for readers of
    older frames. What was deleted (zeroed in the file by ``secure_delete``) then survives in
    neither file. False when a reader kept the WAL from being truncated; True on other
    databases, which have no such file."""
    if engine.dialect.name != "sqlite":
        return True
    with engine.connect() as conn:
        raw: Any = conn.connection.driver_connection
        busy, _frames, _copied = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy


_VERSIONS = sa.Table(
    SCHEMA_TABLE,
    sa.MetaData(),
    sa.Column("component", sa.String, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("name", sa.String, nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)


def _check_order(migrations: Sequence[Migration]) -> None:
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1, 2, 3 ... in order, got {versions}")


def migrate(engine: Engine, component: str, migrations: Sequence[Migration]) -> list[int]:
    """Apply the migrations this database lacks; return the versions applied by this call."""
    _check_order(migrations)
    applied_now: list[int] = []
    with transaction(engine, write=True, wait_ms=MIGRATION_BUSY_TIMEOUT_MS) as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        _VERSIONS.create(conn, checkfirst=True)
        done = set(
            conn.scalars(sa.select(_VERSIONS.c.version).where(_VERSIONS.c.component == component))
        )
        newest = max(done, default=0)
        if newest > len(migrations):
            raise SchemaError(
                f"the database's {component} schema is at version {newest}, newer than this "
                f"Charter knows ({len(migrations)}): upgrade Charter or use another database"
            )
        for m in migrations:
            if m.version in done:
                continue
            m.apply(conn)
            conn.execute(
                _VERSIONS.insert().values(
                    component=component,
                    version=m.version,
                    name=m.name,
                    applied_at=datetime.now(UTC),
                )
            )
            applied_now.append(m.version)
    return applied_now


def schema_versions(engine: Engine, component: str) -> list[int]:
    """The versions applied to this database, in order (empty before the first migrate)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(SCHEMA_TABLE):
            return []
        query = sa.select(_VERSIONS.c.version).where(_VERSIONS.c.component == component)
        return sorted(conn.scalars(query))


class MigratedStore:
    """A store on a URL (its own engine) or on an engine shared with other stores (left open
    by ``dispose``), its component migrated when it opens."""

    def __init__(
        self, url: str | sa.URL | Engine, component: str, migrations: Sequence[Migration]
    ) -> None:
        self._owned = not isinstance(url, Engine)
        self._engine = url if isinstance(url, Engine) else make_engine(url)
        try:
            migrate(self._engine, component=component, migrations=migrations)
        except BaseException:
            self.dispose()
            raise

    @property
    def engine(self) -> Engine:
        return self._engine

    def dispose(self) -> None:
        if self._owned:
            self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()
