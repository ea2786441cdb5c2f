"""The turn loop (ARCHITECTURE §5, §5a, §7, §12): ``Agent.turn(user_id, session_id, text)``.

    working memory → goals (plan) → slots the model reads → memory recall (ladder) →
    a person asked for? → skills (guards, fallbacks) for the goals the input touched →
    compose: the turn's events told by the pack's templates → open events answered as the
    mode allows (strict: plainly; assisted/rephrase: the model, each draft checked and retried
    with guidance) → the reply checked by the rules (repaired, blocked, escalated) →
    memory writes → goals whose result was told complete → reflection triggers → trace

Each step is a module of ``charter.agent.pipeline``, run in that order on one ``Turn`` value
(``charter.agent.turn``) loaded here; this module only loads the turn and runs the steps, under
the user's lock. Every step is a trace step with its inputs, outputs and decision. The model is
asked only for what no template can tell, and only where the pack's mode lets it speak: the
shipped packs are ``strict``, so their turns never generate.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from charter.agent import after, pipeline
from charter.agent.drafts import Drafter
from charter.agent.forget import UserStores, forget_user
from charter.agent.parts import AgentOptions, Notify, Parts, build
from charter.agent.reply import Reply
from charter.agent.selfcheck import SelfReflection
from charter.agent.turn import Turn
from charter.compile.compiled import CompiledPack
from charter.contracts.models import LLM, Embedder
from charter.contracts.registry import Registry
from charter.learn.triggers import History
from charter.memory import working
from charter.memory.maintain import MaintenanceReport, maintain
from charter.memory.records import Accessor
from charter.store.clock import Clock, utcnow
from charter.traces.recorder import TraceRecorder

# U+FF10-FF19, FF21-FF3A, FF41-FF5A: the full-width digits and Latin letters
HALF_WIDTH = {
    cp: cp - 0xFEE0
    for lo, hi in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
    for cp in range(lo, hi + 1)
}


class Agent:
    def __init__(self, parts: Parts, options: AgentOptions | None = None) -> None:
        self.parts = parts
        self.options = options or AgentOptions()
        limit = self.options.max_retries
        self.max_retries = int(
            parts.pack.thresholds.get("max_retries", 2) if limit is None else limit
        )
        self.history = History()  # what the reflection triggers remember between turns
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # a lifecycle pass and a forget never interleave: a pass that read a user's questions
        # before the forget would write their merged tag back after it
        self._lifecycle = threading.Lock()
        self.selfcheck = (
            SelfReflection(parts.llm, pack=parts.pack.name, notify=parts.notify)
            if self.options.self_reflection
            else None
        )
        self.drafter = Drafter(parts, self.options, self.max_retries, self.selfcheck)
        self.crew = pipeline.Crew(parts, self.options, self.drafter, self.history)

    @classmethod
    def from_pack(
        cls,
        pack: CompiledPack | str | Path,
        *,
        llm: LLM,
        database_url: str = "sqlite:///charter.db",
        narrative_path: str | Path | None = None,
        embedder: Embedder | None = None,
        memory_key: str | bytes | None = None,
        registry: Registry | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Clock = utcnow,
        notify: Notify | None = None,
        options: AgentOptions | None = None,
    ) -> Agent:
        """An agent for a compiled pack, or a pack directory or name (compiled here)."""
        from charter.plugins.host import default_host

        host = default_host()
        reg = registry or host.registry
        if not isinstance(pack, CompiledPack):
            pack = _compile(pack, reg)
        parts = build(
            pack,
            reg,
            llm,
            database_url=database_url,
            narrative_path=narrative_path,
            embedder=embedder,
            memory_key=memory_key,
            environ=environ,
            clock=clock,
            notify=notify if notify is not None else host.notify,
            options=options,
        )
        return cls(parts, options)

    def close(self) -> None:
        self.parts.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def forget(self, user_id: str, *, tenant: str | None = None) -> dict[str, int]:
        """Remove the user from every store that holds their words (``charter.agent.forget``:
        facts, summaries and vectors, short-term turns, goals and their history, skill
        executions, tickets, traces of ``tenant`` — of every tenant when None —, reflections;
        the audit trail keeps one anonymised row) and from what this process remembers.
        A turn of the user still running finishes first, and so does a lifecycle pass
        (``maintain``): their writes cannot outlive this."""
        with self._user_lock(user_id), self._lifecycle:
            if self.selfcheck is not None:
                self.selfcheck.forget(user_id)
            self.history.forget(user_id)
            stores = UserStores.of(self.parts)
            return forget_user(stores, user_id, actor="agent:forget", tenant=tenant)

    def maintain(self, now: datetime | None = None) -> MaintenanceReport:
        """One pass of the memory lifecycle over every user (``charter.memory.maintain``:
        expiry, decay, archiving, merging, deprecation), never during a forget."""
        with self._lifecycle:
            return maintain(self.parts.facts, self.parts.memory.narrative, now)

    async def aturn(self, user_id: str, session_id: str, text: str, **kw: Any) -> Reply:
        """``turn`` on a worker thread: the event loop stays free while the model generates."""
        return await asyncio.to_thread(self.turn, user_id, session_id, text, **kw)

    def turn(
        self,
        user_id: str,
        session_id: str,
        text: str,
        *,
        role: str = "agent",
        consent: str | None = None,
        tenant: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Reply:
        p = self.parts
        accessor = Accessor(user_id, "agent", role=role, use=self.options.use, consent=consent)
        rec = TraceRecorder(user_id, session_id, p.pack.name, tenant=tenant, wall=p.clock)
        # full-width digits and letters (尾号１２３４, ＳＡＶＥ２０) read as the half-width ones
        # every pattern, extractor and template is written for; punctuation stays as typed
        text = " ".join(text.split()).translate(HALF_WIDTH)
        # one turn of a user at a time (a double click, a client retry, forget meanwhile):
        # planning reads then writes the session's goals, and forget must not be undone by
        # the writes of a turn still running. The personal data of the input is found again,
        # literally, in every text the turn stores (a slot value, a reply echoing it), even
        # where the words that said what it is (身份证号 …) are not written beside it.
        with self._user_lock(user_id), p.pipeline.pii.heard(text):
            if p.keys is not None:
                # the user's data key exists before any store seals inside its own write
                # transaction (a goal's slots): on SQLite, making it there would wait on that
                # transaction's lock
                p.keys.for_write(user_id)
            try:
                reply = self._turn(rec, accessor, session_id, text, context)
            except BaseException:
                self._save(rec, "", "error")  # what ran until the failure is kept
                raise
            self._save(rec, reply.text, reply.verdict)  # inside the lock: forget waits for it
        after.after_reflection(p, reply, rec.id, user_id, session_id)
        return reply

    def _user_lock(self, user_id: str) -> threading.Lock:
        with self._locks_guard:
            lock = self._locks.get(user_id)
            if lock is None:
                lock = self._locks[user_id] = threading.Lock()
            return lock

    def _save(self, rec: TraceRecorder, text: str, verdict: str) -> None:
        if rec.finished or rec.running:
            return  # finished already, or a step never closed: nothing sound to store
        trace = rec.finish(text, verdict)
        if self.parts.traces is not None:
            # what users typed and models wrote is stored only scrubbed, as memory is
            self.parts.traces.save(after.scrubbed(trace, self.parts.pipeline.scrub))

    def _turn(
        self,
        rec: TraceRecorder,
        accessor: Accessor,
        session_id: str,
        text: str,
        context: Mapping[str, Any] | None,
    ) -> Reply:
        p = self.parts
        turn = Turn.load(p.short_term, accessor, rec, session_id, text, context)
        with working.turn(session_id) as wm:
            turn.working = wm
            pipeline.run(self.crew, turn)
            goals = after.goal_tree(p, accessor.user_id, session_id)
        return after.with_trace(turn.answered, rec.id, goals)


def _compile(pack: str | Path, registry: Registry) -> CompiledPack:
    from charter.compile.api import compile_path
    from charter.pack.resolve import resolve_domain

    # a Path is a path; a string is resolved as every command resolves a pack's name (it
    # raises AmbiguousPack, a ValueError, when the name is two different packs')
    root: Path | None = pack if isinstance(pack, Path) else None
    if root is None or not (root / "pack.yaml").is_file():
        root = resolve_domain(str(pack), registry.packs)
    if root is None:
        raise ValueError(f"unknown pack {str(pack)!r}: a pack directory or a name under domains/")
    compiled, diags = compile_path(root, registry)
    if compiled is None:
        raise ValueError("the pack does not compile:\n" + "\n".join(d.headline() for d in diags))
    return compiled
