"""Step ``compose``: the turn's events told by the pack's templates; what no template tells is
left open for the next step."""

from __future__ import annotations

from charter.agent import answer
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    with turn.rec.step("compose") as s:
        composed = answer.compose(crew.parts, turn)
        s.outputs.update(
            events=[e.as_dict() for e in composed.events],
            responses=list(composed.responses),
            open=[e.as_dict() for e in composed.open],
        )
        s.decision = f"{len(composed.parts)} part(s) from templates, {len(composed.open)} open"
    turn.composed = composed
