"""Step ``goal_transitions``: the goals whose result the reply told complete (a goal a skill
refused is aborted once told), and the stages and splits they finish."""

from __future__ import annotations

from charter.agent import after
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    with turn.rec.step("goal_transitions") as s:
        refused = frozenset(c.goal_id for c in turn.called if c.refused)
        s.outputs["moves"] = after.settle_goals(crew.parts, turn.planned, turn.answered, refused)
