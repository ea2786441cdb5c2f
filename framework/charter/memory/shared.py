"""Shared memory and its federation across processes (seed 000 §6.1).

When several agents (sales, after-sales, support — or several workers of one service) share a
database, some facts belong to no user: "产品X已停产", "服务协议V3.0生效". They live in one
shared pool, ``memory_shared`` (key, value, version, who and when), and every process keeps a
local cache of it so that reading a shared fact costs a dictionary lookup.

Federation: on PostgreSQL a write commits ``NOTIFY charter_shared_memory, '<key>'`` in the same
transaction (PostgreSQL delivers it only if the write commits), and every process whose
``SharedMemory`` was started with ``listen()`` refreshes that key from the table on a background
thread. On SQLite — one machine, usually one process — there is no broadcast: ``get`` reads
through to the table when the cache is older than ``max_age_s``.

Shared facts are not personal data: write them through ``WritePipeline.scrub`` when they come
from users. Values are plain text; versions only grow (a write that lost a race is retried on
the new version, never lost).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from charter.goals.migrations import Migration, make_engine, migrate, transaction

log = logging.getLogger(__name__)
CHANNEL = "charter_shared_memory"
COMPONENT = "shared_memory"


def _v1(conn: sa.Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        "memory_shared",
        md,
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("value", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_by", sa.String, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn)


MIGRATIONS = (Migration(1, "memory_shared", _v1),)
_TABLE = sa.Table(
    "memory_shared",
    sa.MetaData(),
    sa.Column("key", sa.String, primary_key=True),
    sa.Column("value", sa.String),
    sa.Column("version", sa.Integer),
    sa.Column("updated_by", sa.String),
    sa.Column("updated_at", sa.DateTime(timezone=True)),
)


@dataclass(frozen=True)
class SharedFact:
    key: str
    value: str
    version: int
    updated_by: str
    updated_at: datetime


class SharedMemory:
    """The shared pool of one database, with this process's cache of it."""

    def __init__(
        self,
        url: str,
        *,
        max_age_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        on_refresh: Callable[[str], object] | None = None,
    ) -> None:
        self._url = url
        self._engine = make_engine(url)
        migrate(self._engine, component=COMPONENT, migrations=MIGRATIONS)
        self._postgres = self._engine.dialect.name == "postgresql"
        self._max_age = max_age_s
        self._clock = clock
        self._on_refresh = on_refresh  # called with each key a notification refreshed
        self._cache: dict[str, tuple[SharedFact | None, float]] = {}
        self._lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self._listening = threading.Event()

    # ---- reading and writing ----------------------------------------------------------------

    def get(self, key: str) -> SharedFact | None:
        """The shared fact, from the cache while it is fresh: for ever when this process
        listens on PostgreSQL (notifications keep it current), else ``max_age_s``."""
        with self._lock:
            hit = self._cache.get(key)
        live = self._listening.is_set()
        if hit is not None and (live or self._clock() - hit[1] < self._max_age):
            return hit[0]
        return self._load(key)

    def put(self, key: str, value: str, *, updated_by: str) -> SharedFact:
        """Write the fact (a new version) and tell every listening process."""
        now = datetime.now(UTC)
        with transaction(self._engine, write=True) as conn:
            row = conn.execute(
                sa.select(_TABLE.c.version).where(_TABLE.c.key == key).with_for_update()
            ).first()
            version = 1 if row is None else int(row[0]) + 1
            values = {"value": value, "version": version, "updated_by": updated_by}
            if row is None:
                conn.execute(_TABLE.insert().values(key=key, updated_at=now, **values))
            else:
                conn.execute(
                    _TABLE.update().where(_TABLE.c.key == key).values(updated_at=now, **values)
                )
            if self._postgres:  # delivered at commit, and only if the write commits
                conn.execute(sa.text("SELECT pg_notify(:c, :k)"), {"c": CHANNEL, "k": key})
        fact = SharedFact(key, value, version, updated_by, now)
        self._remember(key, fact)
        return fact

    def _load(self, key: str) -> SharedFact | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(_TABLE).where(_TABLE.c.key == key)).first()
        fact = None if row is None else SharedFact(*row)
        self._remember(key, fact)
        return fact

    def _remember(self, key: str, fact: SharedFact | None) -> None:
        with self._lock:
            cached = self._cache.get(key)
            # a notification may race a slower read: never go back to an older version
            if (
                fact is None
                or cached is None
                or cached[0] is None
                or (cached[0].version <= fact.version)
            ):
                self._cache[key] = (fact, self._clock())

    # ---- federation -------------------------------------------------------------------------

    def listen(self, timeout_s: float = 10.0) -> None:
        """Start refreshing the cache from notifications (PostgreSQL only; a no-op elsewhere).
        Returns once the LISTEN is in place, so a write after it is never missed."""
        if not self._postgres or self._listener is not None:
            return
        self._listener = threading.Thread(target=self._listen, name="charter-shared", daemon=True)
        self._listener.start()
        if not self._listening.wait(timeout_s):
            raise TimeoutError("the shared-memory listener did not start")

    def _listen(self) -> None:
        import psycopg

        conninfo = sa.make_url(self._url).set(drivername="postgresql")
        dsn = conninfo.render_as_string(hide_password=False)
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                with self._lock:
                    self._cache.clear()  # what was read before listening may be stale
                self._listening.set()
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        self._load(note.payload)
                        if self._on_refresh is not None:
                            self._on_refresh(note.payload)
        except Exception:  # a lost connection falls back to expiring reads, never to stale ones
            log.exception("shared-memory listener stopped")
        finally:
            self._listening.clear()

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
        self._engine.dispose()

    def __enter__(self) -> SharedMemory:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
