"""Handoff tickets (ARCHITECTURE §8, seed 001 §4.3 转人工): what the ``handoff_human`` fallback
leaves for a human agent, a row in ``skill_ticket`` with the conversation context, and what
``charter tickets list|show`` reads.

Ids are ``T-000001``, ``T-000002`` ... one sequence per database, not ULIDs: a human reads a
ticket id aloud or types it into a queue tool, and a short number that says how many came before
does that better than 26 random characters. The price is that creating a ticket is serialised
per database (a handoff is a human-rate event, so nobody waits): the next number is ``max(seq)
+ 1`` read and written in one transaction that holds the table's write lock, SQLite's ``BEGIN
IMMEDIATE`` or PostgreSQL's ``LOCK TABLE ... SHARE ROW EXCLUSIVE`` (which leaves plain reads
alone, and is per table, so each schema keeps its own sequence). A unique index on ``seq`` is
the last line should anything bypass the lock. Past 999999 the number just grows a digit.

A ticket is ``open`` when created, ``assigned`` once someone takes it (it may be handed on to
someone else), ``closed`` with a note when done; a closed ticket never changes again. Each change
reads the row under ``FOR UPDATE`` (PostgreSQL) or the write lock (SQLite), so of two agents
closing one ticket at once exactly one succeeds and the other is told it is already closed.

The context is stored as JSON text exactly as ``json.dumps`` writes it (key order and Chinese
text kept, on every database): it is a record for a person and for other systems, not a column
to query. Timestamps follow the goal store's convention (aware UTC written, naive read as UTC).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, cast, get_args

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from charter.skills.tickets_migrations import COMPONENT, TICKET_MIGRATIONS
from charter.store.clock import Clock, as_utc, utcnow
from charter.store.migrations import MigratedStore, transaction
from charter.store.privacy import scrub_json

TicketStatus = Literal["open", "assigned", "closed"]
STATUSES: tuple[TicketStatus, ...] = get_args(TicketStatus)
DEFAULT_QUEUE = "human"
DEFAULT_LIMIT = 50
ID_PREFIX = "T-"


def ticket_id(seq: int) -> str:
    return f"{ID_PREFIX}{seq:06d}"


_MD = sa.MetaData()
_WHEN = sa.DateTime(timezone=True)
TICKETS = sa.Table(
    "skill_ticket",
    _MD,
    sa.Column("id", sa.String, primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False, unique=True),  # orders tickets exactly
    sa.Column("created_at", _WHEN, nullable=False),
    sa.Column("updated_at", _WHEN, nullable=False),  # the last status change
    sa.Column("status", sa.String, nullable=False),
    sa.Column("queue", sa.String, nullable=False),
    sa.Column("user_id", sa.String, nullable=False),
    sa.Column("session_id", sa.String, nullable=False),
    sa.Column("domain", sa.String, nullable=False),
    sa.Column("skill", sa.String, nullable=True),
    sa.Column("reason", sa.String, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("context", sa.Text, nullable=False),
    sa.Column("assignee", sa.String, nullable=True),
    sa.Column("note", sa.Text, nullable=True),  # the closing note
    sa.Index("ix_skill_ticket_status_seq", "status", "seq"),
    sa.Index("ix_skill_ticket_user_seq", "user_id", "seq"),
)
T = TICKETS


class TicketNotFound(LookupError):
    """No ticket has this id."""

    def __init__(self, tid: str) -> None:
        super().__init__(f"no ticket {tid!r}")
        self.ticket_id = tid


class TicketClosed(ValueError):
    """The ticket is closed: it cannot be assigned or closed again."""


@dataclass(frozen=True)
class Ticket:
    id: str
    status: TicketStatus
    queue: str
    user_id: str
    session_id: str
    domain: str  # the pack
    skill: str | None  # the skill whose failure led here, if one did
    reason: str  # why the handoff: "user negated twice", "breaker open" ...
    summary: str
    context: dict[str, Any]  # what the caller gave, as JSON gives it back
    assignee: str | None
    note: str | None  # the closing note
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, m: Mapping[Any, Any]) -> Ticket:
        return cls(
            id=m["id"],
            status=cast(TicketStatus, m["status"]),
            queue=m["queue"],
            user_id=m["user_id"],
            session_id=m["session_id"],
            domain=m["domain"],
            skill=m["skill"],
            reason=m["reason"],
            summary=m["summary"],
            context=json.loads(m["context"]),
            assignee=m["assignee"],
            note=m["note"],
            created_at=as_utc(m["created_at"]),
            updated_at=as_utc(m["updated_at"]),
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, times as ``2024-05-01T10:00:00Z``: what ``--format json`` prints."""
        return {
            "id": self.id,
            "status": self.status,
            "queue": self.queue,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "domain": self.domain,
            "skill": self.skill,
            "reason": self.reason,
            "summary": self.summary,
            "context": self.context,
            "assignee": self.assignee,
            "note": self.note,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


def iso(at: datetime) -> str:
    utc = as_utc(at)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{utc.microsecond:06d}Z" if utc.microsecond else f"{text}Z"


class TicketStoreProtocol(Protocol):
    """What the ``handoff_human`` fallback needs: tests of the fallback pass a fake."""

    def open(
        self,
        *,
        user_id: str,
        session_id: str,
        domain: str,
        reason: str,
        summary: str = "",
        context: Mapping[str, Any] | None = None,
        skill: str | None = None,
        queue: str = DEFAULT_QUEUE,
    ) -> Ticket: ...


def _context_text(context: Mapping[str, Any] | None) -> str:
    try:
        return json.dumps(dict(context or {}), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the ticket context must be JSON-serialisable: {exc}") from exc


def _require(**fields: str) -> None:
    for name, value in fields.items():
        if not value:
            raise ValueError(f"a ticket needs a {name}")


_NEXT_SEQ = sa.select(sa.func.coalesce(sa.func.max(T.c.seq), 0) + 1)


class TicketStore(MigratedStore):
    """Handoff tickets in SQL (SQLite by default, PostgreSQL by URL, or an engine from
    ``store.migrations.make_engine`` shared with other stores and left open by ``dispose``),
    migrated on open. ``clock`` stamps every row (tests pass a fake one).

    ``close(ticket_id, note)`` closes a *ticket*; the store's own connections are released by
    ``dispose()`` or by leaving its ``with`` block."""

    def __init__(
        self, url: str | Engine, *, clock: Clock = utcnow, scrub: Callable[[str], str] = str
    ) -> None:
        self._clock = clock
        # an agent's store scrubs what users typed like memory does (issue 16): the reason,
        # the summary and every text of the context (the query, a skill's arguments)
        self._scrub = scrub
        super().__init__(url, COMPONENT, TICKET_MIGRATIONS)

    def _now(self) -> datetime:
        return as_utc(self._clock())

    # ---- writing -------------------------------------------------------------------------

    def open(
        self,
        *,
        user_id: str,
        session_id: str,
        domain: str,
        reason: str,
        summary: str = "",
        context: Mapping[str, Any] | None = None,
        skill: str | None = None,
        queue: str = DEFAULT_QUEUE,
    ) -> Ticket:
        """A new ``open`` ticket with the next id of this database. Raises ValueError for an
        empty user, session, domain, reason or queue, or a context JSON cannot hold."""
        _require(user_id=user_id, session_id=session_id, domain=domain, reason=reason, queue=queue)
        text = _context_text(scrub_json(dict(context or {}), self._scrub))
        reason, summary = self._scrub(reason), self._scrub(summary)
        now = self._now()
        with transaction(self._engine, write=True) as conn:
            if conn.dialect.name == "postgresql":
                # self-conflicting, so writers queue for the next number; plain reads go on
                conn.execute(sa.text("LOCK TABLE skill_ticket IN SHARE ROW EXCLUSIVE MODE"))
            seq = int(conn.execute(_NEXT_SEQ).scalar_one())
            row = {
                "id": ticket_id(seq),
                "seq": seq,
                "created_at": now,
                "updated_at": now,
                "status": "open",
                "queue": queue,
                "user_id": user_id,
                "session_id": session_id,
                "domain": domain,
                "skill": skill,
                "reason": reason,
                "summary": summary,
                "context": text,
                "assignee": None,
                "note": None,
            }
            conn.execute(T.insert(), row)
        return Ticket.from_row(row)

    def assign(self, ticket_id: str, who: str) -> Ticket:
        """Give an open or assigned ticket to ``who`` (handing it on replaces the assignee).
        Raises TicketNotFound, TicketClosed, or ValueError for an empty ``who``."""
        if not who:
            raise ValueError("a ticket is assigned to someone: who is empty")
        refused = f"ticket {ticket_id} is closed: it cannot be assigned"
        return self._change(ticket_id, "assigned", {"assignee": who}, refused)

    def close(self, ticket_id: str, note: str) -> Ticket:
        """Close an open or assigned ticket with a note (what was done). Raises TicketNotFound,
        or TicketClosed when it is closed already."""
        refused = f"ticket {ticket_id} is already closed"
        return self._change(ticket_id, "closed", {"note": note}, refused)

    def _change(self, tid: str, to: TicketStatus, values: dict[str, Any], refused: str) -> Ticket:
        with transaction(self._engine, write=True) as conn:
            query = sa.select(T.c.status).where(T.c.id == tid).with_for_update()
            status = conn.execute(query).scalar()
            if status is None:
                raise TicketNotFound(tid)
            if status == "closed":
                raise TicketClosed(refused)
            update = sa.update(T).where(T.c.id == tid)
            conn.execute(update.values(status=to, updated_at=self._now(), **values))
            row = conn.execute(sa.select(T).where(T.c.id == tid)).mappings().one()
            return Ticket.from_row(row)

    # ---- reading -------------------------------------------------------------------------

    def get(self, ticket_id: str) -> Ticket | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(T).where(T.c.id == ticket_id)).mappings().first()
        return None if row is None else Ticket.from_row(row)

    def delete_user(self, user_id: str) -> int:
        """Delete every ticket of the user (forget); return how many went."""
        with transaction(self._engine, write=True) as conn:
            return int(conn.execute(sa.delete(T).where(T.c.user_id == user_id)).rowcount)

    def list(
        self,
        *,
        status: TicketStatus | None = None,
        user_id: str | None = None,
        limit: int = DEFAULT_LIMIT,
    ) -> builtins.list[Ticket]:
        """The newest ``limit`` tickets, newest first (by id: exact whatever the clock says),
        only those in ``status`` and of ``user_id`` when given."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"unknown ticket status {status!r} (one of {', '.join(STATUSES)})")
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        query = sa.select(T).order_by(T.c.seq.desc()).limit(limit)
        if status is not None:
            query = query.where(T.c.status == status)
        if user_id is not None:
            query = query.where(T.c.user_id == user_id)
        with self._engine.connect() as conn:
            return [Ticket.from_row(m) for m in conn.execute(query).mappings()]
