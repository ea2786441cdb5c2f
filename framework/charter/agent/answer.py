"""The reply of a turn, built once (ARCHITECTURE §5a): the turn's events composed from the
pack's templates, the open ones answered as the mode allows, the whole text checked by the
rules, and the ``Reply`` made — text, verdict, findings, the reflection record, the template
ids and the events.

Modes (``responses.yaml``, per pack and intent; ``AgentOptions.mode`` overrides):

* ``strict`` — templates only; an open event gets the plain ``unanswered`` reply;
* ``assisted`` — the model answers the open events (what no template covers), each answer
  checked (model-text checks, rules, the goal's deliverables) and retried with guidance;
* ``rephrase`` — as assisted, and the model may also reword the whole composed reply: the
  rewording is kept only when it passes the rules and keeps every amount, date, identifier and
  status of the composed text, else the composed text is sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.agent.judge import alignment_of, open_ticket, rule_context
from charter.agent.reply import ReflectionRecord, Reply
from charter.compile.response_spec import FAQ, SAFE
from charter.compose.composer import MODEL, Composed, Part
from charter.compose.events import Call, GoalView, TurnFacts, turn_events
from charter.goals.tracker import AWAITING, REFUSED
from charter.reflect.engine import Finding

if TYPE_CHECKING:
    from charter.agent.parts import Parts
    from charter.agent.turn import Turn
    from charter.skills.fallback import CallContext


def views(p: Parts, user_id: str, session_id: str) -> dict[str, GoalView]:
    """The session's goals after planning, with their slots."""
    out = {}
    held = p.goals.session(user_id, session_id)
    for g in held.goals:
        context = held.context(g.id)
        slots = {k: v for k, v in context.items() if not k.startswith("_")}
        out[g.id] = GoalView(
            g.id,
            g.intent,
            g.status,
            _described(p, g.intent, g.description, slots),
            slots,
            g.parent_id,
            bool(context.get(AWAITING)) and g.status == "pending",
            dict(context.get(REFUSED) or {}),
        )
    return out


def _described(p: Parts, intent_id: str, stored: str, slots: Mapping[str, Any]) -> str:
    """The goal's description told from its slots as the reply sees them: the store keeps it
    with personal data redacted (为[PHONE]换成99元套餐), which a reply must not show."""
    spec = p.pack.goals.intent(intent_id) if p.pack.goals is not None else None
    if spec is None or not spec.description or p.tracker is None:
        return stored
    return p.tracker.planner.describe(spec.description, slots)


def passed_over(p: Parts, intent: str, slot: str, text: str) -> str | None:
    """What personal data the slot's regex passed over in ``text``, in the recognizers' words
    (``银行卡号``; a recognizer without a ``label``: its kind), or None."""
    spec = p.pack.goals.intent(intent) if p.pack.goals is not None else None
    found = next((s for s in spec.slots if s.name == slot), None) if spec is not None else None
    if p.tracker is None or found is None:
        return None
    reader = p.tracker.planner.reader
    kinds = reader.passed_over(intent, found, text)
    if not kinds and found.regex is not None:
        # an input that is nothing but personal data (a card number answering 请提供订单号):
        # the user meant it for the question, whatever the regex looks like
        matches = [m for m in reader.personal(text) if m.kind not in found.personal]
        rest = list(text)
        for m in matches:
            rest[m.start : m.end] = [" "] * (m.end - m.start)
        if matches and not "".join(rest).strip(" \t\n\u3000。，,.!！?？:：;；"):
            kinds = tuple(dict.fromkeys(m.kind for m in matches))
    if not kinds:
        return None
    words = {r.kind: getattr(r, "label", "") or r.kind for r in p.registry.pii_recognizers.values()}
    return "、".join(words.get(k, k) for k in kinds)


def compose(p: Parts, now: Turn) -> Composed:
    """The turn's events told by the templates (open ones left for the mode to answer)."""
    planned, called, handoff, turn, text = (
        now.planned,
        now.called,
        now.handoff,
        now.number,
        now.text,
    )
    if planned.turn is None:
        facts = None
        events = []
    else:
        facts = TurnFacts(
            p.pack.goals,
            planned.turn.plan,
            views(p, planned.user_id, planned.session_id),
            planned.turn.created,
            [Call(c.goal_id, c.skill, c.args, c.outcome, c.refused) for c in called],
            handoff,
            asks=[a.goal for a in planned.turn.asks],
            results_keys={c.name: c.results_key for c in p.pack.skills.contracts}
            if p.pack.skills is not None
            else {},
            passed_over=lambda intent, slot: passed_over(p, intent, slot, text),
            tickets=now.tickets,
        )
        events = turn_events(facts)
    if handoff is not None and facts is None:
        part = p.composer.handed_off(handoff, "handoff", turn)
        return Composed(((part.event, part),))
    return p.composer.compose(events, turn=turn, query=text)


@dataclass
class Drafts:
    """What the model wrote this turn: accepted parts by position, and how it went."""

    parts: dict[int, Part] = field(default_factory=dict)
    attempts: int = 0
    findings: list[Finding] = field(default_factory=list)  # of refused drafts, for the trace
    entropy: float | None = None
    blocked: bool = False
    escalate: str | None = None  # why the rules want a person
    goals: set[str] = field(default_factory=set)  # goals an accepted answer delivered


def finish(p: Parts, now: Turn, *, check: bool = True) -> Reply:
    """The Reply: the composed text (open events answered by the model or told plainly),
    checked by the rules, escalated when they say so, blocked when they block. ``check``:
    False for the ablation's "no reflection" (nothing is checked)."""
    from charter.agent.calls import outcome_dict

    text, composed, planned, recalled = now.text, now.told, now.planned, now.memory
    called, ctx, drafts, turn = now.called, now.call_context, now.drafts, now.number
    rephrased = now.rephrased

    plain = {
        n: p.composer.unanswered(composed.pieces[n][0], turn)
        for n in composed.open_positions()
        if n not in drafts.parts
    }
    composed = composed.filled({**plain, **drafts.parts})
    skills = tuple(outcome_dict(c) for c in called)
    events = tuple(e.as_dict() for e in composed.events)
    reply_text = rephrased if rephrased is not None else composed.text
    unchecked = Reply(
        text=reply_text,
        verdict="pass",
        attempts=drafts.attempts,
        memories_used=recalled.ids,
        skills=skills,
        answered_by="model" if rephrased is not None else _by(composed),
        responses=composed.responses,
        events=events,
        extra=_extra(drafts, composed),
    )
    if not check:  # the ablation's "no reflection": nothing is checked
        return unchecked
    if rephrased is None and composed.parts and all(pt.event.kind == FAQ for pt in composed.parts):
        # a prepared answer of the pack, as written (seed 000 §4.2.2: simple FAQ turns skip
        # reflection); the FAQ's entries are the pack author's text, like its templates
        return dataclasses.replace(unchecked, answered_by="faq")
    context = rule_context(p, planned, recalled, called, reply_text)
    if not drafts.parts and rephrased is None:
        # templates and skill results rest on no memory: only a model's text can rest on a
        # low-confidence one and needs the uncertainty marker
        context["low_confidence"] = False
        context["memory"].pop("min_confidence", None)
    checked = p.engine.check(reply_text, text, context)
    findings = (*drafts.findings, *checked.findings)
    delivered = tuple(g for g in (*composed.delivered, *drafts.goals))
    aligned = alignment_of(p, planned, checked.final_text, delivered)
    record = ReflectionRecord(
        goal_aligned=aligned.aligned,
        constraints_ok=checked.verdict in ("pass", "fixed"),
        uncertain=recalled.uncertain,
        missing=tuple(d.describe for d in aligned.missing),
        failed_rules=tuple(f.rule_id for f in checked.findings if not f.fixed),
        attempts=drafts.attempts,
        verdict=checked.verdict,
    )
    base = dataclasses.replace(
        unchecked,
        text=checked.final_text,
        verdict=checked.verdict,
        findings=tuple(findings),
        reflection=record,
    )
    if checked.verdict == "block" or drafts.blocked:
        refused = tuple(f.rule_id for f in findings if not f.fixed)
        blocked = dataclasses.replace(
            record, constraints_ok=False, failed_rules=refused, verdict="block"
        )
        safe = p.pack.messages.get("safe", "")
        return dataclasses.replace(
            base,
            text=safe,
            verdict="block",
            answered_by="rules",
            reflection=blocked,
            responses=(SAFE,),
        )
    reason = drafts.escalate
    if checked.verdict in ("retry", "escalate"):
        # a text the pack wrote itself breaks a rule (a value a template could not foresee):
        # nothing to regenerate, a person answers (the ticket says which rule)
        reason = f"{checked.verdict}: " + "、".join(checked.failed)
    elif drafts.parts and recalled.uncertain:
        # §5: an answer resting on a memory below the threshold goes to a person
        reason = "uncertain: an answer rests on a low-confidence memory"
    if reason is not None:
        return escalate(p, base, composed, ctx, reason, checked.final_text, findings, turn)
    tickets = [e.ticket for e in composed.events if e.ticket]
    verdict: str = checked.verdict
    if composed.asks and not delivered and not tickets and verdict == "pass":
        verdict = "ask"
    # a safety goal that called a person (fraud) told its own ticket in its template: the
    # reply passed the rules and delivered it, so it completes though the turn is handed over
    alarms = [e.goal for e in composed.events if e.ticket and e.goal and e.kind == "completed"]
    told = alarms and verdict in ("pass", "fixed")
    return dataclasses.replace(
        base,
        verdict="escalate" if tickets else verdict,
        ticket=tickets[0] if tickets else None,
        extra={**base.extra, "alarms": alarms} if told else base.extra,
    )


def escalate(
    p: Parts,
    base: Reply,
    composed: Composed,
    ctx: CallContext,
    reason: str,
    answer: str,
    findings: Sequence[Finding],
    turn: int,
) -> Reply:
    ticket = open_ticket(p, ctx, reason, answer, findings)
    told = p.composer.handed_off(ticket, reason, turn)
    keep = reason.startswith("uncertain")  # the marked answer stays, a person confirms it
    text = f"{base.text}\n{told.text}" if keep else told.text
    responses = (*base.responses, told.id) if keep else (told.id,)
    return dataclasses.replace(
        base,
        text=text,
        verdict="escalate",
        ticket=ticket,
        answered_by=base.answered_by if keep else "escalation",
        responses=responses,
        events=(*base.events, told.event.as_dict()),
    )


def _by(composed: Composed) -> str:
    return "model" if any(pt.id == MODEL for pt in composed.parts) else "template"


def _extra(drafts: Drafts, composed: Composed) -> Mapping[str, Any]:
    delivered = dict.fromkeys([*composed.delivered, *sorted(drafts.goals)])
    out: dict[str, Any] = {"delivered": list(delivered)}
    if drafts.entropy is not None:
        out["entropy"] = drafts.entropy
    return out
