"""Step ``handoff``: a user who asks for a person gets a ticket, and no skill runs this turn; a
safety intent that calls a person (``handoff: true``: a fraud report) gets one for its goal,
which its template tells (工单号{ticket})."""

from __future__ import annotations

from charter.agent import steps
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    safety(crew, turn)
    if not p.composer.teller.wants_handoff(turn.text):
        return
    with turn.rec.step("handoff") as s:
        turn.handoff = steps.open_ticket(
            p, turn.call_context, "handoff: the user asked for a person", ""
        )
        s.outputs["ticket"] = turn.handoff
        s.decision = "the user asked for a person"


def safety(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    spec = p.pack.goals
    made = turn.planned.turn.created.values() if turn.planned.turn is not None else ()
    held = {g.id: g for g in turn.planned.goals.goals}
    for gid in made:
        goal = held.get(gid)
        intent = spec.intent(goal.intent) if spec is not None and goal is not None else None
        if intent is None or not (intent.safety and intent.handoff):
            continue
        with turn.rec.step("handoff") as s:
            ticket = steps.open_ticket(
                p, turn.call_context, f"safety: {intent.id} ({intent.describe})", ""
            )
            turn.tickets[gid] = ticket
            s.outputs["ticket"] = ticket
            s.decision = f"safety intent {intent.id} calls a person"
