"""The fact channel's lifecycle, run by a scheduler across every user: expiry, decay and
tiering. Each returns a count; none returns a memory, so none can leak one.

* ``expire``: active facts whose ``valid_until`` has passed become ``expired`` (reads never
  returned them anyway: this makes the status say so and the audit trail show it).
* ``decay``: an active fact's ``weight`` is ``policy.decayed_weight(1.0, idle days)``, idle
  days counted from its last use (or its creation). The weight is a function of the idle time,
  not a running product: running decay daily, twice, or after a pause gives the same figure
  (15 % less per 30 idle days, compounding), and a use puts it back to 1. Not audited: only
  a ranking figure changes, never a status or a value.
* ``archive_cold``: every row's tier follows its idle age (``policy.tier``: hot up to
  ``hot_days``, warm up to ``warm_days``, cold beyond); an active fact that turns cold becomes
  ``archived``: excluded from every read, still in ``export``. A read makes a fact hot again;
  an archived one is never read, so it stays archived (writing its key again makes a new row).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.facts.access import system_row
from charter.memory.facts.tables import IS_ACTIVE
from charter.memory.facts.tables import MEMORY_AUDIT as A
from charter.memory.facts.tables import MEMORY_FACT as F
from charter.store.clock import as_utc
from charter.store.migrations import transaction

_DAY = 86400.0
_FID: sa.BindParameter[str] = sa.bindparam("fid")
_UID: sa.BindParameter[str] = sa.bindparam("uid")
_IDLE_SINCE = sa.func.coalesce(F.c.last_used_at, F.c.created_at)


def expire(engine: Engine, now: datetime) -> int:
    query = sa.select(F.c.id, F.c.user_id, F.c.key).where(
        IS_ACTIVE, F.c.valid_until.is_not(None), F.c.valid_until <= now
    )
    with transaction(engine, write=True) as conn:
        rows = conn.execute(query).all()
        if rows:
            done = sa.update(F).where(F.c.id == _FID, F.c.user_id == _UID)
            conn.execute(
                done.values(status="expired", updated_at=now),
                [{"fid": r.id, "uid": r.user_id} for r in rows],
            )
            audit = [system_row(r.user_id, "expire", now, r.id, f"{r.key}: outlived") for r in rows]
            conn.execute(A.insert(), audit)
    return len(rows)


def _idle_days(since: datetime, now: datetime) -> float:
    return (now - as_utc(since)).total_seconds() / _DAY


def decay(engine: Engine, policy: MemoryPolicy, now: datetime) -> int:
    """Set each active fact's weight for its idle time; return how many weights changed."""
    query = sa.select(F.c.id, F.c.user_id, F.c.weight, _IDLE_SINCE.label("since")).where(IS_ACTIVE)
    with transaction(engine, write=True) as conn:
        changes: list[dict[str, Any]] = []
        for r in conn.execute(query):
            weight = policy.decayed_weight(1.0, _idle_days(r.since, now))
            if abs(weight - r.weight) > 1e-9:
                changes.append({"fid": r.id, "uid": r.user_id, "w": weight})
        if changes:
            stmt = sa.update(F).where(F.c.id == _FID, F.c.user_id == _UID)
            conn.execute(stmt.values(weight=sa.bindparam("w")), changes)
    return len(changes)


def archive_cold(engine: Engine, policy: MemoryPolicy, now: datetime) -> int:
    """Re-tier rows idle longer than ``hot_days``; archive the active ones gone cold; return
    how many were archived."""
    hot_until = now - timedelta(days=policy.lifecycle.hot_days)
    query = sa.select(
        F.c.id, F.c.user_id, F.c.key, F.c.status, F.c.tier, _IDLE_SINCE.label("since")
    ).where(F.c.tier != "cold", hot_until > _IDLE_SINCE)
    retier: list[dict[str, Any]] = []
    archived: list[dict[str, Any]] = []
    with transaction(engine, write=True) as conn:
        for r in conn.execute(query):
            tier = policy.tier(_idle_days(r.since, now))
            if tier == r.tier:
                continue
            retier.append({"fid": r.id, "uid": r.user_id, "t": tier})
            if tier == "cold" and r.status == "active":
                archived.append({"fid": r.id, "uid": r.user_id})
                why = f"{r.key}: idle over {policy.lifecycle.warm_days} days"
                archived[-1]["audit"] = system_row(r.user_id, "archive", now, r.id, why)
        stmt = sa.update(F).where(F.c.id == _FID, F.c.user_id == _UID)
        if retier:
            conn.execute(stmt.values(tier=sa.bindparam("t")), retier)
        if archived:
            conn.execute(
                stmt.values(status="archived", updated_at=now),
                [{"fid": a["fid"], "uid": a["uid"]} for a in archived],
            )
            conn.execute(A.insert(), [a["audit"] for a in archived])
    return len(archived)
