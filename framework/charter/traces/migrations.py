"""The traces component's migrations (``charter_schema_version`` rows with component
``traces``), applied by ``charter.store.migrations.migrate`` under its cross-process lock.

Each migration is a frozen snapshot of the DDL at its version, never ``store.TRACES`` as it is
today: version 1 must create what version 2 expects to alter, whatever the tables become.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from charter.store.migrations import Migration

COMPONENT = "traces"


def _v1_trace_tables(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        "trace",
        md,
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("tenant", sa.String, nullable=True),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("domain", sa.String, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("verdict", sa.String, nullable=False),
        sa.Column("reply", sa.Text, nullable=False),
        sa.Index("ix_trace_started", "started_at"),
        sa.Index("ix_trace_user_started", "user_id", "started_at"),
        sa.Index("ix_trace_session_started", "session_id", "started_at"),
    )
    sa.Table(
        "trace_step",
        md,
        sa.Column("trace_id", sa.String, sa.ForeignKey("trace.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("started_ms", sa.Float, nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("decision", sa.String, nullable=False),
        sa.Column("inputs", sa.Text, nullable=False),
        sa.Column("outputs", sa.Text, nullable=False),
        sa.Index("ix_trace_step_name", "name"),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


TRACE_MIGRATIONS: tuple[Migration, ...] = (Migration(1, "trace, trace_step", _v1_trace_tables),)
