"""The goal store's data: its tables as SQLModel classes (what queries use), the frozen values
the store hands out, and goal ids.

The DDL that creates them lives in ``migrations.py`` as frozen snapshots, one per schema
version; ``tests/unit/goals/test_migrations.py`` checks that the migrated schema equals these
classes, so a change here without a migration fails the tests.

Timestamps are written as aware UTC datetimes (``timestamptz`` on PostgreSQL; SQLite keeps the
text without the offset, and the store reads naive values back as UTC): one convention on every
database keeps comparisons in SQL honest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, Index, SQLModel

from charter.compile.specs.goal_states import Kind, Status
from charter.store.clock import as_utc


class GoalTreeRow(SQLModel, table=True):
    """One goal: where it sits in its tree and its status. ``updated_at`` is when the status
    last changed; ``activated_at`` when it last became ``active`` (what the sweeper measures)."""

    __tablename__ = "goal_tree"
    __table_args__ = (
        Index("ix_goal_tree_user_session", "user_id", "session_id"),
        Index("ix_goal_tree_status_activated", "status", "activated_at"),
        Index("ix_goal_tree_parent", "parent_id"),
    )

    id: str = Field(primary_key=True)
    parent_id: str | None = Field(default=None, foreign_key="goal_tree.id")
    root_id: str
    depth: int
    kind: str
    intent: str
    description: str = ""
    status: str
    user_id: str
    session_id: str
    timeout_s: int | None = None
    created_at: datetime
    updated_at: datetime
    activated_at: datetime | None = None


class GoalContextRow(SQLModel, table=True):
    """A goal's own slots, what completed sub-goals handed up to it, and its own result."""

    __tablename__ = "goal_context"

    goal_id: str = Field(primary_key=True, foreign_key="goal_tree.id")
    slots: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    inherited: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class GoalHistoryRow(SQLModel, table=True):
    """One status change; ``from_status`` is None for the creation of the goal."""

    __tablename__ = "goal_history"
    __table_args__ = (Index("ix_goal_history_goal", "goal_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    goal_id: str = Field(foreign_key="goal_tree.id")
    from_status: str | None = None
    to_status: str
    actor: str
    trigger: str
    at: datetime


def _table(model: type[SQLModel]) -> sa.Table:
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, sa.Table)
    return table


GOAL_TREE = _table(GoalTreeRow)
GOAL_CONTEXT = _table(GoalContextRow)
GOAL_HISTORY = _table(GoalHistoryRow)
TABLES: tuple[sa.Table, ...] = (GOAL_TREE, GOAL_CONTEXT, GOAL_HISTORY)


# ---- values --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    id: str
    parent_id: str | None
    root_id: str
    depth: int
    kind: Kind
    intent: str
    description: str
    status: Status
    user_id: str
    session_id: str
    timeout_s: int | None
    created_at: datetime
    updated_at: datetime  # when the status last changed
    activated_at: datetime | None  # when it last became active

    @classmethod
    def from_row(cls, m: Mapping[Any, Any]) -> Goal:
        return cls(
            id=m["id"],
            parent_id=m["parent_id"],
            root_id=m["root_id"],
            depth=m["depth"],
            kind=cast(Kind, m["kind"]),
            intent=m["intent"],
            description=m["description"],
            status=cast(Status, m["status"]),
            user_id=m["user_id"],
            session_id=m["session_id"],
            timeout_s=m["timeout_s"],
            created_at=as_utc(m["created_at"]),
            updated_at=as_utc(m["updated_at"]),
            activated_at=None if m["activated_at"] is None else as_utc(m["activated_at"]),
        )


@dataclass(frozen=True)
class HistoryEntry:
    id: int
    goal_id: str
    from_status: Status | None  # None: the goal was created
    to_status: Status
    actor: str
    trigger: str
    at: datetime

    @classmethod
    def from_row(cls, m: Mapping[Any, Any]) -> HistoryEntry:
        return cls(
            id=m["id"],
            goal_id=m["goal_id"],
            from_status=m["from_status"],
            to_status=m["to_status"],
            actor=m["actor"],
            trigger=m["trigger"],
            at=as_utc(m["at"]),
        )
