"""The fact store's statements, built once (a statement computes its cache key once). Every one
that touches ``memory_fact`` or ``memory_audit`` for a user carries ``user_id = :uid``.

The statements every read runs are compiled per store into ``ReadStatements`` and executed
through ``charter.store.prepared.Prepared``; the rest go through SQLAlchemy as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

from charter.memory.facts.tables import IS_ACTIVE
from charter.memory.facts.tables import MEMORY_AUDIT as A
from charter.memory.facts.tables import MEMORY_FACT as F
from charter.store.prepared import Prepared

UID: sa.BindParameter[str] = sa.bindparam("uid")
NOW: sa.BindParameter[datetime] = sa.bindparam("now")
FID: sa.BindParameter[str] = sa.bindparam("fid")
KEY: sa.BindParameter[str] = sa.bindparam("key")

# a live fact: the user's, active, and not outlived (whether or not ``expire`` has run)
LIVE = (F.c.user_id == UID, IS_ACTIVE, sa.or_(F.c.valid_until.is_(None), F.c.valid_until > NOW))
NEWEST_FIRST = (F.c.created_at.desc(), F.c.id.desc())

GET = sa.select(F).where(*LIVE, F.c.key == KEY)
BY_ENTITY = sa.select(F).where(*LIVE, F.c.entity_ref == sa.bindparam("ref")).order_by(*NEWEST_FIRST)
BY_INTENT = (
    sa.select(F).where(*LIVE, F.c.intent_type == sa.bindparam("intent")).order_by(*NEWEST_FIRST)
)
BUMP = (
    sa.update(F)
    .where(F.c.id == FID, F.c.user_id == UID)
    .values(access_count=F.c.access_count + 1, last_used_at=NOW, weight=1.0, tier="hot")
)
AUDIT_FIELDS = ("at", "actor", "role", "user_id", "action", "memory_id", "allowed", "reason")
AUDIT = A.insert()
AUDIT_ROW = A.insert().values({name: sa.bindparam(name) for name in AUDIT_FIELDS})

# the held row for a write: active whatever its validity (an outlived one is expired first)
HELD = sa.select(F).where(F.c.user_id == UID, F.c.key == KEY, IS_ACTIVE).with_for_update()
INSERT_FACT = F.insert()
KEY_LOCK = sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext(sa.bindparam("lock"))))
SET_STATUS = (
    sa.update(F)
    .where(F.c.id == FID, F.c.user_id == UID)
    .values(status=sa.bindparam("to"), updated_at=NOW)
)
SUPERSEDE = SET_STATUS.values(valid_until=NOW)
REFRESH = (
    sa.update(F)
    .where(F.c.id == FID, F.c.user_id == UID)
    .values(
        valid_until=sa.bindparam("valid_until"),
        confidence=sa.bindparam("confidence"),
        source=sa.bindparam("source"),
        value_score=sa.bindparam("value_score"),
        consent_source=sa.bindparam("consent_source"),
        updated_at=NOW,
        weight=1.0,
        tier="hot",
    )
)


def search(terms: Sequence[str]) -> sa.Select[Any]:
    """Live facts whose key, or unencrypted value, contains one of ``terms`` literally (LIKE
    with ``%``, ``_`` and the escape character escaped). Ciphertext is never matched."""
    plain = F.c.encrypted.is_(False)
    hits = [F.c.key.contains(w, autoescape=True) for w in terms] + [
        sa.and_(plain, F.c.value.contains(w, autoescape=True)) for w in terms
    ]
    return sa.select(F).where(*LIVE, sa.or_(*hits))


@dataclass(frozen=True)
class ReadStatements:
    get: Prepared
    by_entity: Prepared
    by_intent: Prepared
    bump: Prepared
    audit: Prepared

    @classmethod
    def compile(cls, dialect: Dialect) -> ReadStatements:
        return cls(
            get=Prepared(GET, dialect),
            by_entity=Prepared(BY_ENTITY, dialect),
            by_intent=Prepared(BY_INTENT, dialect),
            bump=Prepared(BUMP, dialect),
            audit=Prepared(AUDIT_ROW, dialect),
        )
