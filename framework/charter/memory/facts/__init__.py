"""The fact channel (ARCHITECTURE §7): long-term facts of one user at a time, in SQL.

Isolation is structural: every public method that reaches memory takes an ``Accessor`` and
every statement it runs carries ``user_id = :uid`` bound to ``accessor.user_id``; there is no
method that reads a fact without a user. The maintenance methods (``expire``, ``decay``,
``archive_cold``) work across users but return counts only, never a memory.

Writing (``write``) follows ``access.resolve``: a new key is inserted; the same value
refreshes the held row; a different value supersedes the held row (old row ``superseded`` with
``valid_until`` now, new row with ``supersedes``, one transaction, history kept) unless a guess
contradicts a confirmed fact, in which case the guess is stored ``contradicted`` next to it.
A unique partial index keeps one active row per (user, key) even when processes race; the loser
of such a race retries against the winner's row.

Reading returns only ``active`` rows whose ``valid_until`` is in the future (or unset): an
expired, superseded, contradicted, deprecated or archived fact is never returned, whether or
not ``expire`` has run. Each row the policy refuses (domain scope, role, consent) is left out
and audited as denied; each row returned is audited as read and counts as a use
(``access_count`` + 1, ``last_used_at``, weight back to 1, tier hot), in the read's transaction.

Privacy (``list_facts``, ``export``, ``forget``, ``audit_trail``) lives in
``privacy.py``, the lifecycle in ``lifecycle.py``; this class delegates to them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.crypto import FORGOTTEN
from charter.memory.facts import lifecycle, privacy
from charter.memory.facts import sql as S
from charter.memory.facts.access import (
    audit_row,
    change_refusal,
    denied,
    later,
    read_refusal,
    require_user,
    resolve,
    stronger,
    write_refusal,
)
from charter.memory.facts.migrations import COMPONENT, MEMORY_MIGRATIONS
from charter.memory.facts.tables import AuditEntry, fact_from_row
from charter.memory.records import Accessor, Fact, PreparedFact
from charter.store.clock import Clock, as_utc, new_id, utcnow
from charter.store.migrations import MigratedStore, transaction
from charter.store.prepared import Prepared

log = logging.getLogger(__name__)

IdFactory = Callable[[], str]
WRITE_ATTEMPTS = 3  # a lost race for a key's active row is retried against the winner's row


class FactStoreProtocol(Protocol):
    def write(self, accessor: Accessor, fact: PreparedFact) -> Fact: ...
    def get(self, accessor: Accessor, key: str) -> Fact | None: ...
    def by_entity(self, accessor: Accessor, entity_ref: str) -> list[Fact]: ...
    def by_intent(self, accessor: Accessor, intent_type: str, limit: int = 5) -> list[Fact]: ...
    def search_text(
        self, accessor: Accessor, words: Sequence[str], limit: int = 5
    ) -> list[Fact]: ...
    def deprecate(self, accessor: Accessor, key: str) -> Fact | None: ...
    def export(self, accessor: Accessor) -> dict[str, Any]: ...
    def forget(self, accessor: Accessor, *, forgotten_as: str = FORGOTTEN) -> int: ...


def _outlived(row: Mapping[Any, Any], now: datetime) -> bool:
    return row["valid_until"] is not None and as_utc(row["valid_until"]) <= now


class FactStore(MigratedStore):
    """Long-term facts in SQL (SQLite by default, PostgreSQL by URL), migrated on open.
    ``policy`` decides validity defaults, scopes, roles, decay and tiers; ``clock`` stamps
    every row and judges validity (tests pass a fake one); ``ids`` makes fact ids."""

    def __init__(
        self,
        url: str | Engine,
        policy: MemoryPolicy | None = None,
        *,
        clock: Clock = utcnow,
        ids: IdFactory = new_id,
    ) -> None:
        self._policy = policy or MemoryPolicy()
        self._clock = clock
        self._ids = ids
        super().__init__(url, COMPONENT, MEMORY_MIGRATIONS)
        # after the first connection: the dialect knows the server it compiles for
        self._sql = S.ReadStatements.compile(self._engine.dialect)

    @property
    def policy(self) -> MemoryPolicy:
        return self._policy

    def close(self) -> None:
        self.dispose()

    def _now(self) -> datetime:
        return as_utc(self._clock())

    def _deny(self, accessor: Accessor, what: str, why: str) -> None:
        with transaction(self._engine, write=True) as conn:
            conn.execute(S.AUDIT, denied(accessor, self._now(), what, why))

    def record_audit(self, rows: list[dict[str, Any]]) -> None:
        """Append audit rows written by another channel (the narrative store's reads and
        writes), so a user's trail is one table."""
        if rows:
            with transaction(self._engine, write=True) as conn:
                conn.execute(S.AUDIT, rows)

    # ---- writing -------------------------------------------------------------------------

    def write(self, accessor: Accessor, fact: PreparedFact) -> Fact:
        """Store ``fact`` for the accessor's user (see ``access.resolve`` for what it does
        to the fact already held for its key) and return the row that now holds its value: the
        new row, or the refreshed one. A fact the pipeline left without ``valid_until`` gets
        its type's validity from the policy. Raises PermissionError (after auditing the
        refusal) for a fact of another user, a domain the accessor's use may not write, or a
        consent the accessor does not hold."""
        require_user(accessor)
        why = write_refusal(self._policy, accessor, fact)
        if why is not None:
            self._deny(accessor, f"write {fact.key}", why)
            raise PermissionError(f"write {fact.key} refused: {why}")
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return self._write_once(accessor, fact)
            except IntegrityError:
                # another writer made this key's active row between our read and our insert
                if attempt == WRITE_ATTEMPTS:
                    raise
                log.info("fact %s: lost a write race, retrying", fact.key)
        raise AssertionError("unreachable")  # pragma: no cover

    def _new_row(self, accessor: Accessor, fact: PreparedFact, now: datetime) -> dict[str, Any]:
        until = fact.valid_until
        if until is None:
            until = self._policy.valid_until(fact.memory_type, now, fact.confidence)
        return {
            "id": "",  # made when a row is inserted: a refresh makes none
            "user_id": accessor.user_id,
            "key": fact.key,
            "value": fact.value,
            "memory_type": fact.memory_type,
            "level": fact.level,
            "encrypted": fact.encrypted,
            "confidence": fact.confidence,
            "source": fact.source,
            "domain": fact.domain,
            "status": "active",
            "created_at": now,
            "updated_at": now,
            "valid_until": None if until is None else as_utc(until),
            "entity_ref": fact.entity_ref,
            "intent_type": fact.intent_type,
            "consent_source": fact.consent_source or accessor.consent,
            "value_score": fact.value_score,
            "supersedes": None,
            "contradicts": None,
            "access_count": 0,
            "last_used_at": None,
            "weight": 1.0,
            "tier": "hot",
        }

    def _write_once(self, accessor: Accessor, fact: PreparedFact) -> Fact:
        now = self._now()
        row = self._new_row(accessor, fact, now)
        key = fact.key
        ids = {"uid": accessor.user_id, "now": now}
        audit: list[dict[str, Any]] = []
        with transaction(self._engine, write=True) as conn:
            if conn.dialect.name == "postgresql":
                # writers of one (user, key) queue here (SQLite's BEGIN IMMEDIATE queues all
                # writers); the unique index on active rows stays as the safety net
                conn.execute(S.KEY_LOCK, {"lock": f"charter-memory/{accessor.user_id}/{key}"})
            if _outlived(row, now):
                # already outlived: kept for the record, never replaces a live fact
                fid = row["id"] = self._ids()
                row["status"] = "expired"
                conn.execute(S.INSERT_FACT, row)
                why = f"{key}: stored expired (valid_until already passed)"
                conn.execute(S.AUDIT, audit_row(accessor, "write", now, fid, why))
                return fact_from_row(row)
            held = conn.execute(S.HELD, {**ids, "key": key}).mappings().first()
            if held is not None and _outlived(held, now):
                conn.execute(S.SET_STATUS, {**ids, "fid": held["id"], "to": "expired"})
                audit.append(audit_row(accessor, "expire", now, held["id"], f"{key}: outlived"))
                held = None
            how = resolve(held, fact)
            if how == "refresh" and held is not None:
                return self._refresh(conn, accessor, held, fact, row["valid_until"], now, audit)
            fid = row["id"] = self._ids()
            if held is None:
                why = key
            elif how == "contradict":
                row["status"] = "contradicted"
                row["contradicts"] = held["id"]
                why = f"{key}: {fact.source} value contradicts {held['source']} {held['id']}"
            else:
                conn.execute(S.SUPERSEDE, {**ids, "fid": held["id"], "to": "superseded"})
                row["supersedes"] = held["id"]
                audit.append(audit_row(accessor, "supersede", now, held["id"], f"{key}: by {fid}"))
                why = f"{key}: supersedes {held['id']}"
            conn.execute(S.INSERT_FACT, row)
            audit.append(audit_row(accessor, "write", now, fid, why))
            conn.execute(S.AUDIT, audit)
        return fact_from_row(row)

    def _refresh(
        self,
        conn: Connection,
        accessor: Accessor,
        held: Mapping[Any, Any],
        fact: PreparedFact,
        until: datetime | None,
        now: datetime,
        audit: list[dict[str, Any]],
    ) -> Fact:
        held_until = None if held["valid_until"] is None else as_utc(held["valid_until"])
        values = {
            "valid_until": later(held_until, until),
            "confidence": max(held["confidence"], fact.confidence),
            "source": stronger(held["source"], fact.source),
            "value_score": max(held["value_score"], fact.value_score),
            "consent_source": fact.consent_source or accessor.consent or held["consent_source"],
        }
        conn.execute(S.REFRESH, {"uid": accessor.user_id, "now": now, "fid": held["id"], **values})
        audit.append(audit_row(accessor, "refresh", now, held["id"], f"{fact.key}: same value"))
        conn.execute(S.AUDIT, audit)
        return fact_from_row({**held, **values, "updated_at": now})

    def deprecate(self, accessor: Accessor, key: str) -> Fact | None:
        """Mark the user's active fact for ``key`` deprecated (the user said 我懂了): it is no
        longer returned, and kept. None when there is no active fact for the key. Raises
        PermissionError when the accessor's use may not change the fact's domain."""
        require_user(accessor)
        now = self._now()
        ids = {"uid": accessor.user_id, "now": now}
        with transaction(self._engine, write=True) as conn:
            held = conn.execute(S.HELD, {**ids, "key": key}).mappings().first()
            if held is None:
                why = f"{key}: no active fact"
                conn.execute(S.AUDIT, audit_row(accessor, "deprecate", now, None, why))
                return None
            refused = change_refusal(self._policy, accessor, held["domain"])
            if refused is None:
                conn.execute(S.SET_STATUS, {**ids, "fid": held["id"], "to": "deprecated"})
                conn.execute(S.AUDIT, audit_row(accessor, "deprecate", now, held["id"], key))
                return fact_from_row({**held, "status": "deprecated", "updated_at": now})
            conn.execute(S.AUDIT, denied(accessor, now, f"deprecate {key}", refused, held["id"]))
        raise PermissionError(f"deprecate {key} refused: {refused}")

    # ---- reading -------------------------------------------------------------------------

    def get(self, accessor: Accessor, key: str) -> Fact | None:
        """The user's live fact for ``key``, or None (also when the policy refuses it: the
        refusal is audited, not revealed)."""
        found = self._read(accessor, f"get {key}", self._sql.get, {"key": key}, 1)
        return found[0] if found else None

    def by_entity(self, accessor: Accessor, entity_ref: str) -> list[Fact]:
        """The user's live facts about ``entity_ref`` (an order number, a contract id),
        newest first: the first step of the retrieval ladder."""
        return self._read(accessor, "by_entity", self._sql.by_entity, {"ref": entity_ref}, None)

    def by_intent(self, accessor: Accessor, intent_type: str, limit: int = 5) -> list[Fact]:
        """The user's newest live facts that came with ``intent_type``, at most ``limit``."""
        query, params = self._sql.by_intent, {"intent": intent_type}
        return self._read(accessor, f"by_intent {intent_type}", query, params, limit)

    def search_text(self, accessor: Accessor, words: Sequence[str], limit: int = 5) -> list[Fact]:
        """The keyword step of the ladder: the user's live facts whose key or (unencrypted)
        value contains any of ``words`` (literally: ``%`` and ``_`` match themselves), most
        words matched first, then newest. The words are not audited (they are user text)."""
        terms = sorted({w for w in words if w.strip()})
        if not terms or limit <= 0:
            require_user(accessor)
            return []

        def score(m: Mapping[Any, Any]) -> tuple[int, datetime, str]:
            text = m["key"] if m["encrypted"] else f"{m['key']}\n{m['value']}"
            return (sum(w in text for w in terms), as_utc(m["created_at"]), m["id"])

        return self._read(accessor, "search", S.search(terms), {}, limit, rank=score)

    def _read(
        self,
        accessor: Accessor,
        what: str,
        query: Prepared | sa.Select[Any],
        params: dict[str, Any],
        limit: int | None,
        rank: Callable[[Mapping[Any, Any]], Any] | None = None,
    ) -> list[Fact]:
        require_user(accessor)
        now = self._now()
        ids = {"uid": accessor.user_id, "now": now}
        audit: list[dict[str, Any]] = []
        out: list[Fact] = []
        with transaction(self._engine, write=True) as conn:
            if isinstance(query, Prepared):
                rows: Sequence[Mapping[Any, Any]] = query.rows(conn, {**ids, **params})
            else:
                rows = conn.execute(query, ids).mappings().all()
            if rank is not None:
                rows = sorted(rows, key=rank, reverse=True)
            for m in rows:
                if limit is not None and len(out) >= limit:
                    break
                why = read_refusal(self._policy, accessor, m)
                if why is not None:
                    audit.append(denied(accessor, now, what, why, m["id"]))
                    continue
                self._sql.bump.run(conn, {**ids, "fid": m["id"]})
                audit.append(audit_row(accessor, "read", now, m["id"], what))
                used = {"access_count": m["access_count"] + 1, "last_used_at": now}
                out.append(fact_from_row({**m, **used}))
            if not audit:
                audit.append(audit_row(accessor, "read", now, None, f"{what}: nothing found"))
            self._sql.audit.run_many(conn, audit)
        return out

    # ---- privacy (privacy.py) ------------------------------------------------------------

    def list_facts(self, accessor: Accessor, *, history: bool = False) -> list[Fact]:
        """Privileged: the user's active facts by key (every row, oldest first, with
        ``history``), values as stored; not a use (access counts do not change)."""
        return privacy.list_facts(self._engine, accessor, self._now(), history=history)

    def export(self, accessor: Accessor) -> dict[str, Any]:
        """Privileged: every fact of the user in every status, values as stored, and the audit
        trail, as JSON-ready data (``privacy.export``)."""
        return privacy.export(self._engine, accessor, self._now())

    def forget(self, accessor: Accessor, *, forgotten_as: str = FORGOTTEN) -> int:
        """Privileged: delete every fact and audit row of the user; return the facts deleted.
        The one audit row left names the user ``forgotten_as`` (``privacy.forget``)."""
        return privacy.forget(self._engine, accessor, self._now(), forgotten_as)

    def audit_trail(self, accessor: Accessor) -> list[AuditEntry]:
        """Privileged: the user's audit rows, oldest first (this reading is audited too)."""
        return privacy.audit_trail(self._engine, accessor, self._now())

    # ---- lifecycle (lifecycle.py): counts only, never a memory ---------------------------

    def expire(self, now: datetime | None = None) -> int:
        """Mark outlived active facts expired; how many."""
        return lifecycle.expire(self._engine, as_utc(now or self._clock()))

    def decay(self, now: datetime | None = None) -> int:
        """Set active facts' weights for their idle time; how many changed."""
        return lifecycle.decay(self._engine, self._policy, as_utc(now or self._clock()))

    def archive_cold(self, now: datetime | None = None) -> int:
        """Re-tier by idle age and archive active facts gone cold; how many were archived."""
        return lifecycle.archive_cold(self._engine, self._policy, as_utc(now or self._clock()))
