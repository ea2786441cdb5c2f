"""Executing skills run at most once per key (ARCHITECTURE §8): the ledger of executions.

A skill whose contract says ``effect: execute`` (a transfer, a booking, an invoice) changes
something outside Charter. The agent calls it with the goal's id as the idempotency key, and
``ExecutionLedger.once(key, skill, args, run)``:

1. claims the key with one ``INSERT … ON CONFLICT DO NOTHING`` (SQLite or PostgreSQL: the
   database decides, not a lock of this process, so two workers cannot both win);
2. the winner runs the call and stores what it gave; every later caller with that key — a
   repeated yes, a client's retry, another worker that planned the same confirmation — gets
   the stored outcome back (``replayed``) and the skill does not run again;
3. a caller that finds the key claimed but not finished waits for the winner (polling, at most
   ``wait_s``), then replays; still running after that, it is told so and runs nothing.

A call that certainly did not execute (its arguments refused, the breaker open, the skill
raising before any effect) releases the key, so the user's next yes may try again. A call whose
effect is unknown (a timeout, a result that broke the output contract) keeps the key: it is
replayed as the failure it was, because a second try could execute twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from charter.store.clock import Clock, utcnow
from charter.store.migrations import MigratedStore, Migration, transaction
from charter.store.privacy import scrub_json

COMPONENT = "executions"
State = Literal["running", "done", "unknown"]
# failures after which the skill certainly changed nothing: the key is released for a retry
RETRYABLE = frozenset({"invalid_args", "breaker_open", "error"})

MD = sa.MetaData()
EXECUTIONS = sa.Table(
    "skill_execution",
    MD,
    sa.Column("key", sa.String, primary_key=True),
    sa.Column("skill", sa.String, nullable=False),
    sa.Column("state", sa.String, nullable=False),
    sa.Column("args", sa.Text, nullable=False),
    sa.Column("outcome", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
)


def _v1_skill_execution(conn: Connection) -> None:
    md = sa.MetaData()
    when = sa.DateTime(timezone=True)
    sa.Table(
        "skill_execution",
        md,
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("skill", sa.String, nullable=False),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("args", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("finished_at", when, nullable=True),
    )
    md.create_all(conn, checkfirst=False)


EXECUTION_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "skill_execution", _v1_skill_execution),
)


@dataclass(frozen=True)
class Executed:
    """What an execution gave, as stored: enough to tell the user again."""

    status: str  # ok / invalid / failed
    text: str
    result: Any = None
    failure: str | None = None  # the failure's kind
    detail: str = ""
    message: str = ""

    def as_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False, sort_keys=True, default=str)

    @classmethod
    def from_json(cls, text: str) -> Executed:
        data = json.loads(text)
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class Once:
    executed: Executed | None  # None: another caller is still executing it
    replayed: bool  # the skill did not run for this caller


class ExecutionLedger(MigratedStore):
    def __init__(
        self,
        url: str | Engine,
        *,
        clock: Clock = utcnow,
        poll_s: float = 0.02,
        scrub: Callable[[str], str] = str,
    ) -> None:
        self._clock = clock
        self._poll_s = poll_s
        # an agent's ledger keeps no personal data in clear (issue 16): the arguments and the
        # outcome are stored scrubbed, so a replay tells the user the same, scrubbed
        self._scrub = scrub
        super().__init__(url, COMPONENT, EXECUTION_MIGRATIONS)

    def once(
        self,
        key: str,
        skill: str,
        args: Mapping[str, Any],
        run: Callable[[], Executed],
        *,
        wait_s: float = 10.0,
    ) -> Once:
        """Run ``run`` when this caller claims ``key``; else the stored outcome (after waiting
        for the caller that runs it, at most ``wait_s``)."""
        deadline = time.monotonic() + wait_s
        while True:
            if self._claim(key, skill, args):
                return Once(self._run(key, run), replayed=False)
            row = self._row(key)
            if row is not None and row["state"] != "running":
                return Once(Executed.from_json(row["outcome"]), replayed=True)
            if time.monotonic() >= deadline:
                return Once(None, replayed=True)
            if row is not None:  # claimed and running: wait for its outcome
                time.sleep(self._poll_s)

    def get(self, key: str) -> tuple[State, Executed | None] | None:
        """The key's state and stored outcome, None when it was never claimed (or released)."""
        row = self._row(key)
        if row is None:
            return None
        outcome = Executed.from_json(row["outcome"]) if row["outcome"] else None
        return row["state"], outcome

    def _run(self, key: str, run: Callable[[], Executed]) -> Executed:
        try:
            executed = run()
        except BaseException:
            self._release(key)
            raise
        if executed.status != "ok" and (executed.failure in RETRYABLE or executed.failure is None):
            self._release(key)
            return executed
        state: State = "done" if executed.status == "ok" else "unknown"
        with transaction(self._engine, write=True) as conn:
            conn.execute(
                sa.update(EXECUTIONS)
                .where(EXECUTIONS.c.key == key)
                .values(
                    state=state,
                    outcome=self._scrubbed(executed).as_json(),
                    finished_at=self._clock(),
                )
            )
        return executed

    def _scrubbed(self, e: Executed) -> Executed:
        return Executed(
            status=e.status,
            text=self._scrub(e.text),
            result=scrub_json(json.loads(json.dumps(e.result, default=str)), self._scrub),
            failure=e.failure,
            detail=self._scrub(e.detail),
            message=self._scrub(e.message),
        )

    def _claim(self, key: str, skill: str, args: Mapping[str, Any]) -> bool:
        values = {
            "key": key,
            "skill": skill,
            "state": "running",
            "args": json.dumps(
                scrub_json(json.loads(json.dumps(dict(args), default=str)), self._scrub),
                ensure_ascii=False,
                sort_keys=True,
            ),
            "created_at": self._clock(),
        }
        with transaction(self._engine, write=True) as conn:
            dialect = conn.dialect.name
            insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(EXECUTIONS)
            # RETURNING, not rowcount: drivers disagree on the rowcount of a skipped insert
            claim = insert.values(**values).on_conflict_do_nothing().returning(EXECUTIONS.c.key)
            return conn.execute(claim).first() is not None

    def _release(self, key: str) -> None:
        with transaction(self._engine, write=True) as conn:
            conn.execute(sa.delete(EXECUTIONS).where(EXECUTIONS.c.key == key))

    def _row(self, key: str) -> Mapping[str, Any] | None:
        with transaction(self._engine) as conn:
            row = conn.execute(sa.select(EXECUTIONS).where(EXECUTIONS.c.key == key)).first()
        return dict(row._mapping) if row is not None else None

    def forget_keys(self, keys: list[str]) -> int:
        """Remove the executions of these keys (a user's goals being forgotten)."""
        if not keys:
            return 0
        with transaction(self._engine, write=True) as conn:
            done = conn.execute(sa.delete(EXECUTIONS).where(EXECUTIONS.c.key.in_(keys)))
            return int(done.rowcount or 0)
