"""Step ``handoff``: a user who asks for a person gets a ticket, and no skill runs this turn."""

from __future__ import annotations

from charter.agent import steps
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    if not p.composer.teller.wants_handoff(turn.text):
        return
    with turn.rec.step("handoff") as s:
        turn.handoff = steps.open_ticket(
            p, turn.call_context, "handoff: the user asked for a person", ""
        )
        s.outputs["ticket"] = turn.handoff
        s.decision = "the user asked for a person"
