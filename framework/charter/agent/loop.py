"""The turn loop (ARCHITECTURE §5, §7, §12): ``Agent.turn(user_id, session_id, text)``.

    working memory → goals → memory recall (ladder) → skills (guards, fallbacks) →
    deterministic answer? → prompt (distillation template) → generation → reflection
    (rules, goal alignment, uncertainty, hallucination interceptor) → repair / retry with the
    failed rules' guidance / escalate with a ticket / template from skill results →
    memory writes → goal transitions → hooks → trace

Every step is a trace step with its inputs, outputs and decision. The model is asked only
when nothing deterministic can answer: a missing slot is asked by the planner's question, a
split awaiting confirmation by the planner's confirmation, a fallback that clarifies or hands
over answers itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from charter.agent import after, learning, steps
from charter.agent.parts import AgentOptions, Clock, Notify, Parts, build, utcnow
from charter.agent.reply import ReflectionRecord, Reply, is_negation
from charter.agent.selfcheck import SelfReflection
from charter.compile.compiled import CompiledPack
from charter.extensions import LLM, Embedder
from charter.learn.apply import NOTHING, Patched
from charter.learn.triggers import History, mean_entropy
from charter.memory import working
from charter.memory.records import Accessor
from charter.registry import Registry
from charter.traces.recorder import TraceRecorder


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
        self.selfcheck = (
            SelfReflection(parts.llm, pack=parts.pack.name, notify=parts.notify)
            if self.options.self_reflection
            else None
        )

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
        from charter.plugins import default_host

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
        """Remove the user from every store that holds their words: facts, summaries,
        short-term turns, goals, tickets, traces (the audit trail keeps one anonymised row).
        A turn of the user still running finishes first: its writes cannot outlive this."""
        with self._user_lock(user_id):
            if self.selfcheck is not None:
                self.selfcheck.forget(user_id)
            self.history.forget(user_id)
            return self._forget(user_id, tenant)

    def _forget(self, user_id: str, tenant: str | None) -> dict[str, int]:
        counts = self.parts.memory.forget(Accessor(user_id, "agent:forget", role="admin"))
        counts["goals"] = self.parts.goals.forget_user(user_id)
        counts["tickets"] = self.parts.tickets.delete_user(user_id)
        if self.parts.traces is not None:
            counts["traces"] = self.parts.traces.delete_user(user_id, tenant=tenant)
        if self.parts.log is not None:
            counts["reflections"] = self.parts.log.delete_user(user_id)
        return counts

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
        text = " ".join(text.split())
        # one turn of a user at a time (a double click, a client retry, forget meanwhile):
        # planning reads then writes the session's goals, and forget must not be undone by
        # the writes of a turn still running
        with self._user_lock(user_id):
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
                planned = steps.plan(p, user_id, session_id, text, patched.preset)
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
            with rec.step("skills") as s:
                called = steps.call_skills(p, planned, ctx) if opts.skills else []
                s.inputs["calls"] = [{"skill": c.skill, "args": dict(c.args)} for c in called]
                s.outputs["outcomes"] = [steps.outcome_dict(c) for c in called]
                wm.active_context.tool_state = {c.skill: c.status for c in called}
            with rec.step("working_memory") as s:
                s.outputs.update(wm.as_dict())
            direct = steps.deterministic(p, planned, called)
            if direct is not None:
                reply = self._direct(rec, direct, planned, recalled, called, ctx)
            else:
                reply = self._generate(rec, text, planned, recalled, called, ctx, patched)
            reply = after.with_questions(reply, planned)
            if opts.memory:
                with rec.step("memory", {"write": opts.write_memory}) as s:
                    s.outputs.update(
                        after.remember(p, accessor, session_id, text, reply, planned, opts)
                    )
            with rec.step("goal_transitions") as s:
                s.outputs["moves"] = after.settle_goals(p, planned, reply)
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

    def _direct(
        self,
        rec: TraceRecorder,
        direct: steps.Direct,
        planned: steps.Planned,
        recalled: steps.Recalled,
        called: Sequence[Any],
        ctx: Any,
    ) -> Reply:
        p = self.parts
        with rec.step("answer", {"by": direct.by}) as s:
            checked = p.engine.check(
                direct.text, "", steps.rule_context(p, planned, recalled, called)
            )
            s.outputs.update(verdict=checked.verdict, text=checked.final_text)
            s.decision = f"deterministic answer ({direct.by}), no generation"
        record = ReflectionRecord(
            goal_aligned=True,
            constraints_ok=checked.verdict in ("pass", "fixed"),
            uncertain=recalled.uncertain,
            failed_rules=checked.failed,
            attempts=0,
            verdict=checked.verdict,
        )
        text, ticket = checked.final_text, direct.ticket
        if checked.verdict in ("retry", "escalate") and ticket is None:
            # a text the pack wrote itself breaks a rule: nothing to regenerate, a person
            # answers (the ticket says which rule)
            ticket = steps.open_ticket(
                p, ctx, f"{checked.verdict}: " + "、".join(checked.failed), text
            )
            text = steps.escalation_text(p, ticket)
        if ticket is not None:
            verdict = "escalate"
        elif direct.asks and checked.verdict == "pass":
            verdict = "ask"
        else:
            verdict = checked.verdict
        return Reply(
            text=text,
            verdict=verdict,
            findings=checked.findings,
            reflection=record,
            memories_used=recalled.ids,
            ticket=ticket,
            skills=tuple(steps.outcome_dict(c) for c in called),
            answered_by=direct.by,
        )

    def _generate(
        self,
        rec: TraceRecorder,
        text: str,
        planned: steps.Planned,
        recalled: steps.Recalled,
        called: Sequence[Any],
        ctx: Any,
        patched: Patched = NOTHING,
    ) -> Reply:
        p = self.parts
        guidance: tuple[str, ...] = ()
        attempt = 0
        while True:
            attempt += 1
            with rec.step("prompt", {"attempt": attempt}) as s:
                prompt = steps.prompt(
                    p, text, planned, recalled, called, guidance, ctx, patched.notes
                )
                s.outputs.update(tokens=prompt.tokens, dropped=prompt.dropped, text=prompt.text)
            with rec.step("generate", {"attempt": attempt}) as s:
                done = p.llm.generate(
                    list(prompt.messages),
                    max_tokens=self.options.max_tokens,
                    temperature=self.options.temperature,
                )
                entropy = mean_entropy(done)
                s.outputs.update(text=done.text, tokens=done.tokens, timings=dict(done.timings))
                if entropy is not None:
                    s.outputs["entropy"] = round(entropy, 4)
            if not self.options.reflection:
                # the ablation's "no reflection": the model's text as it is
                return Reply(
                    text=done.text,
                    verdict="pass",
                    attempts=attempt,
                    memories_used=recalled.ids,
                    skills=tuple(steps.outcome_dict(c) for c in called),
                )
            with rec.step("reflect", {"attempt": attempt}) as s:
                judged = steps.reflect(p, text, done.text, planned, recalled, called)
                s.outputs.update(judged.trace())
                s.decision = judged.decision(attempt, self.max_retries)
            if self.selfcheck is not None:
                with rec.step("self_reflect", {"attempt": attempt}) as s:
                    goal = "；".join(g.description for g in planned.active)
                    record = judged.record(attempt)
                    own = self.selfcheck.check(
                        goal, judged.checked.final_text, record, rec.id, ctx.user_id, ctx.session_id
                    )
                    s.outputs.update(own.as_dict())
                    s.decision = "disagrees with the rules" if own.disagrees(record) else "agrees"
            if judged.accept:
                reply = judged.reply(attempt, recalled, called)
                if entropy is not None:
                    reply = dataclasses.replace(reply, extra={**reply.extra, "entropy": entropy})
                if recalled.uncertain and reply.verdict in ("pass", "fixed"):
                    # §5: an answer resting on a memory below the threshold carries the
                    # marker and goes to a person
                    with rec.step("escalate", {"why": "uncertain"}) as s:
                        reply = steps.escalate_uncertain(p, reply, ctx)
                        s.outputs.update(ticket=reply.ticket)
                return reply
            if judged.verdict == "retry" and attempt <= self.max_retries:
                guidance = judged.guidance
                continue
            with rec.step("fallback_answer", {"verdict": judged.verdict}) as s:
                reply = steps.give_up(p, text, judged, attempt, planned, recalled, called, ctx)
                s.outputs.update(text=reply.text, ticket=reply.ticket)
                s.decision = reply.answered_by
            return reply


def _compile(pack: str | Path, registry: Registry) -> CompiledPack:
    from charter.cli.common import resolve_domain
    from charter.compile.api import compile_path

    root = resolve_domain(str(pack), registry.packs)
    if root is None:
        raise ValueError(f"unknown pack {str(pack)!r}: a pack directory or a name under domains/")
    compiled, diags = compile_path(root, registry)
    if compiled is None:
        raise ValueError("the pack does not compile:\n" + "\n".join(d.headline() for d in diags))
    return compiled
