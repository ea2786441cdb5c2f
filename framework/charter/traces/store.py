"""Traces in SQL (SQLite by default, PostgreSQL by URL), next to the goal store's tables.

Two tables, ``trace`` (one row per turn) and ``trace_step`` (one row per step, keyed by trace
and position), rather than one row with the steps as a JSON column: ``charter health`` counts
steps over thousands of turns (which ladder step answered, how often a fallback ran, which rules
failed), and ``SELECT name, decision, count(*) FROM trace_step ...`` does that in the database,
the same on SQLite and PostgreSQL, where a JSON column would have every row shipped to Python
and parsed. Saving stays one transaction (one insert, one ``executemany``), and a trace is
read whole with two queries whatever its length.

A step's inputs and outputs are stored as JSON text exactly as ``json.dumps`` writes it (key
order and Chinese text kept on every database; PostgreSQL's ``jsonb`` would reorder keys): they
are a record for people and for ``--format json``, not columns to query.

Tenants: every read takes ``tenant`` and matches it exactly, None matching only traces without
one. A trace of another tenant is not there for the caller, so a missing ``tenant=`` argument
on a shared server fails closed (finds nothing) instead of showing every tenant's turns.
"""

from __future__ import annotations

import builtins
import json
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from charter.store.migrations import MigratedStore, transaction
from charter.traces.migrations import COMPONENT, TRACE_MIGRATIONS
from charter.traces.model import Trace, TraceStep, as_utc, jsonable

DEFAULT_LIMIT = 20

_MD = sa.MetaData()
TRACES = sa.Table(
    "trace",
    _MD,
    sa.Column("id", sa.String, primary_key=True),
    sa.Column("tenant", sa.String, nullable=True),
    sa.Column("user_id", sa.String, nullable=False),
    sa.Column("session_id", sa.String, nullable=False),
    sa.Column("domain", sa.String, nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("verdict", sa.String, nullable=False),
    sa.Column("reply", sa.Text, nullable=False),
    sa.Index("ix_trace_started", "started_at"),  # prune, and list without a filter
    sa.Index("ix_trace_user_started", "user_id", "started_at"),
    sa.Index("ix_trace_session_started", "session_id", "started_at"),
)
STEPS = sa.Table(
    "trace_step",
    _MD,
    sa.Column("trace_id", sa.String, sa.ForeignKey("trace.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),  # 0, 1, 2 ...
    sa.Column("name", sa.String, nullable=False),
    sa.Column("started_ms", sa.Float, nullable=False),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("decision", sa.String, nullable=False),
    sa.Column("inputs", sa.Text, nullable=False),
    sa.Column("outputs", sa.Text, nullable=False),
    sa.Index("ix_trace_step_name", "name"),  # health metrics count steps by name
)
T, S = TRACES, STEPS


class TraceExists(ValueError):
    """A trace with this id has been saved already."""


class TraceStoreProtocol(Protocol):
    """What the turn loop needs: its tests pass a fake."""

    def save(self, trace: Trace) -> None: ...


def _json(value: Mapping[str, Any], trace_id: str, step: str) -> str:
    try:
        return json.dumps(jsonable(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"trace {trace_id}, step {step!r}: not JSON-serialisable: {exc}") from exc


def _tenant_is(tenant: str | None) -> sa.ColumnElement[bool]:
    return T.c.tenant.is_(None) if tenant is None else T.c.tenant == tenant


def _step(m: Mapping[Any, Any]) -> TraceStep:
    return TraceStep(
        name=m["name"],
        started_ms=m["started_ms"],
        duration_ms=m["duration_ms"],
        inputs=json.loads(m["inputs"]),
        outputs=json.loads(m["outputs"]),
        decision=m["decision"],
    )


def _trace(m: Mapping[Any, Any], steps: builtins.list[TraceStep]) -> Trace:
    return Trace(
        id=m["id"],
        user_id=m["user_id"],
        session_id=m["session_id"],
        domain=m["domain"],
        started_at=as_utc(m["started_at"]),
        duration_ms=m["duration_ms"],
        steps=tuple(steps),
        reply=m["reply"],
        verdict=m["verdict"],
        tenant=m["tenant"],
    )


class TraceStore(MigratedStore):
    """Traces in SQL (a URL, or an engine from ``store.migrations.make_engine`` shared with
    other stores and left open by ``dispose``), migrated on open."""

    def __init__(self, url: str | Engine) -> None:
        super().__init__(url, COMPONENT, TRACE_MIGRATIONS)

    # ---- writing -------------------------------------------------------------------------

    def save(self, trace: Trace) -> None:
        """Store a finished trace, all of it or nothing. Raises TraceExists for an id saved
        before, ValueError for inputs or outputs JSON cannot hold."""
        row = {
            "id": trace.id,
            "tenant": trace.tenant,
            "user_id": trace.user_id,
            "session_id": trace.session_id,
            "domain": trace.domain,
            "started_at": as_utc(trace.started_at),
            "duration_ms": trace.duration_ms,
            "verdict": trace.verdict,
            "reply": trace.reply,
        }
        steps = [
            {
                "trace_id": trace.id,
                "seq": seq,
                "name": s.name,
                "started_ms": s.started_ms,
                "duration_ms": s.duration_ms,
                "decision": s.decision,
                "inputs": _json(s.inputs, trace.id, s.name),
                "outputs": _json(s.outputs, trace.id, s.name),
            }
            for seq, s in enumerate(trace.steps)
        ]
        try:
            with transaction(self._engine, write=True) as conn:
                conn.execute(T.insert(), row)
                if steps:
                    conn.execute(S.insert(), steps)
        except IntegrityError as exc:
            raise TraceExists(f"trace {trace.id} has been saved already") from exc

    def delete_user(self, user_id: str, *, tenant: str | None = None) -> int:
        """Remove every trace of a user (``forget``); returns how many traces went."""
        where = sa.and_(T.c.user_id == user_id, _tenant_is(tenant))
        with transaction(self._engine, write=True) as conn:
            return self._delete(conn, where)

    def prune(self, older_than: datetime) -> int:
        """Remove the traces (of every tenant) that started before ``older_than``; returns how
        many went. Retention is the operator's policy, so it is one cut-off for everyone."""
        where = T.c.started_at < as_utc(older_than)
        with transaction(self._engine, write=True) as conn:
            return self._delete(conn, where)

    @staticmethod
    def _delete(conn: Connection, where: sa.ColumnElement[bool]) -> int:
        # steps first, explicitly: an engine passed in may not enforce foreign keys (SQLite)
        ids = sa.select(T.c.id).where(where).scalar_subquery()
        conn.execute(sa.delete(S).where(S.c.trace_id.in_(ids)))
        return int(conn.execute(sa.delete(T).where(where)).rowcount)

    # ---- reading -------------------------------------------------------------------------

    def get(self, trace_id: str, *, tenant: str | None = None) -> Trace | None:
        """The trace, or None when there is none with this id in ``tenant``."""
        query = sa.select(T).where(T.c.id == trace_id, _tenant_is(tenant))
        with self._engine.connect() as conn:
            row = conn.execute(query).mappings().first()
            if row is None:
                return None
            return _trace(row, self._steps(conn, [trace_id])[trace_id])

    def list(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int = DEFAULT_LIMIT,
        tenant: str | None = None,
    ) -> builtins.list[Trace]:
        """The newest ``limit`` traces of ``tenant``, newest first, only those of ``user_id``
        and ``session_id`` when given. Raises ValueError for a limit below 1."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        query = sa.select(T).where(_tenant_is(tenant))
        if user_id is not None:
            query = query.where(T.c.user_id == user_id)
        if session_id is not None:
            query = query.where(T.c.session_id == session_id)
        # the id breaks ties: it grows with time, so the order is newest first throughout
        query = query.order_by(T.c.started_at.desc(), T.c.id.desc()).limit(limit)
        with self._engine.connect() as conn:
            rows = builtins.list(conn.execute(query).mappings())
            steps = self._steps(conn, [r["id"] for r in rows])
        return [_trace(r, steps[r["id"]]) for r in rows]

    @staticmethod
    def _steps(
        conn: Connection, trace_ids: builtins.list[str]
    ) -> defaultdict[str, builtins.list[TraceStep]]:
        found: defaultdict[str, builtins.list[TraceStep]] = defaultdict(builtins.list)
        if trace_ids:
            query = sa.select(S).where(S.c.trace_id.in_(trace_ids)).order_by(S.c.trace_id, S.c.seq)
            for m in conn.execute(query).mappings():
                found[m["trace_id"]].append(_step(m))
        return found
