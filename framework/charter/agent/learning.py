"""The learning steps of a turn (seed 001 §3): learned patches before planning and the
reflection triggers after the answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from charter.agent.calls import Called
from charter.agent.parts import Parts
from charter.agent.reply import Reply
from charter.agent.steps import Planned
from charter.learn.apply import Patched
from charter.learn.meaning import explains
from charter.learn.triggers import CallSeen, History, Signals, TurnSeen, evaluate
from charter.memory.records import Accessor
from charter.store.privacy import scrub_json

if TYPE_CHECKING:
    from charter.agent.turn import Turn

CONFIRMED = ("user_confirmed", "system_verified")


def local(now: datetime) -> datetime:
    """The planner's calendar: an aware clock read in local time (今年 is the local year)."""
    return now.astimezone().replace(tzinfo=None) if now.tzinfo else now


def patches(p: Parts, text: str) -> Patched:
    return p.matcher.match(text, local(p.clock()))


def _fact_keys(p: Parts, intent: str | None, slots: Mapping[str, Any]) -> dict[str, str]:
    """Each slot's fact key (transfer.amount): where its confirmed value is remembered."""
    spec = p.pack.goals
    if spec is None or intent is None:
        return {}
    return {name: spec.fact_key(intent, name) for name in slots}


def for_plan(patched: Patched, planned: Planned) -> Patched:
    """The calibrations of another intent than the ones planned leave the turn."""
    if not any(a.kind == "calibration" and a.intent for a in patched.applied):
        return patched
    intents = {g.intent for g in planned.active}
    if planned.turn is not None:
        intents |= {g.intent for g in planned.turn.plan.goals}
    keep = tuple(
        a for a in patched.applied if a.kind != "calibration" or a.intent in (None, *intents)
    )
    notes = tuple(
        n for a, n in zip(_calibrations(patched), patched.notes, strict=True) if a in keep
    )
    return dataclasses.replace(patched, applied=keep, notes=notes)


def _calibrations(patched: Patched) -> list[Any]:
    return [a for a in patched.applied if a.kind == "calibration"]


def _mapped(planned: Planned, intent: str | None, values: Mapping[str, Any]) -> bool:
    """Some goal of the intent took the mapping's values from this input."""
    if planned.turn is None:
        return False
    plan = planned.turn.plan
    for g in plan.goals:
        if g.intent == intent and all(g.slots.get(k) == v for k, v in values.items()):
            return True
    updated: dict[str, dict[str, Any]] = {}
    for u in plan.updates:
        updated.setdefault(u.goal, {})[u.slot] = u.value
    return any(
        g.intent == intent and all(updated.get(g.id, {}).get(k) == v for k, v in values.items())
        for g in planned.active
    )


def record_uses(
    p: Parts,
    patched: Patched,
    planned: Planned,
    accessor: Accessor,
    session_id: str,
    trace: str,
    *,
    prompted: bool,
) -> list[str]:
    """A mapping counts as used when a goal of its intent took its values from this input; a
    calibration when its note went into a prompt (``prompted``: the model was asked)."""
    if p.log is None or not patched.applied:
        return []
    used = []
    now = p.clock()
    for a in patched.applied:
        if a.kind == "mapping" and not _mapped(planned, a.intent, a.values):
            continue
        if a.kind == "calibration" and not prompted:
            continue
        p.log.record_use(
            pack=p.pack.name,
            patch_id=a.patch,
            kind=a.kind,
            intent=a.intent,
            at=now,
            user_id=accessor.user_id,
            session_id=session_id,
            trace_id=trace,
        )
        used.append(a.patch)
    return used


def seen(p: Parts, text: str, planned: Planned, called: Sequence[Called], reply: Reply) -> TurnSeen:
    """This turn as the triggers see it."""
    given: dict[str, set[str]] = {}
    if planned.turn is not None:
        for g in planned.turn.plan.goals:
            ref = planned.turn.created.get(g.ref)
            if ref is not None:
                given[ref] = set(g.slots)
        for u in planned.turn.plan.updates:
            given.setdefault(u.goal, set()).add(u.slot)
    for goal_id, read in planned.model_read.items():
        # what the model read counts as the user's when the input says it (前年 → 2024); a
        # value the input does not say (the year of 第1季度 taken as another) is the agent's
        intent_id = next((g.intent for g in planned.active if g.id == goal_id), None)
        spec = p.pack.goals.intent(intent_id) if p.pack.goals and intent_id else None
        slots = planned.slots.get(goal_id, {})
        given.setdefault(goal_id, set()).update(
            s
            for s in read
            if spec is not None
            and explains(p.registry.extractors, spec, s, slots.get(s), text, p.clock())
        )
    intents = {g.id: g.intent for g in planned.active}
    calls = []
    for c in called:
        intent = intents.get(c.goal_id)
        failure = c.outcome.failure
        calls.append(
            CallSeen(
                skill=c.skill,
                args=dict(c.args),
                status=c.outcome.status,
                failure=failure.kind if failure is not None else None,
                detail=failure.detail if failure is not None else "",
                reflect=bool(failure is not None and failure.reflect),
                text=p.pipeline.scrub(c.outcome.text or ""),
                intent=intent,
                slots=dict(planned.slots.get(c.goal_id, {})),
                user_given=frozenset(given.get(c.goal_id, set())),
                fact_keys=_fact_keys(p, intent, planned.slots.get(c.goal_id, {})),
            )
        )
    hypothesis = "；".join(g.description for g in planned.active)
    return TurnSeen(
        text=p.pipeline.scrub(text),
        at=p.clock(),
        calls=tuple(calls),
        hypothesis=p.pipeline.scrub(hypothesis),
        intent=planned.active[0].intent if planned.active else None,
        answered=reply.verdict != "ask",
    )


def reflect(
    p: Parts,
    history: History,
    now: Turn,
    turn: TurnSeen,
    entropy: float | None,
) -> dict[str, Any]:
    """Evaluate the triggers; each reflection is one row of the reflection log."""
    accessor, session_id, trace = now.accessor, now.session_id, now.rec.id
    recorded = now.recorded is not None  # the memory step kept this turn in short-term memory

    def turns_back(at: datetime) -> int | None:
        # a fact is written just after its turn is recorded: the turns recorded after it are
        # the turns since (this one among them once recorded); one older than the recent
        # window is not recent
        earlier = now.window_now
        if not earlier or at < earlier[0].at:
            return None
        return sum(1 for t in earlier if t.at > at) + (0 if recorded else 1)

    def confirmed(key: str) -> tuple[Any, datetime] | None:
        # an audited read, as every read of memory; only for slot values the user did not
        # give in this turn (inherited, carried over), so a healthy turn rarely reads at all.
        # An encrypted fact is not compared: its clear value would end up in the log
        fact = p.facts.get(dataclasses.replace(accessor, actor="agent:reflection"), key)
        if fact is None or fact.source not in CONFIRMED or fact.encrypted:
            return None
        return fact.value, fact.created_at

    signals = Signals(turn, entropy, confirmed if turn.calls else None, turns_back)
    found = evaluate(p.learning, history, accessor.user_id, session_id, signals)
    logged = []
    if p.log is not None:
        for r in found:
            # what the user said, the skill's arguments and results: stored scrubbed, as
            # memory and traces are (a phone number in an argument becomes [PHONE])
            scrub = p.pipeline.scrub
            entry = p.log.add(
                pack=p.pack.name,
                trigger=r.trigger,
                hypothesis=scrub(r.hypothesis),
                evidence=[
                    dataclasses.replace(
                        e,
                        content=scrub(e.content),
                        params=scrub_json(dict(e.params), scrub),
                        result=scrub_json(e.result, scrub),
                    )
                    for e in r.evidence
                ],
                correction=(
                    scrub_json(dict(r.correction), scrub) if r.correction is not None else None
                ),
                at=turn.at,
                user_id=accessor.user_id,
                session_id=session_id,
                trace_id=trace,
                intent=r.intent,
                skill=r.skill,
            )
            logged.append(entry.id)
    return {"triggers": [r.trigger for r in found], "logged": logged}
