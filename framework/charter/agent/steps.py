"""The steps of a turn before and after generation (the loop is ``charter.agent.loop``; the
judgement of a generated answer is ``charter.agent.judge``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from charter.agent.judge import Judged, open_ticket, reflect, rule_context
from charter.agent.parts import Parts, slot_args
from charter.agent.prompt import DEFAULT_INTRO, Prompt, PromptParts, assemble
from charter.agent.reply import is_negation
from charter.compose import events
from charter.goals.tables import Goal
from charter.goals.tracker import Turn
from charter.memory import narrative_lifecycle
from charter.memory.records import Accessor, Fact
from charter.skills.fallback import CallContext
from charter.skills.runner import SkillOutcome

__all__ = ["Judged", "open_ticket", "reflect", "rule_context"]
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{5,}$")


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
    user_id: str = ""
    # goal id -> the slots the model read from this input (the fill step)
    model_read: dict[str, frozenset[str]] = field(default_factory=dict)
    # the goals the input opened, changed, activated or asked about again, in plan order
    touched: list[str] = field(default_factory=list)

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


def plan(
    p: Parts,
    user_id: str,
    session_id: str,
    text: str,
    preset: Mapping[str, Mapping[str, Any]] | None = None,
) -> Planned:
    if p.tracker is None:
        return Planned(None, session_id, user_id=user_id)
    turn = p.tracker.handle(user_id, session_id, text, preset=preset)
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
    # what this session's replies told (a model answer may repeat their amounts and dates; they
    # are not the user's words, so the claims check does not take them)
    replies: list[str] = field(default_factory=list)

    def trace(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "reason": self.reason,
            "facts": self.fact_texts,
            "summaries": self.summaries,
            "min_confidence": self.min_confidence,
            "memories": list(self.ids),
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
    earlier = p.short_term.turns(accessor.user_id, planned.session_id) if planned.session_id else []
    recent = [t for turn in earlier for t in (turn.summary, turn.text) if t]
    return Recalled(
        recent=recent,
        replies=[turn.reply for turn in earlier if turn.reply],
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
    """Each goal this input touched, active, whose intent names a skill calls it, when the
    goal's slots give every argument the contract requires (a missing one is the planner's
    question to ask). A goal the input did not touch is not called again: its result was
    told when it was."""
    if p.runner is None or p.pack.goals is None:
        return []
    out = []
    by_id = {g.id: g for g in planned.active}
    for goal in (by_id[gid] for gid in planned.touched if gid in by_id):
        intent = p.pack.goals.intent(goal.intent)
        binding = intent.skill if intent is not None else None
        if binding is None:
            continue
        contract = p.runner.contract(binding.name)
        args = typed(slot_args(binding.args, planned.slots.get(goal.id, {})), contract.input_schema)
        if any(name not in args for name in contract.input_schema.get("required", [])):
            continue
        out.append(Called(goal.id, binding.name, args, p.runner.call(binding.name, args, ctx)))
    return out


def reopen(p: Parts, planned: Planned, called: Sequence[Called]) -> list[dict[str, Any]]:
    """A call refused for its arguments: the goal waits again for the slots those arguments
    come from (季度只能是第1到第4季度 → the quarter is asked, and 第1季度 answers it)."""
    moves = []
    for c in called:
        failure = c.outcome.failure
        goal = next((g for g in planned.active if g.id == c.goal_id), None)
        intent = p.pack.goals.intent(goal.intent) if goal and p.pack.goals else None
        if intent is None or intent.skill is None:
            continue
        if c.status != "invalid" or failure is None:
            continue
        refused = {f.strip().split(".", 1)[0] for f in failure.field.split(",") if f.strip()}
        slots = sorted(
            name
            for arg, value in intent.skill.args.items()
            if arg in refused and isinstance(value, str)
            for name in re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value)
        )
        if p.tracker is not None and slots:
            done = p.tracker.reopen(
                c.goal_id, slots, trigger=f"{c.skill} refused {', '.join(slots)}"
            )
            moves.append({"goal": c.goal_id, "slots": slots, "ok": bool(done and done.ok)})
    return moves


def typed(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Slot values are text ("2025" read by a regex); an argument the contract declares an
    integer or a number is passed as one when the text is exactly a number."""
    props = schema.get("properties", {})
    out = dict(args)
    for name, value in args.items():
        kind = props.get(name, {}).get("type") if isinstance(props.get(name), dict) else None
        if not isinstance(value, str) or kind not in ("integer", "number"):
            continue
        if re.fullmatch(r"-?[0-9]+", value.strip()):
            out[name] = int(value)
        elif kind == "number" and re.fullmatch(r"-?[0-9]+\.[0-9]+", value.strip()):
            out[name] = float(value)
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
        facts=tuple([*notes, *facts, *recalled.summaries]),
        skills=tuple(c.outcome.text for c in called if c.status == "ok"),
        summaries=tuple(p.short_term.prompt_summaries(ctx.user_id, ctx.session_id)),
        guidance=tuple(guidance),
    )
    count = getattr(p.llm, "count_tokens", None)
    intro = DEFAULT_INTRO.format(name=p.pack.name)
    return assemble(parts, intro=intro, budget=p.policy.prompt_tokens, count=count)
