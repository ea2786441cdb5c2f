"""Step ``input``: how many times in a row the user has now said the answer was wrong, and 我懂了
(the questions about what the user asked last stop being recalled)."""

from __future__ import annotations

from charter.agent import steps
from charter.agent.pipeline.crew import Crew
from charter.agent.reply import is_negation
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    with turn.rec.step("input", {"text": turn.text}) as s:
        turn.negations = steps.negations(turn)
        s.outputs.update(negations=turn.negations, negation=is_negation(turn.text))
        if p.policy.deprecates(turn.text):
            s.outputs["deprecated"] = steps.deprecate(p, turn)
