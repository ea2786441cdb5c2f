"""Databases for the health tests filled row by row: ``World`` writes exactly the rows a case
needs (turns with their recall and skills steps, facts, reads, goals, reflections, patch
uses) at known times."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from charter.goals.tables import GOAL_TREE
from charter.health.metrics import open_engine
from charter.learn.log import Evidence, ReflectionLog
from charter.memory.facts.tables import MEMORY_AUDIT, MEMORY_FACT
from charter.traces.model import Trace, TraceStep
from charter.traces.store import TraceStore

D1 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def call(
    goal: str | None = None, failure: str | None = None, fallback: str | None = None
) -> dict[str, Any]:
    """One outcome of a skills step, as the turn loop writes it."""
    return {
        "goal": goal,
        "skill": "order_lookup",
        "args": {},
        "status": "ok" if failure is None else "failed",
        "text": "",
        "failure": failure,
        "fallback": fallback,
        "ticket": None,
    }


class World:
    """Rows written straight into a database ``open_engine`` migrated."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = open_engine(url)
        self.traces = TraceStore(self.engine)
        self.log = ReflectionLog(self.engine)
        self._ids = itertools.count(1)

    def close(self) -> None:
        self.traces.dispose()
        self.log.dispose()
        self.engine.dispose()

    def turn(
        self,
        at: datetime,
        *,
        user: str = "u1",
        session: str = "s1",
        domain: str = "shop",
        memories: Sequence[str] | None = None,
        calls: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        """A trace; a recall step when ``memories`` is given (None: no such key), a skills
        step when ``calls`` is."""
        steps = []
        if memories is not None:
            steps.append(TraceStep("recall", 0.0, 1.0, outputs={"memories": list(memories)}))
        if calls is not None:
            steps.append(TraceStep("skills", 1.0, 1.0, outputs={"outcomes": list(calls)}))
        trace_id = f"tr-{next(self._ids):04d}"
        self.traces.save(
            Trace(trace_id, user, session, domain, at, 5.0, tuple(steps), "好的。", "pass")
        )
        return trace_id

    def step(self, at: datetime, name: str, outputs: Mapping[str, Any]) -> None:
        """A trace with one step whose outputs are given whole (old or odd traces)."""
        self.traces.save(
            Trace(
                f"tr-{next(self._ids):04d}",
                "u1",
                "s1",
                "shop",
                at,
                5.0,
                (TraceStep(name, 0.0, 1.0, outputs=outputs),),
                "好的。",
                "pass",
            )
        )

    def fact(
        self,
        fact_id: str,
        at: datetime,
        *,
        user: str = "u1",
        status: str = "active",
        valid_until: datetime | None = None,
    ) -> None:
        row = {
            "id": fact_id,
            "user_id": user,
            "key": f"key-{fact_id}",
            "value": "v",
            "memory_type": "fact",
            "level": "L0",
            "encrypted": False,
            "confidence": 1.0,
            "source": "user_confirmed",
            "domain": "support",
            "status": status,
            "created_at": at,
            "updated_at": at,
            "valid_until": valid_until,
        }
        with self.engine.begin() as conn:
            conn.execute(sa.insert(MEMORY_FACT), row)

    def audit(self, action: str, memory_id: str | None, at: datetime, user: str = "u1") -> None:
        row = {
            "at": at,
            "actor": "agent",
            "role": "agent",
            "user_id": user,
            "action": action,
            "memory_id": memory_id,
            "allowed": True,
            "reason": "",
        }
        with self.engine.begin() as conn:
            conn.execute(sa.insert(MEMORY_AUDIT), row)

    def goal(self, goal_id: str, status: str) -> None:
        row = {
            "id": goal_id,
            "root_id": goal_id,
            "depth": 0,
            "kind": "task",
            "intent": "order-query",
            "description": "",
            "status": status,
            "user_id": "u1",
            "session_id": "s1",
            "created_at": D1,
            "updated_at": D1,
        }
        with self.engine.begin() as conn:
            conn.execute(sa.insert(GOAL_TREE), row)

    def reflection(self, at: datetime, pack: str = "shop", trigger: str = "negation") -> str:
        said = Evidence("user_input", at, content="不对")
        entry = self.log.add(
            pack=pack,
            trigger=trigger,
            hypothesis="h",
            evidence=[said],
            correction=None,
            at=at,
            user_id="u1",
            session_id="s1",
        )
        return entry.id

    def use(self, patch_id: str, at: datetime, pack: str = "shop", times: int = 1) -> None:
        for n in range(times):
            self.log.record_use(
                pack=pack,
                patch_id=patch_id,
                kind="mapping",
                at=at + timedelta(minutes=n),
                user_id="u1",
                session_id="s1",
            )
