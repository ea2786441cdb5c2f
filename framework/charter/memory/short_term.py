"""Short-term memory: per (user, session) the last N turns with short summaries (ARCHITECTURE
§7, seed 000 §3.1.2).

Every key holds the user id and the session id, in memory and in SQL alike: there is no window
shared across users (seed 000 §4.1.2, user B's question answered with user A's name), and an
empty user or session id is refused rather than becoming one shared window.

A turn is scrubbed before it is kept (``scrub``, normally ``WritePipeline.scrub``: the pack's
PII policy applied to free text) and its summary is made from the scrubbed text, so no layer
below sees raw personal data. The prompt carries the newest summaries that fit a token budget
(``prompt_summaries``), not the turns themselves.

Token estimate (``estimate_tokens``), deterministic and on the high side for the BPE tokenizers
of small Chinese-capable models: every non-ASCII, non-space character (a Chinese character,
full-width punctuation) is one token; every run of ASCII letters and digits is one token per
four characters, rounded up; every other ASCII non-space character is one token; white space is
free. ``"订单A1234已发货"`` -> 订 单 (2) + ``A1234`` (2) + 已 发 货 (3) = 7.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

import regex
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from charter.compile.specs.memory import MemoryPolicy
from charter.store.clock import Clock, as_utc, utcnow
from charter.store.migrations import MigratedStore, Migration, transaction

Scrub = Callable[[str], str]
ELLIPSIS = "…"
_TOKENS = regex.compile(r"[A-Za-z0-9]+|\S")
# clause ends; a comma or full stop between digits (1,000  3.5) ends nothing
_CLAUSE_END = regex.compile(r"[。！？!?；;，、\n\r]|(?<![0-9]),|,(?![0-9])|\.(?![0-9A-Za-z])")


def estimate_tokens(text: str) -> int:
    """See the module docstring."""
    return sum(
        math.ceil(len(t) / 4) if t.isascii() and t.isalnum() else 1 for t in _TOKENS.findall(text)
    )


def truncate(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its longest prefix of whole
    grapheme clusters (a letter and its combining marks, an emoji sequence) that leaves room
    for ``…``, followed by ``…``."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    kept = 0
    for grapheme in regex.finditer(r"\X", text):
        if grapheme.end() > limit - 1:
            break
        kept = grapheme.end()
    return text[:kept] + ELLIPSIS


class Summarizer(Protocol):
    def summarize(self, text: str, *, limit: int, keywords: Sequence[str] = ()) -> str:
        """At most ``limit`` characters saying what the turn was about."""
        ...


class ExtractiveSummarizer:
    """The deterministic default, no model involved:

    1. split the text into clauses at 。！？；，、 their ASCII forms and line breaks (a comma or
       full stop inside a number such as 1,000 or 3.5 splits nothing); runs of white space in a
       clause become one space; clauses without a letter, digit or Chinese character go;
    2. take the first clause that contains one of ``keywords`` (the turn's intent and its
       trigger words, matched ignoring ASCII case), else the first clause;
    3. ``truncate`` it to ``limit`` characters (whole graphemes, then ``…``).

    So ``"你好，我想把收货地址改成[ADDRESS]，谢谢"`` with keywords ``("地址",)`` and limit 10 gives
    ``"我想把收货地址改成…"``."""

    def summarize(self, text: str, *, limit: int, keywords: Sequence[str] = ()) -> str:
        clauses = [" ".join(c.split()) for c in _CLAUSE_END.split(text)]
        clauses = [c for c in clauses if regex.search(r"[\w\p{Han}]", c)]
        if not clauses:
            return ""
        wanted = [k.casefold() for k in keywords if k]
        chosen = next((c for c in clauses if any(k in c.casefold() for k in wanted)), clauses[0])
        return truncate(chosen, limit)


@dataclass(frozen=True)
class Turn:
    user_id: str
    session_id: str
    seq: int  # 1, 2, 3 ... within its (user, session), in the order the turns were recorded
    text: str  # what the user said, scrubbed
    reply: str  # what the agent answered, scrubbed
    summary: str
    intent: str | None
    at: datetime


class ShortTermStore(Protocol):
    def append(self, turn: Turn, keep: int) -> Turn:
        """Store ``turn`` (its ``seq`` is assigned here: one more than the (user, session)'s
        newest) and forget all but that window's newest ``keep`` turns."""
        ...

    def recent(self, user_id: str, session_id: str, limit: int) -> list[Turn]:
        """The newest ``limit`` turns of the window, oldest first."""
        ...

    def forget(self, user_id: str, session_id: str | None = None) -> int:
        """Remove the user's turns (of one session, or all); return how many."""
        ...


def _check_ids(user_id: str, session_id: str | None) -> None:
    if not user_id or (session_id is not None and not session_id):
        raise ValueError(
            "short-term memory needs a user id and a session id: an empty one would make one "
            "window shared by everyone without an id"
        )


class InMemoryShortTermStore:
    """A dict of bounded deques keyed by (user_id, session_id); thread-safe."""

    def __init__(self) -> None:
        self._windows: dict[tuple[str, str], deque[Turn]] = {}
        self._last_seq: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def append(self, turn: Turn, keep: int) -> Turn:
        key = (turn.user_id, turn.session_id)
        with self._lock:
            seq = self._last_seq.get(key, 0) + 1
            self._last_seq[key] = seq
            stored = replace(turn, seq=seq)
            window = self._windows.setdefault(key, deque())
            window.append(stored)
            while len(window) > max(keep, 0):
                window.popleft()
            return stored

    def recent(self, user_id: str, session_id: str, limit: int) -> list[Turn]:
        with self._lock:
            window = list(self._windows.get((user_id, session_id), ()))
        return window[-limit:] if limit > 0 else []

    def forget(self, user_id: str, session_id: str | None = None) -> int:
        with self._lock:
            keys = [k for k in self._windows if k[0] == user_id and session_id in (None, k[1])]
            for k in keys:
                self._last_seq.pop(k, None)
            return sum(len(self._windows.pop(k)) for k in keys)


# ---- SQL -----------------------------------------------------------------------------------

COMPONENT = "short_term"
_MD = sa.MetaData()
TURNS = sa.Table(
    "short_term_turn",
    _MD,
    sa.Column("user_id", sa.String, primary_key=True),
    sa.Column("session_id", sa.String, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("reply", sa.Text, nullable=False),
    sa.Column("summary", sa.String, nullable=False),
    sa.Column("intent", sa.String, nullable=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
)


def _v1_short_term(conn: Connection) -> None:
    # a frozen snapshot: version 1 stays what it was whatever TURNS becomes later
    md = sa.MetaData()
    sa.Table(
        "short_term_turn",
        md,
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("session_id", sa.String, primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("reply", sa.Text, nullable=False),
        sa.Column("summary", sa.String, nullable=False),
        sa.Column("intent", sa.String, nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn, checkfirst=False)


SHORT_TERM_MIGRATIONS: tuple[Migration, ...] = (Migration(1, "short_term_turn", _v1_short_term),)
_PG_LOCK_CLASS = zlib.crc32(b"short_term_turn") & 0x7FFFFFFF


def _pg_window_lock(user_id: str, session_id: str) -> int:
    """The second key of the window's advisory lock: a signed 32-bit hash of the window. Two
    windows sharing a hash only wait for each other."""
    digest = zlib.crc32(f"{len(user_id)}:{user_id}:{session_id}".encode())
    return digest - (1 << 32) if digest >= 1 << 31 else digest


class SqlShortTermStore(MigratedStore):
    """Turns in ``short_term_turn`` keyed by (user_id, session_id, seq); SQLite by default,
    PostgreSQL by URL, or an engine from ``store.migrations.make_engine`` shared with other
    stores (left open by ``close``). The schema is migrated (component ``short_term``) when it
    opens."""

    def __init__(self, url: str | Engine) -> None:
        super().__init__(url, COMPONENT, SHORT_TERM_MIGRATIONS)

    def close(self) -> None:
        self.dispose()

    def append(self, turn: Turn, keep: int) -> Turn:
        where = (TURNS.c.user_id == turn.user_id, TURNS.c.session_id == turn.session_id)
        with transaction(self._engine, write=True) as conn:
            if conn.dialect.name == "postgresql":
                # writers of one window queue here, so each reads the seq the previous one wrote
                # (SQLite's BEGIN IMMEDIATE already serialises all writers)
                lock = _pg_window_lock(turn.user_id, turn.session_id)
                conn.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:c, :k)"),
                    {"c": _PG_LOCK_CLASS, "k": lock},
                )
            last = conn.execute(sa.select(sa.func.max(TURNS.c.seq)).where(*where)).scalar()
            stored = replace(turn, seq=(last or 0) + 1)
            conn.execute(TURNS.insert(), _row(stored))
            conn.execute(TURNS.delete().where(*where, TURNS.c.seq <= stored.seq - keep))
        return stored

    def recent(self, user_id: str, session_id: str, limit: int) -> list[Turn]:
        if limit <= 0:
            return []
        query = (
            sa.select(TURNS)
            .where(TURNS.c.user_id == user_id, TURNS.c.session_id == session_id)
            .order_by(TURNS.c.seq.desc())
            .limit(limit)
        )
        with self._engine.connect() as conn:
            rows = list(conn.execute(query).mappings())
        return [
            Turn(
                r["user_id"],
                r["session_id"],
                r["seq"],
                r["text"],
                r["reply"],
                r["summary"],
                r["intent"],
                as_utc(r["at"]),
            )
            for r in reversed(rows)
        ]

    def forget(self, user_id: str, session_id: str | None = None) -> int:
        query = TURNS.delete().where(TURNS.c.user_id == user_id)
        if session_id is not None:
            query = query.where(TURNS.c.session_id == session_id)
        with transaction(self._engine, write=True) as conn:
            return conn.execute(query).rowcount


def _row(turn: Turn) -> dict[str, object]:
    return {
        "user_id": turn.user_id,
        "session_id": turn.session_id,
        "seq": turn.seq,
        "text": turn.text,
        "reply": turn.reply,
        "summary": turn.summary,
        "intent": turn.intent,
        "at": as_utc(turn.at),
    }


def summaries_within(turns: Sequence[Turn], budget: int) -> list[str]:
    """The newest summaries of ``turns`` whose estimated tokens together fit ``budget``, oldest
    first (``ShortTermMemory.prompt_summaries``; a turn that has read its window already passes
    it here instead of reading it again)."""
    chosen: list[str] = []
    for turn in reversed(turns):
        if not turn.summary:
            continue
        cost = estimate_tokens(turn.summary)
        if cost > budget:
            break
        budget -= cost
        chosen.append(turn.summary)
    return chosen[::-1]


# ---- the layer -----------------------------------------------------------------------------


class ShortTermMemory:
    """The short-term layer over a store. ``scrub`` is required, by keyword, so that leaving
    personal data unscrubbed is a visible choice (``scrub=None``, for tests and for text known
    to be clean), never an oversight."""

    def __init__(
        self,
        store: ShortTermStore,
        policy: MemoryPolicy,
        *,
        scrub: Scrub | None,
        summarizer: Summarizer | None = None,
        clock: Clock = utcnow,
    ) -> None:
        self.store = store
        self.policy = policy
        self._scrub: Scrub = scrub or (lambda text: text)
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self._clock = clock

    def record(
        self,
        user_id: str,
        session_id: str,
        text: str,
        reply: str = "",
        *,
        intent: str | None = None,
        keywords: Sequence[str] = (),
    ) -> Turn:
        """Keep a finished turn (scrubbed, summarised) and slide the window."""
        _check_ids(user_id, session_id)
        clean, clean_reply = self._scrub(text), self._scrub(reply)
        limit = self.policy.summary_chars
        words = (intent, *keywords) if intent else tuple(keywords)
        summary = self.summarizer.summarize(clean or clean_reply, limit=limit, keywords=words)
        # a summarizer is pluggable: its promise on length is checked, and it is scrubbed too
        summary = truncate(self._scrub(summary), limit)
        turn = Turn(user_id, session_id, 0, clean, clean_reply, summary, intent, self._clock())
        return self.store.append(turn, self.policy.short_term_turns)

    def turns(self, user_id: str, session_id: str) -> list[Turn]:
        """The window, oldest first."""
        _check_ids(user_id, session_id)
        return self.store.recent(user_id, session_id, self.policy.short_term_turns)

    def prompt_summaries(
        self, user_id: str, session_id: str, token_budget: int | None = None
    ) -> list[str]:
        """The newest summaries whose estimated tokens together fit ``token_budget`` (the
        policy's ``prompt_tokens`` when None), oldest first as they go into the prompt. Taken
        newest first and stopping at the first that does not fit, so the prompt never skips a
        turn between two it shows. Empty summaries are left out."""
        budget = self.policy.prompt_tokens if token_budget is None else token_budget
        return summaries_within(self.turns(user_id, session_id), budget)

    def forget(self, user_id: str, session_id: str | None = None) -> int:
        _check_ids(user_id, session_id)
        return self.store.forget(user_id, session_id)
