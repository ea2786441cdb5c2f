"""The goal store: goal trees, their slot contexts and every status change, in SQL.

A status changes only along ``states.TRANSITIONS`` and only as a compare-and-set (seed 000
§3.3.2): ``UPDATE goal_tree SET status=:to ... WHERE id=:id AND status=:from``, committed in one
transaction with its ``goal_history`` row. Whatever runs concurrently (threads, processes,
``charter serve`` workers on one PostgreSQL), each transition happens once: on PostgreSQL
(READ COMMITTED) the writers that lose the race update no row and get ``ok=False``; on SQLite
the transaction takes the write lock before it reads (``BEGIN IMMEDIATE``), so writers queue
and a late one reads the new status and is refused. The ``on_transition`` callback (the plugin
hook ``charter_on_goal_transition``) runs after the commit, once per transition that happened,
including a goal's creation (``from_status`` None).

When a sub-goal completes, its result is merged into its parent's ``inherited`` slots in the
same transaction, so siblings and later sub-goals see it in ``context()`` (ARCHITECTURE §6).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from charter.compile.specs.goal_states import ACTORS, STATUSES, Actor, Status, allowed, kind_at
from charter.contracts.events import GoalTransition
from charter.goals.migrations import COMPONENT, GOAL_MIGRATIONS
from charter.goals.store_api import GoalNotFound as GoalNotFound
from charter.goals.store_api import GoalStoreProtocol as GoalStoreProtocol
from charter.goals.store_api import TransitionResult as TransitionResult
from charter.goals.store_reads import GoalReads
from charter.goals.tables import GOAL_CONTEXT as C
from charter.goals.tables import GOAL_HISTORY as H
from charter.goals.tables import GOAL_TREE as T
from charter.goals.tables import Goal
from charter.store.clock import Clock, as_utc, new_id, utcnow
from charter.store.migrations import transaction
from charter.store.prepared import Prepared
from charter.store.privacy import GoalPrivacy, NoPrivacy

log = logging.getLogger(__name__)

OnTransition = Callable[[GoalTransition], object]  # what it returns is ignored


def _json_object(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    out = dict(value)
    try:
        json.dumps(out)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be JSON-serialisable: {exc}") from exc
    return out


_SEL_MOVE = sa.select(T.c.status, T.c.parent_id, T.c.intent, T.c.user_id, T.c.session_id).where(
    T.c.id == sa.bindparam("gid")
)
_CAS_WHERE = (T.c.id == sa.bindparam("gid"), T.c.status == sa.bindparam("frm"))
_CAS = (
    sa.update(T)
    .where(*_CAS_WHERE)
    .values(status=sa.bindparam("to"), updated_at=sa.bindparam("now"))
)
_CAS_ACTIVATE = _CAS.values(activated_at=sa.bindparam("now"))
_RECORD = H.insert().values(
    goal_id=sa.bindparam("goal_id"),
    from_status=sa.bindparam("from_status"),
    to_status=sa.bindparam("to_status"),
    actor=sa.bindparam("actor"),
    trigger=sa.bindparam("trigger"),
    at=sa.bindparam("at"),
)


# creation order is the order of the goals' creation rows: exact even when a (fake or coarse)
# clock stamps several goals alike, and whatever ids the caller chose
class GoalStore(GoalReads):
    """The SQL goal store (SQLite by default, PostgreSQL by URL); the schema is migrated when
    the store opens. ``clock`` stamps every row and event (tests pass a fake one); ``privacy``
    keeps personal data out of the rows (``charter.store.privacy``)."""

    def __init__(
        self,
        url: str | Engine,
        *,
        on_transition: OnTransition | None = None,
        clock: Clock = utcnow,
        privacy: GoalPrivacy | None = None,
    ) -> None:
        self._privacy: GoalPrivacy = privacy or NoPrivacy()
        super().__init__(url, COMPONENT, GOAL_MIGRATIONS)
        self._on_transition = on_transition
        self._clock = clock
        # a transition's three statements, run on the driver's cursor (charter.store.prepared)
        dialect = self._engine.dialect
        self._sel_move = Prepared(_SEL_MOVE, dialect)
        self._cas = Prepared(_CAS, dialect)
        self._cas_activate = Prepared(_CAS_ACTIVATE, dialect)
        self._rec = Prepared(_RECORD, dialect)
        # statements run on the driver's cursor raise the driver's errors, not SQLAlchemy's
        driver_error: type[Exception] = dialect.dbapi.Error if dialect.dbapi else SQLAlchemyError
        self._db_errors: tuple[type[Exception], ...] = (SQLAlchemyError, driver_error)

    def close(self) -> None:
        self.dispose()

    # ---- writing -------------------------------------------------------------------------

    def create(
        self,
        intent: str,
        *,
        user_id: str,
        session_id: str,
        parent_id: str | None = None,
        description: str = "",
        slots: Mapping[str, Any] | None = None,
        timeout_s: int | None = None,
        actor: Actor = "agent",
        trigger: str = "created",
        goal_id: str | None = None,
    ) -> Goal:
        """A new ``pending`` goal (a sub-goal when ``parent_id`` is given) with its slots and
        its creation in the history. Raises GoalNotFound for an unknown parent, ValueError
        for a parent of another user or session, an unknown actor or a duplicate id."""
        if actor not in ACTORS:
            raise ValueError(f"unknown actor {actor!r} (one of {', '.join(ACTORS)})")
        own = self._privacy.seal(_json_object(slots or {}, "slots"), user_id)
        description = self._privacy.scrub(description)
        gid = goal_id or new_id()
        now = as_utc(self._clock())
        depth, root_id = 0, gid
        try:
            with transaction(self._engine, write=True) as conn:
                if parent_id is not None:
                    parent = conn.execute(sa.select(T).where(T.c.id == parent_id)).first()
                    if parent is None:
                        raise GoalNotFound(parent_id)
                    if (parent.user_id, parent.session_id) != (user_id, session_id):
                        raise ValueError(
                            f"goal {parent_id!r} belongs to user {parent.user_id!r}, session "
                            f"{parent.session_id!r}: a sub-goal must belong to the same ones"
                        )
                    depth, root_id = parent.depth + 1, parent.root_id
                row = {
                    "id": gid,
                    "parent_id": parent_id,
                    "root_id": root_id,
                    "depth": depth,
                    "kind": kind_at(depth),
                    "intent": intent,
                    "description": description,
                    "status": "pending",
                    "user_id": user_id,
                    "session_id": session_id,
                    "timeout_s": timeout_s,
                    "created_at": now,
                    "updated_at": now,
                    "activated_at": None,
                }
                conn.execute(T.insert(), row)
                conn.execute(C.insert(), {"goal_id": gid, "slots": own, "inherited": {}})
                self._record(conn, gid, None, "pending", actor, trigger, now)
        except IntegrityError as exc:
            raise ValueError(f"cannot create goal {gid!r}: {exc.orig}") from exc
        goal = Goal.from_row(row)
        self._emit(
            GoalTransition(gid, intent, None, "pending", actor, trigger, user_id, session_id, now)
        )
        return goal

    def transition(
        self,
        goal_id: str,
        to_status: Status,
        *,
        actor: Actor,
        trigger: str,
        expect: Status | None = None,
    ) -> TransitionResult:
        """Move a goal along TRANSITIONS; ``expect`` refuses unless the goal is in that status
        now (the sweeper must not abort a goal that completed meanwhile). Never raises."""
        return self._move(goal_id, to_status, actor, trigger, expect, None)

    def complete(
        self, goal_id: str, result: Mapping[str, Any], *, actor: Actor, trigger: str
    ) -> TransitionResult:
        """``transition(goal_id, "completed")`` that also keeps ``result`` as the goal's
        result and merges it into its parent's inherited slots, in the same transaction."""
        try:
            payload = _json_object(result, "result")
        except ValueError as exc:
            return self._refuse(goal_id, None, "completed", str(exc))
        return self._move(goal_id, "completed", actor, trigger, None, payload)

    def set_slots(self, goal_id: str, slots: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``slots`` into the goal's own slots; return them all."""
        update = _json_object(slots, "slots")
        with transaction(self._engine, write=True) as conn:
            query = (
                sa.select(C.c.slots, T.c.user_id)
                .join(T, T.c.id == C.c.goal_id)
                .where(C.c.goal_id == goal_id)
                .with_for_update()
            )
            row = conn.execute(query).first()
            if row is None:
                raise GoalNotFound(goal_id)
            merged = {**row.slots, **self._privacy.seal(update, row.user_id)}
            conn.execute(sa.update(C).where(C.c.goal_id == goal_id).values(slots=merged))
        opened: dict[str, Any] = self._privacy.open(merged, row.user_id)
        return opened

    def _move(
        self,
        goal_id: str,
        to_status: str,
        actor: str,
        trigger: str,
        expect: str | None,
        result: dict[str, Any] | None,
    ) -> TransitionResult:
        if to_status not in STATUSES:
            return self._refuse(goal_id, None, to_status, f"unknown status {to_status!r}")
        if actor not in ACTORS:
            return self._refuse(goal_id, None, to_status, f"unknown actor {actor!r}")
        frm: Status | None = None
        try:
            with transaction(self._engine, write=True) as conn:
                found = self._sel_move.rows(conn, {"gid": goal_id})
                if not found:
                    return self._refuse(goal_id, None, to_status, "no such goal")
                goal = found[0]
                frm = cast(Status, goal["status"])
                if expect is not None and frm != expect:
                    return self._refuse(goal_id, frm, to_status, f"expected {expect}, found {frm}")
                if not allowed(frm, to_status):
                    return self._refuse(
                        goal_id, frm, to_status, f"invalid transition {frm} -> {to_status}"
                    )
                now = as_utc(self._clock())
                cas = self._cas_activate if to_status == "active" else self._cas
                params = {"gid": goal_id, "frm": frm, "to": to_status, "now": now}
                if cas.run(conn, params) != 1:
                    conn.rollback()
                    return self._refuse(goal_id, frm, to_status, f"lost race: no longer {frm}")
                self._record(conn, goal_id, frm, to_status, actor, trigger, now)
                if result is not None:
                    sealed = self._privacy.seal(result, goal["user_id"])
                    self._hand_up(conn, goal_id, goal["parent_id"], sealed)
        except self._db_errors as exc:
            log.exception("goal %s: %s -> %s failed", goal_id, frm, to_status)
            reason = f"database error: {str(exc).splitlines()[0]}"
            return TransitionResult(False, goal_id, frm, to_status, reason)
        user, session = goal["user_id"], goal["session_id"]
        self._emit(
            GoalTransition(
                goal_id, goal["intent"], frm, to_status, actor, trigger, user, session, now
            )
        )
        return TransitionResult(True, goal_id, frm, to_status, trigger)

    def _record(
        self,
        conn: Connection,
        goal_id: str,
        frm: str | None,
        to: str,
        actor: str,
        trigger: str,
        at: datetime,
    ) -> None:
        self._rec.run(
            conn,
            {
                "goal_id": goal_id,
                "from_status": frm,
                "to_status": to,
                "actor": actor,
                "trigger": self._privacy.scrub(trigger),
                "at": at,
            },
        )

    @staticmethod
    def _hand_up(
        conn: Connection, goal_id: str, parent_id: str | None, result: dict[str, Any]
    ) -> None:
        conn.execute(sa.update(C).where(C.c.goal_id == goal_id).values(result=result))
        if parent_id is None:
            return
        # FOR UPDATE: two siblings completing at once must not lose each other's results
        query = sa.select(C.c.inherited).where(C.c.goal_id == parent_id).with_for_update()
        inherited = conn.execute(query).scalar_one()
        merged = {**inherited, **result}
        conn.execute(sa.update(C).where(C.c.goal_id == parent_id).values(inherited=merged))

    def _refuse(
        self, goal_id: str, frm: Status | None, to_status: str, reason: str
    ) -> TransitionResult:
        # a lost race is the normal outcome for all but one of several concurrent writers
        level = logging.INFO if reason.startswith("lost race") else logging.WARNING
        log.log(level, "goal %s: %s -> %s refused: %s", goal_id, frm, to_status, reason)
        return TransitionResult(False, goal_id, frm, to_status, reason)

    def _emit(self, event: GoalTransition) -> None:
        if self._on_transition is None:
            return
        try:
            self._on_transition(event)
        except Exception:  # the transition has happened; a listener cannot undo it
            log.exception(
                "on_transition raised for goal %s (%s -> %s)",
                event.goal_id,
                event.from_status,
                event.to_status,
            )

    # ---- reading -------------------------------------------------------------------------

    def set_description(self, goal_id: str, description: str) -> None:
        """The goal's description after its slots changed (a correction, an answer)."""
        with transaction(self._engine, write=True) as conn:
            conn.execute(
                sa.update(T)
                .where(T.c.id == goal_id)
                .values(description=self._privacy.scrub(description))
            )

    def forget_user(self, user_id: str) -> int:
        """Delete every goal of the user, with its context and history (forget); return how
        many goals went."""
        ids = sa.select(T.c.id).where(T.c.user_id == user_id)
        with transaction(self._engine, write=True) as conn:
            conn.execute(sa.delete(H).where(H.c.goal_id.in_(ids)))
            conn.execute(sa.delete(C).where(C.c.goal_id.in_(ids)))
            # children before parents: the tree's foreign key points at the parent
            gone = 0
            while True:
                leaves = sa.select(T.c.id).where(
                    T.c.user_id == user_id,
                    ~T.c.id.in_(
                        sa.select(T.c.parent_id).where(T.c.parent_id.is_not(None)).scalar_subquery()
                    ),
                )
                n = conn.execute(sa.delete(T).where(T.c.id.in_(leaves))).rowcount
                if not n:
                    break
                gone += n
        return gone
