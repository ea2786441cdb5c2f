"""The tickets component's migrations (``charter_schema_version`` rows with component
``tickets``), applied by ``charter.store.migrations.migrate`` under its cross-process lock.

Each migration is a frozen snapshot of the DDL at its version, never ``tickets.TICKETS`` as it
is today: version 1 must create what version 2 expects to alter, whatever the table becomes.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from charter.store.migrations import Migration

COMPONENT = "tickets"


def _v1_skill_ticket(conn: Connection) -> None:
    md = sa.MetaData()
    when = sa.DateTime(timezone=True)
    sa.Table(
        "skill_ticket",
        md,
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False, unique=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("updated_at", when, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("queue", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("domain", sa.String, nullable=False),
        sa.Column("skill", sa.String, nullable=True),
        sa.Column("reason", sa.String, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("context", sa.Text, nullable=False),
        sa.Column("assignee", sa.String, nullable=True),
        sa.Column("note", sa.Text, nullable=True),
        sa.Index("ix_skill_ticket_status_seq", "status", "seq"),
        sa.Index("ix_skill_ticket_user_seq", "user_id", "seq"),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


TICKET_MIGRATIONS: tuple[Migration, ...] = (Migration(1, "skill_ticket", _v1_skill_ticket),)
