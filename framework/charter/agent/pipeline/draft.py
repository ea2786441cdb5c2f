"""Steps ``prompt``/``generate``/``reflect``: the open events answered by the model where the
pack's mode lets it speak (``assisted``), and the whole reply reworded (``rephrase``); the
shipped packs are ``strict``, so their turns never get here."""

from __future__ import annotations

from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p, mode = crew.parts, crew.options.mode
    composed, planned = turn.told, turn.planned
    for n in composed.open_positions():
        event = composed.pieces[n][0]
        if (mode or p.responses.mode_of(event.intent)) != "strict":
            crew.drafter.draft(turn, n, event)
    first = planned.active[0].intent if planned.active else None
    if (mode or p.responses.mode_of(first)) == "rephrase" and not composed.open:
        turn.rephrased = crew.drafter.rephrase(turn)
