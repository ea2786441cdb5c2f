"""Step ``patches``: the learned patches (parameter mappings, calibrations) the input matches,
before planning, so that a mapping presets the slots the planner then reads."""

from __future__ import annotations

from charter.agent import learning
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    if not (crew.options.reflection and p.matcher):
        return
    with turn.rec.step("patches", {"text": turn.text}) as s:
        turn.patched = learning.patches(p, turn.text)
        s.outputs.update(turn.patched.trace())
        s.decision = f"{len(turn.patched.applied)} learned patch(es) matched"
