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

Namespaces: deployments that share a database but not their knowledge give their pools
different namespaces (``SharedSettings.namespace``); a namespace's facts are invisible to every
other. ``facts()`` lists the namespace (the pool is small: global facts, not users' memories)
and ``mentioned`` finds the facts a turn names, which is how ``Agent`` reads the pool
(``charter.agent.shared``).

Shared facts are not personal data: the agent writes only values in which no PII recognizer
finds anything, and never who said them. Values are plain text; versions only grow (a write
that lost a race is retried on the new version, never lost).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from charter.store.migrations import MigratedStore, Migration, transaction

log = logging.getLogger(__name__)
CHANNEL = "charter_shared_memory"
COMPONENT = "shared_memory"
SEP = "\x1f"  # between a namespace and a key in the table: no key may hold a control character
NAMESPACE = re.compile(r"[a-z0-9][a-z0-9_.-]*")
MAX_KEY = 200


@dataclass(frozen=True)
class SharedSettings:
    """Where an agent's shared pool is and what its turns may put there: ``url`` a database
    (SQLite file or PostgreSQL), ``namespace`` the pool within it, ``keys`` the slots whose
    values a turn shares (``intent.slot`` or ``slot``; empty: turns only read the pool)."""

    url: str
    namespace: str = "default"
    keys: frozenset[str] = field(default_factory=frozenset)
    max_age_s: float = 5.0

    @classmethod
    def from_config(cls, url: str, namespace: str, keys: str) -> SharedSettings | None:
        """The settings of ``[memory] shared_url``, ``shared_namespace``, ``shared_keys`` (a
        comma-separated list); None when ``url`` is empty (no shared pool)."""
        if not url.strip():
            return None
        names = frozenset(k.strip() for k in keys.split(",") if k.strip())
        return cls(url.strip(), namespace or "default", names)


def check_key(key: str) -> str:
    """A key as stored: not empty, at most 200 characters, no control character."""
    if not key.strip():
        raise ValueError("a shared fact needs a key")
    if len(key) > MAX_KEY:
        raise ValueError(f"a shared key has at most {MAX_KEY} characters, not {len(key)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise ValueError(f"a shared key may not hold a control character: {key!r}")
    return key


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


class SharedMemory(MigratedStore):
    """The shared pool of one database (one ``namespace`` of it), with this process's cache."""

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "",
        max_age_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        on_refresh: Callable[[str], object] | None = None,
    ) -> None:
        if namespace and not NAMESPACE.fullmatch(namespace):
            raise ValueError(
                f"a shared-memory namespace is a name such as 'acme-support', not {namespace!r}"
            )
        self.namespace = namespace
        self._prefix = f"{namespace}{SEP}" if namespace else ""
        self._url = url
        super().__init__(url, COMPONENT, MIGRATIONS)
        self._postgres = self._engine.dialect.name == "postgresql"
        self._max_age = max_age_s
        self._clock = clock
        self._on_refresh = on_refresh  # called with each key a notification refreshed
        self._cache: dict[str, tuple[SharedFact | None, float]] = {}
        self._all: tuple[tuple[SharedFact, ...], float] | None = None  # the namespace, listed
        self._changes = 0  # writes and notifications seen: a listing read across one is stale
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
        if hit is not None and self._fresh(hit[1]):
            return hit[0]
        return self._load(self._prefix + key)

    def facts(self) -> tuple[SharedFact, ...]:
        """Every fact of the namespace, by key, as fresh as ``get``'s."""
        with self._lock:
            listed, changes = self._all, self._changes
        if listed is not None and self._fresh(listed[1]):
            return listed[0]
        with self._engine.connect() as conn:
            query = sa.select(_TABLE).order_by(_TABLE.c.key)
            if self._prefix:
                query = query.where(_TABLE.c.key.startswith(self._prefix, autoescape=True))
            rows = conn.execute(query).all()
        now = self._clock()
        found = tuple(self._fact(r) for r in rows if self._ours(r[0]))
        with self._lock:
            if self._changes == changes:  # else a change came meanwhile: read again next time
                self._all = (found, now)
        for fact in found:
            self._remember(fact.key, fact)
        return found

    def mentioned(self, text: str, names: Iterable[str] = ()) -> tuple[SharedFact, ...]:
        """The facts a turn is about: their key occurs in ``text`` (keys of two characters or
        more) or is one of ``names`` (a slot's value, a slot's name), longest key first."""
        wanted = {n for n in names if n}
        hits = [f for f in self.facts() if f.key in wanted or (len(f.key) >= 2 and f.key in text)]
        return tuple(sorted(hits, key=lambda f: (-len(f.key), f.key)))

    def put(self, key: str, value: str, *, updated_by: str) -> SharedFact:
        """Write the fact (a new version) and tell every listening process."""
        stored = self._prefix + check_key(key)
        now = datetime.now(UTC)
        with transaction(self._engine, write=True) as conn:
            row = conn.execute(
                sa.select(_TABLE.c.version).where(_TABLE.c.key == stored).with_for_update()
            ).first()
            version = 1 if row is None else int(row[0]) + 1
            values = {"value": value, "version": version, "updated_by": updated_by}
            if row is None:
                conn.execute(_TABLE.insert().values(key=stored, updated_at=now, **values))
            else:
                conn.execute(
                    _TABLE.update().where(_TABLE.c.key == stored).values(updated_at=now, **values)
                )
            if self._postgres:  # delivered at commit, and only if the write commits
                conn.execute(sa.text("SELECT pg_notify(:c, :k)"), {"c": CHANNEL, "k": stored})
        fact = SharedFact(key, value, version, updated_by, now)
        self._remember(key, fact)
        self._changed()
        return fact

    def _changed(self) -> None:
        """The listing is stale: read again on the next ``facts()``."""
        with self._lock:
            self._all = None
            self._changes += 1

    def _fresh(self, at: float) -> bool:
        return self._listening.is_set() or self._clock() - at < self._max_age

    def _ours(self, stored: str) -> bool:
        """Is the stored key of this namespace? (The empty namespace: keys of no namespace.)"""
        if self._prefix:
            return stored.startswith(self._prefix)
        return SEP not in stored

    def _fact(self, row: Any) -> SharedFact:
        key, value, version, updated_by, updated_at = row
        return SharedFact(key[len(self._prefix) :], value, version, updated_by, updated_at)

    def _load(self, stored: str) -> SharedFact | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(_TABLE).where(_TABLE.c.key == stored)).first()
        fact = None if row is None else self._fact(row)
        self._remember(stored[len(self._prefix) :], fact)
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

    @property
    def listening(self) -> bool:
        """Is this process following the pool's notifications (its cache never expires)?"""
        return self._listening.is_set()

    def _listen(self) -> None:
        import psycopg

        conninfo = sa.make_url(self._url).set(drivername="postgresql")
        dsn = conninfo.render_as_string(hide_password=False)
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                with self._lock:
                    self._cache.clear()  # what was read before listening may be stale
                self._changed()
                self._listening.set()
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        if not self._ours(note.payload):
                            continue  # another namespace's fact
                        self._load(note.payload)
                        self._changed()
                        if self._on_refresh is not None:
                            self._on_refresh(note.payload[len(self._prefix) :])
        except Exception:  # a lost connection falls back to expiring reads, never to stale ones
            log.exception("shared-memory listener stopped")
        finally:
            self._listening.clear()

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
        self.dispose()

    def __exit__(self, *exc: object) -> None:
        self.close()
