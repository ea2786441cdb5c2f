"""Circuit-breaker state in the database, shared by every process that opens it: one row per
skill in ``skill_breaker`` (component ``skill_breaker`` of ``charter_schema_version``).

A change is one transaction that locks the skill's row before reading it: ``SELECT ... FOR
UPDATE`` on PostgreSQL, the database's write lock (``BEGIN IMMEDIATE``) on SQLite. Two
processes that reach an open breaker after its cool-down therefore queue, and only the first
finds it open and takes the probe; the second finds it half-open and is refused.

Most calls change nothing (a closed breaker admitting, an open one refusing, a good call with
no strikes to reset), so the row is first read without a lock and the locking transaction only
runs when the decision on that read would change it; under the lock the decision is made again
on what is there by then. The rows' times are UNIX time (stored as UTC timestamps): see
``CircuitBreaker`` for why a shared breaker needs a wall clock. Database errors propagate.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from charter.skills.breaker import CLOSED, BreakerRow, State
from charter.store.migrations import MigratedStore, Migration, transaction

COMPONENT = "skill_breaker"
_T = TypeVar("_T")


def _v1(conn: Connection) -> None:
    md = sa.MetaData()
    when = sa.DateTime(timezone=True)
    sa.Table(
        "skill_breaker",
        md,
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("strikes", sa.Integer, nullable=False),
        sa.Column("slow", sa.Integer, nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("opened_at", when, nullable=True),
        sa.Column("probe_at", when, nullable=True),  # not null: a probe is out
        sa.Column("reason", sa.String, nullable=False),
        sa.Column("updated_at", when, nullable=False),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


MIGRATIONS: tuple[Migration, ...] = (Migration(1, "skill_breaker", _v1),)

_when = sa.DateTime(timezone=True)
_TABLE = sa.Table(
    "skill_breaker",
    sa.MetaData(),
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("state", sa.String),
    sa.Column("strikes", sa.Integer),
    sa.Column("slow", sa.Integer),
    sa.Column("epoch", sa.Integer),
    sa.Column("opened_at", _when),
    sa.Column("probe_at", _when),
    sa.Column("reason", sa.String),
    sa.Column("updated_at", _when),
)
_NAME: sa.BindParameter[str] = sa.bindparam("skill")
_FIELDS = ("state", "strikes", "slow", "epoch", "opened_at", "probe_at", "reason")
_GET = sa.select(*(_TABLE.c[f] for f in _FIELDS)).where(_TABLE.c.name == _NAME)
_LOCK = _GET.with_for_update()  # SQLite renders no FOR UPDATE: BEGIN IMMEDIATE locks instead
_UPDATE = (
    _TABLE.update()
    .where(_TABLE.c.name == _NAME)
    # a SET clause cannot reuse its columns' names for its parameters
    .values({f: sa.bindparam(f"v_{f}") for f in (*_FIELDS, "updated_at")})
)


def _stamp(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _unstamp(d: datetime | None) -> float | None:
    if d is None:
        return None
    # SQLite keeps no time zone: what it gives back is the UTC it was given
    return (d if d.tzinfo is not None else d.replace(tzinfo=UTC)).timestamp()


def _row(found: sa.Row[Any] | None) -> BreakerRow:
    if found is None:
        return CLOSED
    return BreakerRow(
        state=cast(State, found.state),
        strikes=found.strikes,
        slow=found.slow,
        epoch=found.epoch,
        opened_at=_unstamp(found.opened_at),
        probe_at=_unstamp(found.probe_at),
        reason=found.reason,
    )


def _values(row: BreakerRow) -> dict[str, Any]:
    return {
        "state": row.state,
        "strikes": row.strikes,
        "slow": row.slow,
        "epoch": row.epoch,
        "opened_at": _stamp(row.opened_at),
        "probe_at": _stamp(row.probe_at),
        "reason": row.reason,
        "updated_at": datetime.now(UTC),
    }


class SqlBreakerState(MigratedStore):
    """Breaker rows in the database at ``url_or_engine`` (SQLite or PostgreSQL), migrated on
    opening. An engine passed in stays the caller's to dispose of."""

    wall_clock = True

    def __init__(self, url_or_engine: str | sa.URL | Engine) -> None:
        super().__init__(url_or_engine, COMPONENT, MIGRATIONS)
        engine = self._engine
        dialect = engine.dialect.name
        # the first change of a skill creates its row; two processes may try at once
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        self._create = insert(_TABLE).on_conflict_do_nothing(index_elements=["name"])

    def read(self, name: str) -> BreakerRow:
        with self._engine.connect() as conn:
            return _row(conn.execute(_GET, {"skill": name}).first())

    def change(self, name: str, step: Callable[[BreakerRow], tuple[BreakerRow, _T]]) -> _T:
        seen = self.read(name)
        new, out = step(seen)
        if new is seen:
            return out
        with transaction(self._engine, write=True) as conn:
            found = conn.execute(_LOCK, {"skill": name}).first()
            if found is None:
                conn.execute(self._create, {"name": name, **_values(CLOSED)})
                found = conn.execute(_LOCK, {"skill": name}).first()
            row = _row(found)
            new, out = step(row)
            if new is not row:
                values = {f"v_{f}": v for f, v in _values(new).items()}
                conn.execute(_UPDATE, {"skill": name, **values})
        return out

    def names(self) -> list[str]:
        """The skills that have a row, by name (for a status of every process's breakers)."""
        with self._engine.connect() as conn:
            return sorted(conn.scalars(sa.select(_TABLE.c.name)))

    def close(self) -> None:
        self.dispose()
