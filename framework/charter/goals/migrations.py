"""The goal store's migrations (component ``goals``): frozen snapshots of the DDL at each
version, applied by ``charter.store.migrations.migrate``.

``tests/unit/goals/test_migrations.py`` checks that the migrated schema equals the models in
``goals/tables.py``, so a change there without a migration here fails the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from charter.store import migrations as M
from charter.store.migrations import Migration

COMPONENT = "goals"


def _v1_goal_tables(conn: Connection) -> None:
    md = sa.MetaData()
    when = sa.DateTime(timezone=True)
    sa.Table(
        "goal_tree",
        md,
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("parent_id", sa.String, sa.ForeignKey("goal_tree.id"), nullable=True),
        sa.Column("root_id", sa.String, nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("kind", sa.String, nullable=False),
        sa.Column("intent", sa.String, nullable=False),
        sa.Column("description", sa.String, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("timeout_s", sa.Integer, nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("updated_at", when, nullable=False),
        sa.Column("activated_at", when, nullable=True),
        sa.Index("ix_goal_tree_user_session", "user_id", "session_id"),
        sa.Index("ix_goal_tree_status_activated", "status", "activated_at"),
        sa.Index("ix_goal_tree_parent", "parent_id"),
    )
    sa.Table(
        "goal_context",
        md,
        sa.Column("goal_id", sa.String, sa.ForeignKey("goal_tree.id"), primary_key=True),
        sa.Column("slots", sa.JSON, nullable=False),
        sa.Column("inherited", sa.JSON, nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
    )
    sa.Table(
        "goal_history",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("goal_id", sa.String, sa.ForeignKey("goal_tree.id"), nullable=False),
        sa.Column("from_status", sa.String, nullable=True),
        sa.Column("to_status", sa.String, nullable=False),
        sa.Column("actor", sa.String, nullable=False),
        sa.Column("trigger", sa.String, nullable=False),
        sa.Column("at", when, nullable=False),
        sa.Index("ix_goal_history_goal", "goal_id", "id"),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


GOAL_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "goal_tree, goal_context, goal_history", _v1_goal_tables),
)


def migrate(
    engine: Engine, component: str = COMPONENT, migrations: Sequence[Migration] = GOAL_MIGRATIONS
) -> list[int]:
    """``charter.store.migrations.migrate`` for the goal tables unless told otherwise."""
    return M.migrate(engine, component, migrations)


def schema_versions(engine: Engine, component: str = COMPONENT) -> list[int]:
    """The goal tables' applied versions (``charter.store.migrations.schema_versions``)."""
    return M.schema_versions(engine, component)
