"""Step ``recall``: what memory holds about this input (the ladder), and the context the skills
and fallback protocols are called with."""

from __future__ import annotations

from charter.agent import steps
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p, on = crew.parts, crew.options.memory
    with turn.rec.step("recall", {"entities": turn.planned.entities}) as s:
        recalled = steps.recall(p, turn) if on else steps.Recalled(said=turn.earlier)
        s.outputs.update(recalled.trace())
        s.decision = f"ladder: {recalled.step}" if on else "memory off"
    turn.recalled = recalled
    turn.ctx = steps.call_context(p, turn)
