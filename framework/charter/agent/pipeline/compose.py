"""Step ``compose``: the turn's events told by the pack's templates; what no template tells is
left open for the next step. When the input reached the FAQ (answered from it, or by nobody),
the step also records the FAQ's best candidates with their scores and thresholds, so that a
pack author can see why an entry did or did not answer and tune ``min_score``."""

from __future__ import annotations

from typing import Any

from charter.agent import answer
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn
from charter.compile.response_spec import FAQ

CANDIDATES = 3  # FAQ entries shown per turn


def run(crew: Crew, turn: Turn) -> None:
    with turn.rec.step("compose") as s:
        composed = answer.compose(crew.parts, turn)
        s.outputs.update(
            events=[e.as_dict() for e in composed.events],
            responses=list(composed.responses),
            open=[e.as_dict() for e in composed.open],
        )
        if any(e.kind in (FAQ, "unanswered") for e in composed.events):
            found = faq_candidates(crew, turn.text)
            if found is not None:
                s.outputs["faq"] = found
        s.decision = f"{len(composed.parts)} part(s) from templates, {len(composed.open)} open"
    turn.composed = composed


def faq_candidates(crew: Crew, text: str) -> dict[str, Any] | None:
    """The FAQ's best entries for ``text`` whatever their score, and its two thresholds."""
    faq = crew.parts.composer.faq
    return faq.candidates(text, k=CANDIDATES) if faq is not None else None
