"""The turn as a forward pipeline (ARCHITECTURE §5): each step a module that reads the ``Turn``
value and adds what it found, run in this order, each at most once; the loop
(``charter.agent.loop``) only loads the turn and runs them."""

from __future__ import annotations

from collections.abc import Callable

from charter.agent.pipeline import (
    compose,
    draft,
    goals,
    handoff,
    inputs,
    learn,
    memory,
    patches,
    recall,
    reply,
    settle,
    skills,
)
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn

Step = Callable[[Crew, Turn], None]

STEPS: tuple[Step, ...] = (
    inputs.run,
    patches.run,
    goals.run,
    recall.run,
    handoff.run,
    skills.run,
    compose.run,
    draft.run,
    reply.run,
    memory.run,
    settle.run,
    learn.run,
)


def run(crew: Crew, turn: Turn) -> None:
    for step in STEPS:
        step(crew, turn)


__all__ = ["STEPS", "Crew", "Step", "run"]
