"""Steps ``goals`` and ``fill``: the input planned and applied to the session's goals, then the
slots only the model can read, asked for the goals this input touched; the plan the later steps
see is complete (every slot the input gave, by rule or by the model)."""

from __future__ import annotations

import dataclasses
from typing import Any

from charter.agent import learning, steps
from charter.agent.parts import Parts
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn
from charter.goals import fill
from charter.goals.tables import Goal


def run(crew: Crew, turn: Turn) -> None:
    p, opts = crew.parts, crew.options
    preset = turn.patched.preset
    with turn.rec.step("goals", {"text": turn.text, "preset": preset}) as s:
        planned = steps.plan(
            p,
            turn.user_id,
            turn.session_id,
            turn.text,
            preset,
            turn.accessor if opts.memory else None,
        )
        s.outputs.update(planned.trace())
        s.decision = planned.decision
    turn.planned = _fill(crew, turn, planned)
    turn.patched = learning.for_plan(turn.patched, turn.planned)
    if turn.working is not None:
        wm = turn.working
        wm.active_context.current_task = "；".join(g.description for g in turn.planned.active)
        active = turn.planned.active
        wm.active_context.user_intent = active[0].intent if active else None
        wm.ephemeral_entities.extend(turn.planned.entities)


def _fill(crew: Crew, turn: Turn, planned: steps.Planned) -> steps.Planned:
    """Slots the model reads, when a goal of this input still lacks them."""
    p = crew.parts
    spec = p.pack.goals
    if spec is None or planned.turn is None or not spec.model_slots:
        return planned
    held = planned.goals
    touched = _touched(planned)
    if not any(fill.missing_model_slots(spec, g, held.slots(g.id)) for g in touched):
        return planned
    with turn.rec.step("fill") as s:
        planned, done = _ask(p, turn.text, planned, touched)
        s.outputs.update(done)
        s.decision = (
            f"{done.get('model_calls', 0)} model call(s)" if done else "nothing for the model"
        )
    return planned


def _touched(planned: steps.Planned) -> list[Goal]:
    """The open goals this input opened or updated."""
    if planned.turn is None or not planned.user_id:
        return []
    touched = set(planned.turn.created.values()) | {u.goal for u in planned.turn.plan.updates}
    return [g for g in planned.goals.goals if g.id in touched and g.status in ("pending", "active")]


def _ask(
    p: Parts, text: str, planned: steps.Planned, goals: list[Goal]
) -> tuple[steps.Planned, dict[str, Any]]:
    """Ask the model for the ``model`` slots of the goals this input opened or updated. A
    touched goal still pending asks for its first missing slot (the planner's question for a
    slot the model read is dropped, one for a slot still missing is added)."""
    if p.tracker is None or not planned.user_id:
        return planned, {}
    spec = p.pack.goals
    slots = {g.id: planned.goals.slots(g.id) for g in goals}
    got = fill.fill(p.llm, spec, text, goals, slots, learning.local(p.clock()))
    if not got.values:
        return planned, got.trace() if got.asked else {}
    for g in goals:
        found = got.values.get(g.id)
        if found:
            p.tracker.fill(g.id, found, trigger="slots read by the model")
    held = p.goals.session(planned.user_id, planned.session_id)  # as the fills left it
    touched = {g.id for g in goals}
    theirs: set[str] = set()  # every question a touched goal's intent can ask
    asks: list[str] = []
    for g in held.goals:
        intent = spec.intent(g.intent) if spec is not None else None
        if g.id not in touched or intent is None:
            continue
        theirs |= {s.ask for s in intent.slots if s.ask}
        if g.status != "pending":
            continue
        have = held.slots(g.id)
        missing = [s for s in intent.slots if s.required and have.get(s.name) in (None, "", [])]
        if missing and missing[0].ask and missing[0].ask not in asks:
            asks.append(missing[0].ask)
    active = held.active()
    planned = dataclasses.replace(
        planned,
        active=active,
        slots={g.id: held.slots(g.id) for g in active},
        questions=(*(q for q in planned.questions if q not in theirs), *asks),
        model_read={gid: frozenset(found) for gid, found in got.values.items()},
        goals=held,
    )
    return planned, got.trace()
