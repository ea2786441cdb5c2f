"""Forget a user everywhere an agent keeps them: one function for every entry point.

``Agent.forget`` (the API and ``DELETE /v1/users/{id}``) and ``charter memory forget`` call
``forget_user`` over the same stores, so what one removes the others remove:

* the memory layers (``LayeredMemory.forget``): narrative summaries and their vectors (the
  LanceDB table rewritten without the user), short-term turns, facts and their audit trail —
  one audit row stays, the user id hashed;
* goals, with their context and history, and the skill executions keyed by those goals (the
  execution ledger keeps scrubbed arguments and outcomes);
* tickets; traces and their steps (of every tenant unless one is named); reflection log
  entries and patch uses.

Breaker state is per skill and the shared memory per cluster: neither holds a user. What an
agent process holds in memory only (the reflection triggers' history, the self-check's
notes) is ``Agent.forget``'s to clear; a CLI run has no such process.

``open_stores`` builds the stores from a database URL and a narrative directory without
loading a model (the narrative store is administered, not searched), opening only the stores
whose tables the database has: a table that is not there holds nobody.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from charter.compile.specs.memory import MemoryPolicy
from charter.goals.store import GoalStore
from charter.goals.tables import GOAL_TREE
from charter.learn.log import LOG, ReflectionLog
from charter.memory.facts import FactStore
from charter.memory.ladder import LayeredMemory
from charter.memory.narrative import NarrativeStore
from charter.memory.records import Accessor
from charter.memory.short_term import TURNS, ShortTermMemory, SqlShortTermStore
from charter.skills.executions import EXECUTIONS, ExecutionLedger
from charter.skills.tickets import TICKETS, TicketStore
from charter.store.migrations import make_engine
from charter.traces.store import TRACES, TraceStore

if TYPE_CHECKING:
    from charter.agent.parts import Parts


@dataclass
class UserStores:
    """Every store that may hold a user's rows; None: not kept by this agent or database."""

    memory: LayeredMemory
    goals: GoalStore | None = None
    ledger: ExecutionLedger | None = None
    tickets: TicketStore | None = None
    traces: TraceStore | None = None
    log: ReflectionLog | None = None

    @classmethod
    def of(cls, parts: Parts) -> UserStores:
        """An agent's stores."""
        runner = parts.runner
        return cls(
            memory=parts.memory,
            goals=parts.goals,
            ledger=runner.ledger if runner is not None else None,
            tickets=parts.tickets,
            traces=parts.traces,
            log=parts.log,
        )


def forget_user(
    stores: UserStores, user_id: str, *, actor: str, tenant: str | None = None
) -> dict[str, int]:
    """Remove ``user_id`` from every store; return how many rows went, per kind.

    ``actor`` is who asks (the memory audit's hashed row names it); ``tenant`` limits the
    traces to that tenant's (None: every tenant's traces of this user id). Memory goes first:
    a refused forget (``PermissionError``) changes nothing anywhere."""
    goal_ids = [g.id for g in stores.goals.tree(user_id)] if stores.goals is not None else []
    counts = stores.memory.forget(Accessor(user_id, actor, role="admin"))
    if stores.goals is not None:
        counts["goals"] = stores.goals.forget_user(user_id)
    if stores.ledger is not None:
        # an executing skill's idempotency key is its goal (charter.agent.calls)
        counts["executions"] = stores.ledger.forget_keys(goal_ids)
    if stores.tickets is not None:
        counts["tickets"] = stores.tickets.delete_user(user_id)
    if stores.traces is not None:
        counts["traces"] = _forget_traces(stores.traces, user_id, tenant)
    if stores.log is not None:
        counts["reflections"] = stores.log.delete_user(user_id)
    return counts


def _forget_traces(store: TraceStore, user_id: str, tenant: str | None) -> int:
    if tenant is not None:
        return store.delete_user(user_id, tenant=tenant)
    query = sa.select(TRACES.c.tenant).where(TRACES.c.user_id == user_id).distinct()
    with store.engine.connect() as conn:
        tenants = [row[0] for row in conn.execute(query)]
    return sum(store.delete_user(user_id, tenant=t) for t in tenants)


@contextmanager
def open_stores(
    url: str, narrative_path: str | Path | None, policy: MemoryPolicy | None = None
) -> Iterator[UserStores]:
    """The stores of the database at ``url`` (and the narrative directory, when given),
    closed on exit. The fact store is always opened (it keeps the forget's audit row)."""
    engine = make_engine(url)
    try:
        tables = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    policy = policy or MemoryPolicy()
    with ExitStack() as stack:
        facts = stack.enter_context(FactStore(url, policy))
        narrative = None
        if narrative_path is not None:
            narrative = NarrativeStore(narrative_path, None, policy, audit=facts.record_audit)
            stack.callback(narrative.close)
        short_term = None
        if TURNS.name in tables:
            turns = SqlShortTermStore(url)
            stack.callback(turns.close)
            short_term = ShortTermMemory(turns, policy, scrub=None)  # forget writes nothing
        stores = UserStores(LayeredMemory(facts, narrative, short_term))
        if GOAL_TREE.name in tables:
            stores.goals = GoalStore(url)
            stack.callback(stores.goals.close)
        if TICKETS.name in tables:
            stores.tickets = TicketStore(url)
            stack.callback(stores.tickets.dispose)
        if EXECUTIONS.name in tables:
            stores.ledger = ExecutionLedger(url)
            stack.callback(stores.ledger.dispose)
        if TRACES.name in tables:
            stores.traces = TraceStore(url)
            stack.callback(stores.traces.dispose)
        if LOG.name in tables:
            stores.log = ReflectionLog(url)
            stack.callback(stores.log.dispose)
        yield stores
