"""The user's rights over the fact channel: see everything held about them (``list_facts``,
``export``, ``audit_trail``) and be forgotten (``forget``). All four are privileged
(``access.PRIVILEGED_ROLES``: the user themself or an operator), scoped to the accessor's
user like every other statement of the store, and audited.

What ``forget`` leaves behind: nothing with the user's id. Every fact row and every audit row of
the user is deleted in one transaction, and one audit row records that a forget happened, with
``user_id`` set to ``forgotten_as`` instead of the id: ``charter.memory.crypto.forgotten_id``,
``hmac-sha256:<hex>`` keyed by a secret derived from the memory key (``forget_user`` passes it),
or ``forgotten`` when there is no key. The trail can then prove that user X was forgotten to
whoever holds the memory key (compute the HMAC of X, look it up) without keeping X's id,
memories or history, and a guessed id cannot be confirmed without the key; the reason holds
only counts. The actor is kept unless it contains the user's id (an actor like ``user:<id>``
is replaced the same way).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from charter.memory.crypto import FORGOTTEN
from charter.memory.facts.access import audit_row, denied, privileged_refusal, require_user
from charter.memory.facts.tables import IS_ACTIVE, AuditEntry, fact_from_row, iso
from charter.memory.facts.tables import MEMORY_AUDIT as A
from charter.memory.facts.tables import MEMORY_FACT as F
from charter.memory.records import Accessor, Fact
from charter.store.migrations import transaction

EXPORT_FORMAT = "charter-memory-export/1"
_UID: sa.BindParameter[str] = sa.bindparam("uid")
_ALL_FACTS = sa.select(F).where(F.c.user_id == _UID).order_by(F.c.created_at, F.c.id)
_ACTIVE_FACTS = sa.select(F).where(F.c.user_id == _UID, IS_ACTIVE).order_by(F.c.key, F.c.id)
_TRAIL = sa.select(A).where(A.c.user_id == _UID).order_by(A.c.id)


def _check(engine: Engine, accessor: Accessor, what: str, now: datetime) -> None:
    require_user(accessor)
    why = privileged_refusal(accessor)
    if why is not None:
        with transaction(engine, write=True) as conn:
            conn.execute(A.insert(), denied(accessor, now, what, why))
        raise PermissionError(f"{what} refused: {why}")


def list_facts(
    engine: Engine, accessor: Accessor, now: datetime, *, history: bool = False
) -> list[Fact]:
    """The user's active facts by key (with ``history``: every row, oldest first), values as
    stored. Listing is an inspection, not a use: access counts do not change."""
    _check(engine, accessor, "list", now)
    with transaction(engine, write=True) as conn:
        query = _ALL_FACTS if history else _ACTIVE_FACTS
        facts = [
            fact_from_row(m) for m in conn.execute(query, {"uid": accessor.user_id}).mappings()
        ]
        what = f"{len(facts)} {'rows' if history else 'active facts'}"
        conn.execute(A.insert(), audit_row(accessor, "list", now, None, what))
    return facts


def _fact_json(m: Any) -> dict[str, Any]:
    return {
        "id": m["id"],
        "key": m["key"],
        "value": m["value"],  # redacted by the pipeline; ciphertext when encrypted
        "encrypted": bool(m["encrypted"]),
        "memory_type": m["memory_type"],
        "level": m["level"],
        "domain": m["domain"],
        "source": m["source"],
        "confidence": m["confidence"],
        "status": m["status"],
        "tier": m["tier"],
        "weight": round(m["weight"], 6),
        "created_at": iso(m["created_at"]),
        "updated_at": iso(m["updated_at"]),
        "valid_until": iso(m["valid_until"]),
        "entity_ref": m["entity_ref"],
        "intent_type": m["intent_type"],
        "consent_source": m["consent_source"],
        "value_score": m["value_score"],
        "supersedes": m["supersedes"],
        "contradicts": m["contradicts"],
        "access_count": m["access_count"],
        "last_used_at": iso(m["last_used_at"]),
    }


def _audit_json(e: AuditEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "at": iso(e.at),
        "actor": e.actor,
        "role": e.role,
        "action": e.action,
        "memory_id": e.memory_id,
        "allowed": e.allowed,
        "reason": e.reason,
    }


def export(engine: Engine, accessor: Accessor, now: datetime) -> dict[str, Any]:
    """Everything held about the user, JSON-serialisable: every fact in every status (archived
    included) oldest first, values as stored, and the audit trail oldest first, ending with
    this export's own row."""
    _check(engine, accessor, "export", now)
    uid = {"uid": accessor.user_id}
    with transaction(engine, write=True) as conn:
        facts = [_fact_json(m) for m in conn.execute(_ALL_FACTS, uid).mappings()]
        reason = f"{len(facts)} facts"
        conn.execute(A.insert(), audit_row(accessor, "export", now, None, reason))
        trail = [AuditEntry.from_row(m) for m in conn.execute(_TRAIL, uid).mappings()]
    return {
        "format": EXPORT_FORMAT,
        "user_id": accessor.user_id,
        "exported_at": iso(now),
        "facts": facts,
        "audit": [_audit_json(e) for e in trail],
    }


def forget(engine: Engine, accessor: Accessor, now: datetime, forgotten_as: str = FORGOTTEN) -> int:
    """Delete every fact and audit row of the user; return the number of facts deleted."""
    _check(engine, accessor, "forget", now)
    uid = {"uid": accessor.user_id}
    with transaction(engine, write=True) as conn:
        facts = conn.execute(sa.delete(F).where(F.c.user_id == _UID), uid).rowcount
        audits = conn.execute(sa.delete(A).where(A.c.user_id == _UID), uid).rowcount
        actor = accessor.actor.replace(accessor.user_id, forgotten_as)
        row = audit_row(accessor, "forget", now, None, f"{facts} facts, {audits} audit rows")
        conn.execute(A.insert(), {**row, "user_id": forgotten_as, "actor": actor})
    return int(facts)


def audit_trail(engine: Engine, accessor: Accessor, now: datetime) -> list[AuditEntry]:
    """The user's audit rows, oldest first; the reading itself is recorded after them."""
    _check(engine, accessor, "audit", now)
    uid = {"uid": accessor.user_id}
    with transaction(engine, write=True) as conn:
        trail = [AuditEntry.from_row(m) for m in conn.execute(_TRAIL, uid).mappings()]
        conn.execute(A.insert(), audit_row(accessor, "audit", now, None, f"{len(trail)} rows"))
    return trail
