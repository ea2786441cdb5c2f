"""Step ``learn``: the learned patches this turn used, and the reflection triggers over it."""

from __future__ import annotations

from charter.agent import learning
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p, opts = crew.parts, crew.options
    if not opts.reflection:
        return
    reply = turn.answered
    with turn.rec.step("learn") as s:
        s.outputs["patches"] = learning.record_uses(
            p,
            turn.patched,
            turn.planned,
            turn.accessor,
            turn.session_id,
            turn.rec.id,
            prompted=reply.attempts > 0,
        )
        seen = learning.seen(p, turn.text, turn.planned, turn.called, reply)
        s.outputs.update(
            learning.reflect(
                p,
                crew.history,
                turn,
                seen,
                reply.extra.get("entropy"),
            )
        )
        s.decision = (
            "reflection: " + "、".join(s.outputs["triggers"])
            if s.outputs["triggers"]
            else "healthy turn: no reflection"
        )
