"""Reading goals back: one goal, a user's tree, the active goals of a session, the overdue
ones (the sweeper), a goal's history and the slot context it inherits. The writes, and the
compare-and-set every status change is, are ``charter.goals.store``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from charter.goals.session import SessionGoals, merged
from charter.goals.store_api import GoalNotFound
from charter.goals.tables import GOAL_CONTEXT as C
from charter.goals.tables import GOAL_HISTORY as H
from charter.goals.tables import GOAL_TREE as T
from charter.goals.tables import Goal, HistoryEntry
from charter.store.clock import as_utc
from charter.store.migrations import MigratedStore, transaction
from charter.store.privacy import GoalPrivacy

_IN_CREATION_ORDER = (
    sa.select(T).join(H, sa.and_(H.c.goal_id == T.c.id, H.c.from_status.is_(None))).order_by(H.c.id)
)


class GoalReads(MigratedStore):
    """The goal store's queries (``GoalStore`` adds the writes)."""

    _privacy: GoalPrivacy

    def _goals(self, query: sa.Select[Any]) -> list[Goal]:
        with self._engine.connect() as conn:
            return [Goal.from_row(m) for m in conn.execute(query).mappings()]

    def get(self, goal_id: str) -> Goal | None:
        found = self._goals(sa.select(T).where(T.c.id == goal_id))
        return found[0] if found else None

    def tree(self, user_id: str, session_id: str | None = None) -> list[Goal]:
        """Every goal of the user (in one session, or all), in creation order."""
        query = _IN_CREATION_ORDER.where(T.c.user_id == user_id)
        if session_id is not None:
            query = query.where(T.c.session_id == session_id)
        return self._goals(query)

    def active(self, user_id: str, session_id: str) -> list[Goal]:
        return self._goals(
            _IN_CREATION_ORDER.where(
                T.c.user_id == user_id, T.c.session_id == session_id, T.c.status == "active"
            )
        )

    def session(self, user_id: str, session_id: str) -> SessionGoals:
        """The session's goals and their contexts in one snapshot (``charter.goals.session``):
        two queries, whatever the number of goals, plus one per level of a parent outside
        the session (there is none unless a caller made one)."""
        with transaction(self._engine) as conn:
            goals = tuple(
                Goal.from_row(m)
                for m in conn.execute(
                    _IN_CREATION_ORDER.where(T.c.user_id == user_id, T.c.session_id == session_id)
                ).mappings()
            )
            rows: dict[str, tuple[str | None, Any, Any]] = {}
            wanted = {g.id for g in goals}
            asked: set[str] = set()
            while wanted:
                asked |= wanted
                query = (
                    sa.select(T.c.id, T.c.parent_id, C.c.slots, C.c.inherited)
                    .join(C, C.c.goal_id == T.c.id)
                    .where(T.c.id.in_(sorted(wanted)))
                )
                for row in conn.execute(query):
                    rows[row.id] = (row.parent_id, row.inherited, row.slots)
                wanted = {p for p, _, _ in rows.values() if p is not None} - asked
        return SessionGoals(goals, rows, self._privacy.open, user_id)

    def overdue(self, now: datetime) -> list[Goal]:
        """Active goals that have been active longer than their timeout at ``now``."""
        now = as_utc(now)
        query = sa.select(T).where(
            T.c.status == "active", T.c.timeout_s.is_not(None), T.c.activated_at < now
        )
        return [
            g
            for g in self._goals(query.order_by(T.c.activated_at, T.c.id))
            if g.activated_at is not None
            and g.timeout_s is not None
            and (now - g.activated_at).total_seconds() > g.timeout_s
        ]

    def history(self, goal_id: str) -> list[HistoryEntry]:
        """Every status change of the goal, its creation first."""
        query = sa.select(H).where(H.c.goal_id == goal_id).order_by(H.c.id)
        with self._engine.connect() as conn:
            return [HistoryEntry.from_row(m) for m in conn.execute(query).mappings()]

    def context(self, goal_id: str) -> dict[str, Any]:
        """The slots a goal can use (``charter.goals.session.merged``): from the root down to
        the goal, each goal's inherited slots and then its own, nearer goals over farther ones,
        own slots over inherited; bookkeeping keys only the goal's own."""
        query = (
            sa.select(T.c.parent_id, T.c.user_id, C.c.slots, C.c.inherited)
            .join(C, C.c.goal_id == T.c.id)
            .where(T.c.id == sa.bindparam("gid"))
        )
        layers: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
        user_id = ""
        with transaction(self._engine) as conn:  # one snapshot for the whole chain
            current: str | None = goal_id
            while current is not None:
                row = conn.execute(query, {"gid": current}).first()
                if row is None:
                    raise GoalNotFound(current)
                layers.append((row.inherited, row.slots))
                user_id = row.user_id
                current = row.parent_id
        opened: dict[str, Any] = self._privacy.open(merged(layers), user_id)
        return opened
