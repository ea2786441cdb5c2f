"""The reflection log and the record of patch uses, in SQL next to goals, facts and traces.

``reflection_log``: one row per reflection (seed 001 §3.2), the three parts of the seed's entry
— ``hypothesis``, ``evidence`` (at most three typed items: ``user_input``, ``tool_call``,
``user_feedback``, each with its timestamp) and ``correction`` (the parameter values that were
right, or None when the turn did not say) — plus what ``charter learn`` and ``charter health``
group by: the pack, the trigger, the intent and skill, the trace. User words in the evidence are
stored scrubbed of personal data, as memory and traces are; the user id is kept only so that
``forget`` can remove the rows (patches never carry it).

``patch_use``: one row each time a deployed patch changed a turn (rule reuse, failure
interception).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from charter.store.migrations import MigratedStore, Migration, transaction
from charter.traces.model import as_utc, iso, jsonable

COMPONENT = "learning"
MAX_EVIDENCE = 3  # seed 001 §6.2: three items are enough, more made logs fail to be written
EvidenceType = Literal["user_input", "tool_call", "user_feedback"]
EVIDENCE_TYPES: tuple[str, ...] = ("user_input", "tool_call", "user_feedback")
Trigger = Literal["skill_failure", "negation", "entropy", "contradiction", "rejection"]
TRIGGERS: tuple[str, ...] = ("skill_failure", "negation", "entropy", "contradiction", "rejection")


@dataclass(frozen=True)
class Evidence:
    """``content`` is the user's words (user_input, user_feedback); a tool call has ``name``,
    ``params`` and ``result`` instead."""

    type: EvidenceType
    at: datetime
    content: str = ""
    name: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None

    def as_dict(self) -> dict[str, Any]:
        if self.type == "tool_call":
            out: dict[str, Any] = {
                "type": self.type,
                "name": self.name,
                "params": jsonable(dict(self.params)),
                "result": jsonable(self.result),
            }
        else:
            out = {"type": self.type, "content": self.content}
        out["timestamp"] = iso(self.at)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(
            type=data["type"],
            at=datetime.fromisoformat(data["timestamp"]),
            content=data.get("content", ""),
            name=data.get("name", ""),
            params=dict(data.get("params") or {}),
            result=data.get("result"),
        )


@dataclass(frozen=True)
class LogEntry:
    id: str  # R-000001
    pack: str
    trigger: str
    hypothesis: str
    evidence: tuple[Evidence, ...]
    correction: Mapping[str, Any] | None
    created_at: datetime
    user_id: str = ""
    session_id: str = ""
    trace_id: str | None = None
    intent: str | None = None
    skill: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The seed's entry (hypothesis, evidence, correction) and where it came from."""
        return {
            "id": self.id,
            "pack": self.pack,
            "trigger": self.trigger,
            "intent": self.intent,
            "skill": self.skill,
            "hypothesis": self.hypothesis,
            "evidence": [e.as_dict() for e in self.evidence],
            "correction": jsonable(dict(self.correction)) if self.correction is not None else None,
            "created_at": iso(self.created_at),
            "trace_id": self.trace_id,
        }


_MD = sa.MetaData()


def _tables(md: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    log = sa.Table(
        "reflection_log",
        md,
        sa.Column("n", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("pack", sa.String, nullable=False),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("trace_id", sa.String, nullable=True),
        sa.Column("trigger", sa.String, nullable=False),
        sa.Column("intent", sa.String, nullable=True),
        sa.Column("skill", sa.String, nullable=True),
        sa.Column("hypothesis", sa.Text, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
        sa.Column("correction", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_reflection_log_pack_created", "pack", "created_at"),
        sa.Index("ix_reflection_log_user", "user_id"),
        # R-ids are cited by committed patches (learned_from): never given out twice, also
        # after forget deleted the newest rows (SQLite reuses a plain rowid)
        sqlite_autoincrement=True,
    )
    use = sa.Table(
        "patch_use",
        md,
        sa.Column("n", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("pack", sa.String, nullable=False),
        sa.Column("patch_id", sa.String, nullable=False),
        sa.Column("kind", sa.String, nullable=False),  # mapping, calibration
        sa.Column("intent", sa.String, nullable=True),
        sa.Column("user_id", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("trace_id", sa.String, nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_patch_use_pack_at", "pack", "at"),
        sa.Index("ix_patch_use_user", "user_id"),
        sqlite_autoincrement=True,
    )
    return log, use


LOG, USE = _tables(_MD)


def _v1(conn: Connection) -> None:
    md = sa.MetaData()  # a frozen snapshot, whatever LOG and USE become later
    _tables(md)
    md.create_all(conn, checkfirst=False)


LEARNING_MIGRATIONS: tuple[Migration, ...] = (Migration(1, "reflection_log, patch_use", _v1),)


def entry_id(n: int) -> str:
    return f"R-{n:06d}"


def _entry(m: Mapping[Any, Any]) -> LogEntry:
    correction = m["correction"]
    return LogEntry(
        id=entry_id(m["n"]),
        pack=m["pack"],
        trigger=m["trigger"],
        hypothesis=m["hypothesis"],
        evidence=tuple(Evidence.from_dict(e) for e in json.loads(m["evidence"])),
        correction=json.loads(correction) if correction is not None else None,
        created_at=as_utc(m["created_at"]),
        user_id=m["user_id"],
        session_id=m["session_id"],
        trace_id=m["trace_id"],
        intent=m["intent"],
        skill=m["skill"],
    )


class ReflectionLog(MigratedStore):
    """The log of one database (every pack's rows, told apart by ``pack``)."""

    def __init__(self, url: str | Engine) -> None:
        super().__init__(url, COMPONENT, LEARNING_MIGRATIONS)

    def add(
        self,
        *,
        pack: str,
        trigger: str,
        hypothesis: str,
        evidence: Sequence[Evidence],
        correction: Mapping[str, Any] | None,
        at: datetime,
        user_id: str,
        session_id: str,
        trace_id: str | None = None,
        intent: str | None = None,
        skill: str | None = None,
    ) -> LogEntry:
        if trigger not in TRIGGERS:
            raise ValueError(f"unknown trigger {trigger!r}; expected one of {', '.join(TRIGGERS)}")
        if len(evidence) > MAX_EVIDENCE:
            raise ValueError(f"at most {MAX_EVIDENCE} evidence items, not {len(evidence)}")
        if any(e.type not in EVIDENCE_TYPES for e in evidence):
            raise ValueError("evidence types are user_input, tool_call and user_feedback")
        row = {
            "pack": pack,
            "user_id": user_id,
            "session_id": session_id,
            "trace_id": trace_id,
            "trigger": trigger,
            "intent": intent,
            "skill": skill,
            "hypothesis": hypothesis,
            "evidence": json.dumps([e.as_dict() for e in evidence], ensure_ascii=False),
            "correction": (
                json.dumps(jsonable(dict(correction)), ensure_ascii=False)
                if correction is not None
                else None
            ),
            "created_at": as_utc(at),
        }
        with transaction(self._engine, write=True) as conn:
            n = conn.execute(LOG.insert(), row).inserted_primary_key[0]  # type: ignore[index]
        return _entry({**row, "n": n, "created_at": row["created_at"]})

    def entries(
        self,
        pack: str | None = None,
        *,
        since: datetime | None = None,
        trigger: str | None = None,
    ) -> list[LogEntry]:
        """Oldest first."""
        q = sa.select(LOG).order_by(LOG.c.n)
        if pack is not None:
            q = q.where(LOG.c.pack == pack)
        if since is not None:
            q = q.where(LOG.c.created_at >= as_utc(since))
        if trigger is not None:
            q = q.where(LOG.c.trigger == trigger)
        with transaction(self._engine) as conn:
            return [_entry(r._mapping) for r in conn.execute(q)]

    def record_use(
        self,
        *,
        pack: str,
        patch_id: str,
        kind: str,
        at: datetime,
        user_id: str,
        session_id: str,
        intent: str | None = None,
        trace_id: str | None = None,
    ) -> None:
        row = {
            "pack": pack,
            "patch_id": patch_id,
            "kind": kind,
            "intent": intent,
            "user_id": user_id,
            "session_id": session_id,
            "trace_id": trace_id,
            "at": as_utc(at),
        }
        with transaction(self._engine, write=True) as conn:
            conn.execute(USE.insert(), row)

    def uses(self, pack: str | None = None, *, since: datetime | None = None) -> dict[str, int]:
        """How many times each patch changed a turn."""
        q = sa.select(USE.c.patch_id, sa.func.count()).group_by(USE.c.patch_id)
        if pack is not None:
            q = q.where(USE.c.pack == pack)
        if since is not None:
            q = q.where(USE.c.at >= as_utc(since))
        with transaction(self._engine) as conn:
            return {str(pid): int(n) for pid, n in conn.execute(q)}

    def delete_user(self, user_id: str) -> int:
        """``forget``: the user's reflections and patch uses; returns how many rows went."""
        with transaction(self._engine, write=True) as conn:
            gone = conn.execute(LOG.delete().where(LOG.c.user_id == user_id)).rowcount
            gone += conn.execute(USE.delete().where(USE.c.user_id == user_id)).rowcount
        return int(gone)
