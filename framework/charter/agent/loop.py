"""The turn loop (ARCHITECTURE §5, §5a, §7, §12): ``Agent.turn(user_id, session_id, text)``.

    working memory → goals (plan) → slots the model reads → memory recall (ladder) →
    a person asked for? → skills (guards, fallbacks) for the goals the input touched →
    compose: the turn's events told by the pack's templates → open events answered as the
    mode allows (strict: plainly; assisted/rephrase: the model, each draft checked and retried
    with guidance) → the reply checked by the rules (repaired, blocked, escalated) →
    memory writes → goals whose result was told complete → reflection triggers → trace

Every step is a trace step with its inputs, outputs and decision. The model is asked only for
what no template can tell, and only where the pack's mode lets it speak: the shipped packs are
``strict``, so their turns never generate.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from charter.agent import after, answer, calls, learning, shared, stages, steps
from charter.agent.drafts import Drafter
from charter.agent.forget import UserStores, forget_user
from charter.agent.parts import AgentOptions, Notify, Parts, build
from charter.agent.reply import Reply, is_negation
from charter.agent.selfcheck import SelfReflection
from charter.compile.compiled import CompiledPack
from charter.contracts.models import LLM, Embedder
from charter.contracts.registry import Registry
from charter.learn.apply import NOTHING
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
        opts = self.options
        user_id = accessor.user_id
        with working.turn(session_id) as wm:
            with rec.step("input", {"text": text}) as s:
                negations = steps.negations(p, user_id, session_id, text)
                s.outputs.update(negations=negations, negation=is_negation(text))
                if p.policy.deprecates(text):
                    s.outputs["deprecated"] = steps.deprecate(p, accessor, session_id)
            patched = NOTHING
            if opts.reflection and p.matcher:
                with rec.step("patches", {"text": text}) as s:
                    patched = learning.patches(p, text)
                    s.outputs.update(patched.trace())
                    s.decision = f"{len(patched.applied)} learned patch(es) matched"
            with rec.step("goals", {"text": text, "preset": patched.preset}) as s:
                planned = steps.plan(
                    p,
                    user_id,
                    session_id,
                    text,
                    patched.preset,
                    accessor if opts.memory else None,
                )
                s.outputs.update(planned.trace())
                s.decision = planned.decision
            planned = self._fill(rec, text, planned)
            patched = learning.for_plan(patched, planned)
            wm.active_context.current_task = "；".join(g.description for g in planned.active)
            wm.active_context.user_intent = planned.active[0].intent if planned.active else None
            wm.ephemeral_entities.extend(planned.entities)
            with rec.step("recall", {"entities": planned.entities}) as s:
                recalled = (
                    steps.recall(p, accessor, text, planned) if opts.memory else steps.Recalled()
                )
                s.outputs.update(recalled.trace())
                s.decision = f"ladder: {recalled.step}" if opts.memory else "memory off"
            ctx = steps.call_context(p, user_id, session_id, text, negations, recalled, context)
            handoff = None
            if p.composer.teller.wants_handoff(text):
                with rec.step("handoff") as s:
                    handoff = steps.open_ticket(p, ctx, "handoff: the user asked for a person", "")
                    s.outputs["ticket"] = handoff
                    s.decision = "the user asked for a person"
            with rec.step("skills") as s:
                called, staged = (
                    stages.skills(p, planned, ctx) if opts.skills and not handoff else ([], [])
                )
                if staged:
                    s.outputs["stages"] = staged
                s.inputs["calls"] = [{"skill": c.skill, "args": dict(c.args)} for c in called]
                s.outputs["outcomes"] = [calls.outcome_dict(c) for c in called]
                reopened = calls.reopen(p, planned, called)
                if reopened:
                    s.outputs["reopened"] = reopened
                wm.active_context.tool_state = {c.skill: c.status for c in called}
            with rec.step("working_memory") as s:
                s.outputs.update(wm.as_dict())
            turn_no = len(p.short_term.turns(user_id, session_id))
            with rec.step("compose") as s:
                composed = answer.compose(p, planned, called, handoff, turn_no, text)
                s.outputs.update(
                    events=[e.as_dict() for e in composed.events],
                    responses=list(composed.responses),
                    open=[e.as_dict() for e in composed.open],
                )
                s.decision = (
                    f"{len(composed.parts)} part(s) from templates, {len(composed.open)} open"
                )
            drafts = answer.Drafts()
            for n in composed.open_positions():
                event = composed.pieces[n][0]
                if (opts.mode or p.responses.mode_of(event.intent)) != "strict":
                    self.drafter.draft(
                        rec,
                        n,
                        event,
                        drafts,
                        text,
                        planned,
                        recalled,
                        called,
                        ctx,
                        composed,
                        patched,
                    )
            rephrased = None
            first = planned.active[0].intent if planned.active else None
            if (opts.mode or p.responses.mode_of(first)) == "rephrase" and not composed.open:
                rephrased = self.drafter.rephrase(rec, text, composed, planned, recalled, called)
            with rec.step("answer") as s:
                reply = answer.finish(
                    p,
                    text,
                    composed,
                    planned,
                    recalled,
                    called,
                    ctx,
                    drafts,
                    turn_no,
                    check=opts.reflection,
                    rephrased=rephrased,
                )
                s.outputs.update(
                    verdict=reply.verdict, text=reply.text, responses=list(reply.responses)
                )
                s.decision = f"{reply.answered_by}: {reply.verdict}" + (
                    f", ticket {reply.ticket}" if reply.ticket else ""
                )
            if opts.memory:
                with rec.step("memory", {"write": opts.write_memory}) as s:
                    s.outputs.update(
                        after.remember(p, accessor, session_id, text, reply, planned, opts)
                    )
                    if opts.write_memory:  # shareable slot values into the deployment's pool
                        s.outputs.update(shared.share(p, accessor, planned))
            with rec.step("goal_transitions") as s:
                refused = frozenset(c.goal_id for c in called if c.refused)
                s.outputs["moves"] = after.settle_goals(p, planned, reply, refused)
            if opts.reflection:
                with rec.step("learn") as s:
                    s.outputs["patches"] = learning.record_uses(
                        p,
                        patched,
                        planned,
                        accessor,
                        session_id,
                        rec.id,
                        prompted=reply.attempts > 0,
                    )
                    seen = learning.seen(p, text, planned, called, reply)
                    entropy = reply.extra.get("entropy")
                    s.outputs.update(
                        learning.reflect(
                            p,
                            self.history,
                            accessor,
                            session_id,
                            seen,
                            entropy,
                            rec.id,
                            recorded=opts.memory,
                        )
                    )
                    s.decision = (
                        "reflection: " + "、".join(s.outputs["triggers"])
                        if s.outputs["triggers"]
                        else "healthy turn: no reflection"
                    )
            goals = after.goal_tree(p, user_id, session_id)
        return after.with_trace(reply, rec.id, goals)

    def _fill(self, rec: TraceRecorder, text: str, planned: steps.Planned) -> steps.Planned:
        """Slots the model reads, when a goal of this input still lacks them."""
        p = self.parts
        if p.pack.goals is None or planned.turn is None or not p.pack.goals.model_slots:
            return planned
        if not learning.needs_fill(p, planned):
            return planned
        with rec.step("fill") as s:
            planned, done = learning.fill(p, text, planned)
            s.outputs.update(done)
            s.decision = (
                f"{done.get('model_calls', 0)} model call(s)" if done else "nothing for the model"
            )
        return planned


def _compile(pack: str | Path, registry: Registry) -> CompiledPack:
    from charter.compile.api import compile_path
    from charter.pack.resolve import resolve_domain

    root = resolve_domain(str(pack), registry.packs)
    if root is None:
        raise ValueError(f"unknown pack {str(pack)!r}: a pack directory or a name under domains/")
    compiled, diags = compile_path(root, registry)
    if compiled is None:
        raise ValueError("the pack does not compile:\n" + "\n".join(d.headline() for d in diags))
    return compiled
