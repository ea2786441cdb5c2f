"""Forget a user everywhere an agent keeps them: one function for every entry point.

``Agent.forget`` (the API and ``DELETE /v1/users/{id}``) and ``charter memory forget`` call
``forget_user`` over the same stores, so what one removes the others remove:

* first, the user's data key (``charter.memory.user_keys``), committed on its own: every value
  sealed for the user — facts at encrypted levels, goal slots holding personal data — is
  unreadable from then on wherever a copy of it remains (a WAL, a database page, a backup),
  even if the forget stops halfway;
* the memory layers (``LayeredMemory.forget``): narrative summaries and their vectors (the
  LanceDB table rewritten without the user), short-term turns, facts and their audit trail —
  one audit row stays, the user id hashed;
* goals, with their context and history, and the skill executions keyed by those goals (the
  execution ledger keeps scrubbed arguments and outcomes);
* tickets; traces and their steps (of every tenant unless one is named); reflection log
  entries and patch uses.

On SQLite the WAL is then checkpointed and truncated (``store.migrations.checkpoint``): with
``secure_delete`` the deleted rows are zeroed in the database file, and no frame of the WAL
holds them any more. The forget's audit rows name the user by ``crypto.forgotten_id`` (an HMAC
under a secret derived from the memory key; ``forgotten`` without a key).

Breaker state is per skill and the shared memory per cluster: neither holds a user. What an
agent process holds in memory only (the reflection triggers' history, the self-check's
notes) is ``Agent.forget``'s to clear; a CLI run has no such process.

``open_stores`` builds the stores from a database URL and a narrative directory without
loading a model (the narrative store is administered, not searched), opening only the stores
whose tables the database has: a table that is not there holds nobody. The memory key, when the
environment gives one (the policy's ``key_env``), names the forgotten user in the audit trail
as the agent would; without it the user's data key is still destroyed (that needs no key).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from charter.compile.specs.memory import MemoryPolicy
from charter.goals.store import GoalStore
from charter.goals.tables import GOAL_TREE
from charter.learn.log import LOG, ReflectionLog
from charter.memory.crypto import decode_key, forgotten_id
from charter.memory.facts import FactStore
from charter.memory.facts.access import require_user
from charter.memory.ladder import LayeredMemory
from charter.memory.narrative import NarrativeStore
from charter.memory.records import Accessor
from charter.memory.short_term import TURNS, ShortTermMemory, SqlShortTermStore
from charter.memory.user_keys import USER_KEY, UserKeys
from charter.skills.executions import EXECUTIONS, ExecutionLedger
from charter.skills.tickets import TICKETS, TicketStore
from charter.store.migrations import checkpoint, make_engine
from charter.traces.store import TRACES, TraceStore

if TYPE_CHECKING:
    from charter.agent.parts import Parts

log = logging.getLogger(__name__)


@dataclass
class UserStores:
    """Every store that may hold a user's rows; None: not kept by this agent or database."""

    memory: LayeredMemory
    goals: GoalStore | None = None
    ledger: ExecutionLedger | None = None
    tickets: TicketStore | None = None
    traces: TraceStore | None = None
    log: ReflectionLog | None = None
    keys: UserKeys | None = None

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
            keys=parts.keys,
        )


def forget_user(
    stores: UserStores, user_id: str, *, actor: str, tenant: str | None = None
) -> dict[str, int]:
    """Remove ``user_id`` from every store; return how many rows went, per kind.

    ``actor`` is who asks (the memory audit's hashed row names it); ``tenant`` limits the
    traces to that tenant's (None: every tenant's traces of this user id). The user's data key
    goes first (see the module docstring), then memory: the rows, then the WAL."""
    accessor = Accessor(user_id, actor, role="admin")
    require_user(accessor)
    goal_ids = [g.id for g in stores.goals.tree(user_id)] if stores.goals is not None else []
    keys = stores.keys
    if keys is not None:
        keys.destroy(user_id)
    named = keys.forgotten_id(user_id) if keys is not None else forgotten_id(user_id, None)
    counts = stores.memory.forget(accessor, forgotten_as=named)
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
    if not checkpoint(stores.memory.facts.engine):
        log.warning("forget: a reader kept the SQLite WAL from being truncated")
    return counts


def _forget_traces(store: TraceStore, user_id: str, tenant: str | None) -> int:
    if tenant is not None:
        return store.delete_user(user_id, tenant=tenant)
    query = sa.select(TRACES.c.tenant).where(TRACES.c.user_id == user_id).distinct()
    with store.engine.connect() as conn:
        tenants = [row[0] for row in conn.execute(query)]
    return sum(store.delete_user(user_id, tenant=t) for t in tenants)


def _environment_key(policy: MemoryPolicy, environ: Mapping[str, str]) -> bytes | None:
    text = environ.get(policy.key_env, "")
    return decode_key(text, f"the environment variable {policy.key_env}") if text.strip() else None


@contextmanager
def open_stores(
    url: str,
    narrative_path: str | Path | None,
    policy: MemoryPolicy | None = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[UserStores]:
    """The stores of the database at ``url`` (and the narrative directory, when given),
    closed on exit. The fact store is always opened (it keeps the forget's audit row), and
    so are the user keys (a forget made without a key still destroys the user's)."""
    engine = make_engine(url)
    try:
        tables = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    policy = policy or MemoryPolicy()
    key = _environment_key(policy, os.environ if environ is None else environ)
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
        if USER_KEY.name in tables or key is not None:
            stores.keys = UserKeys(url, key)
            stack.callback(stores.keys.dispose)
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
