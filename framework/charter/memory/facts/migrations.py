"""The memory component's migrations (``charter_schema_version`` rows with component
``memory``), applied by ``charter.store.migrations.migrate`` under its cross-process lock.

Each migration is a frozen snapshot of the DDL at its version, never ``tables.py`` as it is
today: version 1 must create what version 2 expects to alter, whatever the models become.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from charter.store.migrations import Migration

COMPONENT = "memory"


def _v1_fact_tables(conn: Connection) -> None:
    md = sa.MetaData()
    when = sa.DateTime(timezone=True)
    active = sa.text("status = 'active'")
    sa.Table(
        "memory_fact",
        md,
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("key", sa.String, nullable=False),
        sa.Column("value", sa.String, nullable=False),
        sa.Column("memory_type", sa.String, nullable=False),
        sa.Column("level", sa.String, nullable=False),
        sa.Column("encrypted", sa.Boolean, nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("source", sa.String, nullable=False),
        sa.Column("domain", sa.String, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("created_at", when, nullable=False),
        sa.Column("updated_at", when, nullable=False),
        sa.Column("valid_until", when, nullable=True),
        sa.Column("entity_ref", sa.String, nullable=True),
        sa.Column("intent_type", sa.String, nullable=True),
        sa.Column("consent_source", sa.String, nullable=True),
        sa.Column("value_score", sa.Float, nullable=False),
        sa.Column("supersedes", sa.String, nullable=True),
        sa.Column("contradicts", sa.String, nullable=True),
        sa.Column("access_count", sa.Integer, nullable=False),
        sa.Column("last_used_at", when, nullable=True),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("tier", sa.String, nullable=False),
        sa.Index("ix_memory_fact_user_key_status", "user_id", "key", "status"),
        sa.Index("ix_memory_fact_user_entity", "user_id", "entity_ref"),
        sa.Index("ix_memory_fact_user_intent", "user_id", "intent_type"),
        sa.Index("ix_memory_fact_status_valid_until", "status", "valid_until"),
        sa.Index(
            "ux_memory_fact_active_key",
            "user_id",
            "key",
            unique=True,
            sqlite_where=active,
            postgresql_where=active,
        ),
    )
    sa.Table(
        "memory_audit",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", when, nullable=False),
        sa.Column("actor", sa.String, nullable=False),
        sa.Column("role", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("action", sa.String, nullable=False),
        sa.Column("memory_id", sa.String, nullable=True),
        sa.Column("allowed", sa.Boolean, nullable=False),
        sa.Column("reason", sa.String, nullable=False),
        sa.Index("ix_memory_audit_user", "user_id", "id"),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


MEMORY_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "memory_fact, memory_audit", _v1_fact_tables),
)
