"""Step ``memory``: the turn into short-term memory, what the user stated into the fact
channel, the question into the narrative channel, shareable slot values into the pool."""

from __future__ import annotations

from charter.agent import after, shared
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p, opts = crew.parts, crew.options
    if not opts.memory:
        return
    with turn.rec.step("memory", {"write": opts.write_memory}) as s:
        s.outputs.update(after.remember(p, turn, turn.answered, turn.planned, opts))
        if opts.write_memory:
            s.outputs.update(shared.share(p, turn.accessor, turn.planned))
