"""The steps of a turn before and after generation (the loop is ``charter.agent.loop``; the
skills it calls are ``charter.agent.calls``; the judgement of a generated answer is
``charter.agent.judge``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.agent import shared
from charter.agent.judge import Judged, open_ticket, reflect, rule_context
from charter.agent.parts import Parts
from charter.agent.prompt import DEFAULT_INTRO, Prompt, PromptParts, assemble
from charter.agent.reply import is_negation
from charter.compose import events
from charter.goals.plans import Plan
from charter.goals.session import SessionGoals
from charter.goals.tables import Goal
from charter.goals.tracker import Turn as GoalTurn
from charter.memory.narrative import lifecycle as narrative_lifecycle
from charter.memory.records import Accessor, Fact
from charter.memory.short_term import Turn as Said
from charter.memory.short_term import summaries_within
from charter.skills.fallback import CallContext
from charter.store.clock import utcnow

if TYPE_CHECKING:
    from charter.agent.calls import Called
    from charter.agent.turn import Turn
    from charter.compile.compiled import CompiledPack

__all__ = ["Judged", "open_ticket", "reflect", "rule_context"]
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{5,}$")


# ---- input ------------------------------------------------------------------------------------


def negations(turn: Turn) -> int:
    """How many times in a row the user has now said the answer was wrong (this turn
    included): the ``negations >= N`` of fallback protocols."""
    if not is_negation(turn.text):
        return 0
    count = 1
    for said in reversed(turn.earlier):
        if not is_negation(said.text):
            break
        count += 1
    return count


def deprecate(p: Parts, turn: Turn) -> int:
    """我懂了: the questions about what the user asked last stop being recalled."""
    if p.memory.narrative is None or not turn.earlier:
        return 0
    return len(
        narrative_lifecycle.deprecate(p.memory.narrative, turn.accessor, turn.earlier[-1].text)
    )


# ---- goals --------------------------------------------------------------------------------------


@dataclass
class Planned:
    turn: GoalTurn | None  # the input applied to the session's goals
    session_id: str = ""
    active: list[Goal] = field(default_factory=list)
    slots: dict[str, dict[str, Any]] = field(default_factory=dict)  # goal id -> its slots
    questions: tuple[str, ...] = ()
    confirm: str | None = None
    entities: list[str] = field(default_factory=list)
    decision: str = "no goals.yaml"
    user_id: str = ""
    # goal id -> the slots the model read from this input (the fill step)
    model_read: dict[str, frozenset[str]] = field(default_factory=dict)
    # the goals the input opened, changed, activated or asked about again, in plan order
    touched: list[str] = field(default_factory=list)
    # the session's goals as planning left them (the steps after read them here)
    goals: SessionGoals = field(default_factory=SessionGoals)

    def trace(self) -> dict[str, Any]:
        plan = self.turn.plan.as_dict() if self.turn is not None else {}
        made = self.turn.plan if self.turn is not None else None
        understood: dict[str, Any] = {"layer": made.layer or "none"} if made is not None else {}
        if made is not None and made.heard is not None:
            understood["examples"] = made.heard.as_dict()
        return {
            "plan": plan,
            "understood": understood,
            "active": [
                {"id": g.id, "intent": g.intent, "description": g.description} for g in self.active
            ],
            "questions": list(self.questions),
            "confirm": self.confirm,
        }


def plan(
    p: Parts,
    user_id: str,
    session_id: str,
    text: str,
    preset: Mapping[str, Mapping[str, Any]] | None = None,
    accessor: Accessor | None = None,
) -> Planned:
    """The input planned and applied. ``accessor``: whose remembered facts the slots declared
    ``carry: memory`` may take (None: memory is off). An input that opens requests without
    giving them anything and matches an FAQ entry closely (``direct_score``) is not applied:
    the FAQ answers it (订单怎么取消？ is a question, not an order to look up)."""
    if p.tracker is None:
        return Planned(None, session_id, user_id=user_id)
    remembered = _remembered(p, accessor) if accessor is not None else {}

    def faq_first(plan: Plan) -> bool:
        return faq_direct(p.pack, plan, text)

    turn = p.tracker.handle(
        user_id, session_id, text, preset=preset, remembered=remembered, unless=faq_first
    )
    # a stage goal is its goal's bookkeeping (agent/stages.py), not a request of the user's
    spec = p.pack.goals
    held = p.goals.session(user_id, session_id)
    active = [g for g in held.active() if not (spec and spec.stage(g.intent))]
    slots = {g.id: held.slots(g.id) for g in active}
    entities = sorted(
        {
            str(v)
            for values in slots.values()
            for v in values.values()
            if isinstance(v, str | int) and ID.match(str(v))
        }
    )
    touched = events.touched(turn.plan, turn.created)
    made = len(turn.created)
    decision = f"{made} new goal(s), {len(active)} active"
    if turn.questions:
        decision += f", {len(turn.questions)} question(s)"
    if turn.confirm:
        decision += ", a split to confirm"
    return Planned(
        turn,
        session_id,
        active,
        slots,
        turn.questions,
        turn.confirm,
        entities,
        decision,
        user_id,
        touched=touched,
        goals=held,
    )


def _remembered(p: Parts, accessor: Accessor) -> dict[str, Any]:
    """The user's live facts for the slots some intent carries from memory, by slot name: each
    read under the key its intent remembers it by (``account-query.card_tail``, or the
    ``memory_key`` the intents that share it declare)."""
    spec = p.pack.goals
    out: dict[str, Any] = {}
    for name, key in sorted((spec.remembered_keys if spec is not None else {}).items()):
        fact = p.facts.get(accessor, key)
        if fact is None:
            continue
        try:
            out[name] = p.pipeline.reveal(fact)
        except Exception:  # a value this key cannot open is not guessed at
            continue
    return out


def faq_direct(pack: CompiledPack, plan: Plan, text: str) -> bool:
    """The plan only opens requests, the input gives none of them a value (a default or a
    carried one is not the input's), and an FAQ entry matches it from ``direct_score`` up."""
    faq = pack.skills.faq if pack.skills is not None else None
    spec = pack.goals
    if faq is None or spec is None:
        return False
    if plan == Plan(dismissed=True):  # 预约后怎么取消？ asks about cancelling, with nothing open
        return bool(faq.lookup(text, min_score=faq.direct_score))
    if not plan.goals:
        return False
    if any(
        (
            plan.updates,
            plan.activate,
            plan.aborts,
            plan.awaits,
            plan.mentions,
            plan.accepted,
            plan.declined,
            plan.confirm,
        )
    ):
        return False
    for g in plan.goals:
        intent = spec.intent(g.intent)
        if intent is not None and intent.safety:
            return False  # an emergency is answered by its own template, never by the FAQ
        defaults = {s.name: s.default for s in intent.slots} if intent is not None else {}
        if g.redoes or any(defaults.get(k) != v for k, v in g.slots.items()):
            return False
    return bool(faq.lookup(text, min_score=faq.direct_score))


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
    # what this session's replies told (a model answer may repeat their amounts and dates; they
    # are not the user's words, so the claims check does not take them)
    replies: list[str] = field(default_factory=list)
    # the deployment's shared facts the turn is about (charter.agent.shared), after the user's
    shared: list[str] = field(default_factory=list)
    shared_trace: dict[str, Any] | None = None
    # the session's short-term window the turn read (the prompt's summaries come from it)
    said: tuple[Said, ...] = ()

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "reason": self.reason,
            "facts": self.fact_texts,
            "summaries": self.summaries,
            "min_confidence": self.min_confidence,
            "memories": list(self.ids),
        }
        if self.shared_trace is not None:
            out["shared"] = self.shared_trace
        return out


def _shown(p: Parts, fact: Fact) -> str:
    try:
        value = p.pipeline.reveal(fact)
    except Exception:  # an encrypted value without the key is not shown, not guessed
        value = "（加密信息）"
    return f"{fact.key}：{value}"


def recall(p: Parts, turn: Turn) -> Recalled:
    accessor, text, planned = turn.accessor, turn.text, turn.planned
    intent = planned.active[0].intent if planned.active else None
    got = p.memory.recall(accessor, text, entity_refs=planned.entities, intent=intent)
    facts = list(got.facts)
    conf = min((f.confidence for f in facts), default=None)
    earlier = turn.earlier
    recent = [t for turn in earlier for t in (turn.summary, turn.text) if t]
    pooled = shared.recall(p, accessor, text, planned)
    step: str = got.step
    reason = got.reason
    if step == "none" and pooled.facts:  # the user's memory had nothing: the pool answered
        step, reason = "shared", f"shared pool: {', '.join(f.key for f in pooled.facts)}"
    return Recalled(
        said=earlier,
        recent=recent,
        replies=[turn.reply for turn in earlier if turn.reply],
        step=step,
        reason=reason,
        facts=facts,
        fact_texts=[_shown(p, f) for f in facts],
        summaries=[h.summary.text for h in got.summaries],
        ids=tuple([f.id for f in facts] + [h.summary.id for h in got.summaries] + pooled.ids()),
        min_confidence=conf,
        uncertain=conf is not None and conf < p.policy.uncertainty,
        shared=pooled.texts(),
        shared_trace=pooled.trace() if p.shared is not None else None,
    )


def call_context(p: Parts, turn: Turn) -> CallContext:
    return CallContext(
        query=turn.text,
        negations=turn.negations,
        confidence=turn.memory.min_confidence,
        user_id=turn.user_id,
        session_id=turn.session_id,
        conversation=(*(said.text for said in turn.earlier), turn.text),
        extra=dict(turn.context or {}),
        # a clock the agent was given (--now, a conversation's now:, clock=) is the skills'
        # clock too; the wall clock they read themselves when they are called
        now=None if p.clock is utcnow else p.clock(),
    )


# ---- generation -------------------------------------------------------------------------------


def prompt(
    p: Parts,
    text: str,
    planned: Planned,
    recalled: Recalled,
    called: Sequence[Called],
    guidance: Sequence[str],
    ctx: CallContext,
    notes: Sequence[str] = (),
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
        facts=tuple([*notes, *facts, *recalled.summaries, *recalled.shared]),
        skills=tuple(c.outcome.text for c in called if c.status == "ok"),
        summaries=tuple(summaries_within(recalled.said, p.policy.prompt_tokens)),
        guidance=tuple(guidance),
    )
    count = getattr(p.llm, "count_tokens", None)
    intro = DEFAULT_INTRO.format(name=p.pack.name)
    return assemble(parts, intro=intro, budget=p.policy.prompt_tokens, count=count)
