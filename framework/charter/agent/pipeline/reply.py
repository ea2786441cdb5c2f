"""Step ``answer``: the composed parts and the accepted drafts made one reply, checked by the
pack's rules (repaired, blocked, escalated)."""

from __future__ import annotations

from charter.agent import answer
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    with turn.rec.step("answer") as s:
        reply = answer.finish(crew.parts, turn, check=crew.options.reflection)
        s.outputs.update(verdict=reply.verdict, text=reply.text, responses=list(reply.responses))
        s.decision = f"{reply.answered_by}: {reply.verdict}" + (
            f", ticket {reply.ticket}" if reply.ticket else ""
        )
    turn.reply = reply
