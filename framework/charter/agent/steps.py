"""The steps of a turn before and after generation (the loop is ``charter.agent.loop``; the
judgement of a generated answer is ``charter.agent.judge``)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from charter.agent.judge import (
    Judged,
    escalate_uncertain,
    escalation_text,
    give_up,
    open_ticket,
    reflect,
    rule_context,
)
from charter.agent.parts import AgentOptions, Parts, slot_args
from charter.agent.prompt import DEFAULT_INTRO, Prompt, PromptParts, assemble
from charter.agent.reply import Reply, is_negation
from charter.events import MemoryWrite, Reflection
from charter.goals.tables import Goal
from charter.goals.tracker import Turn
from charter.memory import narrative_lifecycle
from charter.memory.pipeline import Candidate
from charter.memory.records import Accessor, Fact, PreparedFact, PreparedSummary
from charter.skills.fallback import CallContext
from charter.skills.runner import SkillOutcome
from charter.traces.model import Trace

__all__ = [
    "Judged",
    "escalate_uncertain",
    "escalation_text",
    "give_up",
    "open_ticket",
    "reflect",
    "rule_context",
]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{5,}$")


# ---- input ------------------------------------------------------------------------------------


def negations(p: Parts, user_id: str, session_id: str, text: str) -> int:
    """How many times in a row the user has now said the answer was wrong (this turn
    included): the ``negations >= N`` of fallback protocols."""
    if not is_negation(text):
        return 0
    count = 1
    for turn in reversed(p.short_term.turns(user_id, session_id)):
        if not is_negation(turn.text):
            break
        count += 1
    return count


def deprecate(p: Parts, accessor: Accessor, session_id: str) -> int:
    """我懂了: the questions about what the user asked last stop being recalled."""
    if p.memory.narrative is None:
        return 0
    earlier = p.short_term.turns(accessor.user_id, session_id)
    if not earlier:
        return 0
    return len(narrative_lifecycle.deprecate(p.memory.narrative, accessor, earlier[-1].text))


# ---- goals --------------------------------------------------------------------------------------


@dataclass
class Planned:
    turn: Turn | None
    session_id: str = ""
    active: list[Goal] = field(default_factory=list)
    slots: dict[str, dict[str, Any]] = field(default_factory=dict)  # goal id -> its slots
    questions: tuple[str, ...] = ()
    confirm: str | None = None
    entities: list[str] = field(default_factory=list)
    decision: str = "no goals.yaml"

    def trace(self) -> dict[str, Any]:
        plan = self.turn.plan.as_dict() if self.turn is not None else {}
        return {
            "plan": plan,
            "active": [
                {"id": g.id, "intent": g.intent, "description": g.description} for g in self.active
            ],
            "questions": list(self.questions),
            "confirm": self.confirm,
        }


def plan(p: Parts, user_id: str, session_id: str, text: str) -> Planned:
    if p.tracker is None:
        return Planned(None, session_id)
    turn = p.tracker.handle(user_id, session_id, text)
    active = p.goals.active(user_id, session_id)
    slots = {
        g.id: {k: v for k, v in p.goals.context(g.id).items() if not k.startswith("_")}
        for g in active
    }
    entities = sorted(
        {
            str(v)
            for values in slots.values()
            for v in values.values()
            if isinstance(v, str | int) and _ID.match(str(v))
        }
    )
    made = len(turn.created)
    decision = f"{made} new goal(s), {len(active)} active"
    if turn.questions:
        decision += f", {len(turn.questions)} question(s)"
    if turn.confirm:
        decision += ", a split to confirm"
    return Planned(
        turn, session_id, active, slots, turn.questions, turn.confirm, entities, decision
    )


# ---- memory -----------------------------------------------------------------------------------


@dataclass
class Recalled:
    step: str = "none"
    reason: str = ""
    facts: list[Fact] = field(default_factory=list)
    fact_texts: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    ids: tuple[str, ...] = ()
    min_confidence: float | None = None
    uncertain: bool = False
    recent: list[str] = field(default_factory=list)  # this session's turns, for the claims check

    def trace(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "reason": self.reason,
            "facts": self.fact_texts,
            "summaries": self.summaries,
            "min_confidence": self.min_confidence,
        }


def _shown(p: Parts, fact: Fact) -> str:
    try:
        value = p.pipeline.reveal(fact)
    except Exception:  # an encrypted value without the key is not shown, not guessed
        value = "（加密信息）"
    return f"{fact.key}：{value}"


def recall(p: Parts, accessor: Accessor, text: str, planned: Planned) -> Recalled:
    intent = planned.active[0].intent if planned.active else None
    got = p.memory.recall(accessor, text, entity_refs=planned.entities, intent=intent)
    facts = list(got.facts)
    conf = min((f.confidence for f in facts), default=None)
    recent = (
        [
            t
            for turn in p.short_term.turns(accessor.user_id, planned.session_id)
            for t in (turn.summary, turn.text)
            if t
        ]
        if planned.session_id
        else []
    )
    return Recalled(
        recent=recent,
        step=got.step,
        reason=got.reason,
        facts=facts,
        fact_texts=[_shown(p, f) for f in facts],
        summaries=[h.summary.text for h in got.summaries],
        ids=tuple([f.id for f in facts] + [h.summary.id for h in got.summaries]),
        min_confidence=conf,
        uncertain=conf is not None and conf < p.policy.uncertainty,
    )


def call_context(
    p: Parts,
    user_id: str,
    session_id: str,
    text: str,
    negations: int,
    recalled: Recalled,
    extra: Mapping[str, Any] | None,
) -> CallContext:
    conversation = (*(t.text for t in p.short_term.turns(user_id, session_id)), text)
    return CallContext(
        query=text,
        negations=negations,
        confidence=recalled.min_confidence,
        user_id=user_id,
        session_id=session_id,
        conversation=conversation,
        extra=dict(extra or {}),
    )


# ---- skills -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Called:
    goal_id: str
    skill: str
    args: Mapping[str, Any]
    outcome: SkillOutcome

    @property
    def status(self) -> str:
        return self.outcome.status


def call_skills(p: Parts, planned: Planned, ctx: CallContext) -> list[Called]:
    """Each active goal whose intent names a skill calls it, when the goal's slots give every
    argument the contract requires (a missing one is the planner's question to ask)."""
    if p.runner is None or p.pack.goals is None:
        return []
    out = []
    for goal in planned.active:
        intent = p.pack.goals.intent(goal.intent)
        binding = intent.skill if intent is not None else None
        if binding is None:
            continue
        args = slot_args(binding.args, planned.slots.get(goal.id, {}))
        contract = p.runner.contract(binding.name)
        if any(name not in args for name in contract.input_schema.get("required", [])):
            continue
        out.append(Called(goal.id, binding.name, args, p.runner.call(binding.name, args, ctx)))
    return out


def outcome_dict(c: Called) -> dict[str, Any]:
    o = c.outcome
    return {
        "goal": c.goal_id,
        "skill": c.skill,
        "args": dict(c.args),
        "status": o.status,
        "text": o.text,
        "failure": o.failure.kind if o.failure is not None else None,
        "fallback": o.fallback.action if o.fallback is not None else None,
        "ticket": o.fallback.ticket if o.fallback is not None else None,
    }


# ---- deterministic answers --------------------------------------------------------------------


@dataclass(frozen=True)
class Direct:
    text: str
    by: str  # planner, fallback, skill
    ticket: str | None = None
    action: str = ""  # the fallback's action: clarify asks, degrade_to_faq/call/... answer

    @property
    def asks(self) -> bool:
        return self.by in ("planner", "skill") or self.action == "clarify"


def deterministic(p: Parts, planned: Planned, called: Sequence[Called]) -> Direct | None:
    """An answer that needs no model: the planner's confirmation or questions, a fallback
    that answered (FAQ, clarify, handoff, template), arguments the contract refused."""
    if planned.confirm:
        return Direct(planned.confirm, "planner")
    for c in called:
        fb = c.outcome.fallback
        if fb is not None and fb.action != "none":
            return Direct(fb.text, "fallback", fb.ticket, fb.action)
        if c.outcome.status == "invalid":
            return Direct(c.outcome.text, "skill")
    if planned.questions and not any(c.status == "ok" for c in called):
        return Direct(" ".join(planned.questions), "planner")
    return None


# ---- generation -------------------------------------------------------------------------------


def prompt(
    p: Parts,
    text: str,
    planned: Planned,
    recalled: Recalled,
    called: Sequence[Called],
    guidance: Sequence[str],
    ctx: CallContext,
) -> Prompt:
    profile = [
        t
        for f, t in zip(recalled.facts, recalled.fact_texts, strict=True)
        if f.memory_type == "preference"
    ]
    facts = [
        t
        for f, t in zip(recalled.facts, recalled.fact_texts, strict=True)
        if f.memory_type != "preference"
    ]
    parts = PromptParts(
        query=text,
        profile=tuple(profile),
        task=tuple(g.description for g in planned.active),
        facts=tuple(facts + recalled.summaries),
        skills=tuple(c.outcome.text for c in called if c.status == "ok"),
        summaries=tuple(p.short_term.prompt_summaries(ctx.user_id, ctx.session_id)),
        guidance=tuple(guidance),
    )
    count = getattr(p.llm, "count_tokens", None)
    intro = DEFAULT_INTRO.format(name=p.pack.name)
    return assemble(parts, intro=intro, budget=p.policy.prompt_tokens, count=count)


# ---- after the answer -------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "、".join(map(str, value)) if isinstance(value, list) else str(value)


def remember(
    p: Parts,
    accessor: Accessor,
    session_id: str,
    text: str,
    reply: Reply,
    planned: Planned,
    options: AgentOptions,
) -> dict[str, Any]:
    """The turn into short-term memory; what the user stated (this turn's slot values) into
    the fact channel, through the write pipeline; the question into the narrative channel."""
    intent = planned.active[0].intent if planned.active else None
    p.short_term.record(accessor.user_id, session_id, text, reply.text, intent=intent)
    if not options.write_memory:
        return {"facts": 0, "dropped": 0, "summaries": 0}
    given: list[tuple[str, str, Any]] = []
    if planned.turn is not None:
        for g in planned.turn.plan.goals:
            given += [(g.intent, k, v) for k, v in g.slots.items()]
        given += [("", u.slot, u.value) for u in planned.turn.plan.updates]
    written = dropped = 0
    for intent_id, key, value in given:
        if value in (None, "", []):
            continue
        shown = _text(value)
        candidate = Candidate(
            key=key,
            value=shown,
            domain=options.use,
            entity_ref=shown if _ID.match(shown) else None,
            intent_type=intent_id or intent,
        )
        prepared = p.pipeline.prepare(accessor, candidate)
        if isinstance(prepared, PreparedFact):
            fact = p.facts.write(accessor, prepared)
            written += 1
            if p.notify is not None:
                p.notify(
                    "charter_on_memory_write",
                    MemoryWrite(
                        action="write",
                        layer="facts",
                        user_id=accessor.user_id,
                        key=fact.key,
                        value=fact.value,  # as stored: redacted, encrypted when the policy says
                        memory_type=fact.memory_type,
                        confidence=fact.confidence,
                        memory_id=fact.id,
                        at=fact.created_at,
                    ),
                )
        else:
            dropped += 1
    summaries = 0
    if p.memory.narrative is not None:
        made = p.pipeline.prepare_summary(
            accessor,
            text,
            domain=options.use,
            kind="question",
            session_id=session_id,
            intent_type=intent,
        )
        if isinstance(made, PreparedSummary):
            summaries = len(p.memory.narrative.add(accessor, [made]))
    return {"facts": written, "dropped": dropped, "summaries": summaries}


def with_questions(reply: Reply, planned: Planned) -> Reply:
    """A question the planner still has (a slot another goal needs) is asked after the
    answer, not dropped because one goal could already be answered."""
    if not planned.questions or reply.answered_by == "planner" or reply.verdict == "escalate":
        return reply
    asked = [q for q in planned.questions if q not in reply.text]
    if not asked:
        return reply
    return dataclasses.replace(reply, text=reply.text + "\n" + " ".join(asked))


def settle_goals(p: Parts, planned: Planned, reply: Reply) -> list[dict[str, Any]]:
    """An answer that passed the rules and delivered what the goals need completes them;
    never a goal whose sub-goals are still open (the root of a split among them)."""
    delivered = reply.verdict in ("pass", "fixed", "retry") and reply.answered_by in (
        "model",
        "template",
    )
    if not delivered or reply.reflection is None or not reply.reflection.goal_aligned:
        return []
    tree = (
        p.goals.tree(planned.active[0].user_id, planned.active[0].session_id)
        if planned.active
        else []
    )
    open_parents = {g.parent_id for g in tree if g.status in ("pending", "active") and g.parent_id}
    moves = []
    for goal in planned.active:
        if goal.id in open_parents and any(
            g.parent_id == goal.id and g.id not in {a.id for a in planned.active}
            for g in tree
            if g.status in ("pending", "active")
        ):
            continue
        done = p.goals.complete(
            goal.id,
            {"answer": p.pipeline.scrub(reply.text)[:200]},
            actor="agent",
            trigger="answer delivered",
        )
        moves.append({"goal": goal.id, "to": "completed", "ok": done.ok})
    return moves


def goal_tree(p: Parts, user_id: str, session_id: str) -> tuple[dict[str, Any], ...]:
    if p.tracker is None:
        return ()
    return tuple(
        {
            "id": g.id,
            "intent": g.intent,
            "status": g.status,
            "parent": g.parent_id,
            "description": g.description,
        }
        for g in p.goals.tree(user_id, session_id)
    )


def _scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrub_json(v, scrub) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_json(v, scrub) for k, v in value.items()}
    return value


def scrubbed(trace: Trace, scrub: Callable[[str], str]) -> Trace:
    """The trace with every text run through the write pipeline's scrubber."""
    return dataclasses.replace(
        trace,
        reply=scrub(trace.reply),
        steps=tuple(
            dataclasses.replace(
                s, inputs=_scrub_json(s.inputs, scrub), outputs=_scrub_json(s.outputs, scrub)
            )
            for s in trace.steps
        ),
    )


def with_trace(reply: Reply, trace_id: str, goals: tuple[dict[str, Any], ...]) -> Reply:
    return dataclasses.replace(reply, trace_id=trace_id, goals=goals)


def after_reflection(p: Parts, reply: Reply, trace_id: str, user_id: str, session_id: str) -> None:
    if p.notify is None or reply.reflection is None:
        return
    r = reply.reflection
    p.notify(
        "charter_after_reflection",
        Reflection(
            pack=p.pack.name,
            verdict=reply.verdict,
            text=reply.text,
            final_text=reply.text,
            failed_rules=r.failed_rules,
            goal_aligned=r.goal_aligned,
            constraints_ok=r.constraints_ok,
            uncertain=r.uncertain,
            attempt=max(reply.attempts, 1),
            trace_id=trace_id,
            user_id=user_id,
            session_id=session_id,
        ),
    )
