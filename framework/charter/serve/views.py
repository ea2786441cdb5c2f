"""What the endpoints read from the agent's stores, as JSON-ready data in the caller's terms.

Stores hold ``<tenant>:<user_id>``; everything sent back says ``user_id`` as the caller gave
it (``unscope``). Whether a user exists is asked with read-only queries (``known``): the fact
store's own reads are audited, and a probe for an unknown user must leave no trace of itself.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from charter._version import __version__
from charter.agent import Agent
from charter.agent.parts import Parts
from charter.learn.log import LOG as REFLECTIONS
from charter.memory.facts.tables import MEMORY_FACT
from charter.memory.records import Accessor
from charter.memory.short_term import TURNS, SqlShortTermStore
from charter.serve.auth import unscoped
from charter.serve.faults import LOST, UNAVAILABLE, probe
from charter.traces.model import jsonable

ACTOR = "serve"  # who reads and forgets, in the memory audit trail


def admin(stored_user: str) -> Accessor:
    """An operator acting on the user's behalf: the tenant's token is the authority."""
    return Accessor(stored_user, ACTOR, role="admin")


def unscope(value: Any, stored: str, user_id: str) -> Any:
    """``value`` with every string equal to the stored id replaced by the caller's id."""
    if isinstance(value, str):
        return user_id if value == stored else value
    if isinstance(value, list):
        return [unscope(v, stored, user_id) for v in value]
    if isinstance(value, dict):
        return {k: unscope(v, stored, user_id) for k, v in value.items()}
    return value


def _exists(engine: sa.Engine, table: sa.Table, stored: str) -> bool:
    query = sa.select(sa.literal(1)).select_from(table).where(table.c.user_id == stored).limit(1)
    with engine.connect() as conn:
        return conn.execute(query).first() is not None


def known(parts: Parts, stored: str, tenant: str) -> bool:
    """Does any store hold something of this user: a trace, a goal, a fact, a turn, a
    reflection?"""
    if parts.traces is not None and parts.traces.list(user_id=stored, tenant=tenant, limit=1):
        return True
    if parts.goals.tree(stored):
        return True
    if _exists(parts.facts.engine, MEMORY_FACT, stored):
        return True
    if parts.log is not None and _exists(parts.log.engine, REFLECTIONS, stored):
        return True
    store = parts.short_term.store
    return isinstance(store, SqlShortTermStore) and _exists(store.engine, TURNS, stored)


def facts(parts: Parts, stored: str, user_id: str) -> dict[str, Any]:
    listed = parts.facts.list_facts(admin(stored))
    return {"user_id": user_id, "facts": unscope(jsonable(listed), stored, user_id)}


def export(parts: Parts, stored: str, user_id: str) -> dict[str, Any]:
    data = jsonable(parts.memory.export(admin(stored)))
    out: dict[str, Any] = unscope(data, stored, user_id)
    return out


def goals(parts: Parts, stored: str, user_id: str, session_id: str | None) -> dict[str, Any]:
    tree = parts.goals.tree(stored, session_id)
    return {"user_id": user_id, "goals": unscope(jsonable(tree), stored, user_id)}


def trace(data: dict[str, Any], tenant: str) -> dict[str, Any]:
    stored = data["user_id"]
    out: dict[str, Any] = unscope(data, stored, unscoped(tenant, stored))
    return out


def health(
    agent: Agent, tenant: str, backend: str, counts: dict[str, int]
) -> tuple[dict[str, Any], bool]:
    """What is loaded and whether it works; the flag is False when the database cannot be
    reached or cannot take writes (read-only, locked): a turn would fail."""
    p = agent.parts
    pack = p.pack
    fault = probe(p.facts.engine)
    breakers = p.runner.breakers.snapshots() if p.runner is not None else []
    data = {
        "status": "ok" if fault is None else "degraded",
        "version": __version__,
        "tenant": tenant,
        "pack": {
            "name": pack.name,
            "version": pack.version,
            "digest": pack.digest,
            "rules": len(pack.rules),
            "skills": len(pack.skills.contracts) if pack.skills is not None else 0,
            "intents": len(pack.goals.intents) if pack.goals is not None else 0,
        },
        "model": {"backend": backend},
        "database": {
            "dialect": p.facts.engine.dialect.name,
            "reachable": fault not in (LOST, UNAVAILABLE),
            "writable": fault is None,
            "fault": fault,
        },
        "breakers": [
            {
                "name": b.name,
                "state": b.state,
                "strikes": b.strikes,
                "retry_in_s": b.retry_in_s,
            }
            for b in breakers
        ],
        "counts": dict(counts),
    }
    return data, fault is None
