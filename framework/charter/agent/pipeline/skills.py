"""Step ``skills``: the skills of the goals the input touched, called through their guards and
fallback protocols, goals a failed call leaves open reopened; then the working memory as the
turn leaves it."""

from __future__ import annotations

from charter.agent import calls, stages
from charter.agent.pipeline.crew import Crew
from charter.agent.turn import Turn


def run(crew: Crew, turn: Turn) -> None:
    p = crew.parts
    with turn.rec.step("skills") as s:
        called, staged = (
            stages.skills(p, turn.planned, turn.call_context)
            if crew.options.skills and not turn.handoff
            else ([], [])
        )
        if staged:
            s.outputs["stages"] = staged
        s.inputs["calls"] = [{"skill": c.skill, "args": dict(c.args)} for c in called]
        s.outputs["outcomes"] = [calls.outcome_dict(c) for c in called]
        reopened = calls.reopen(p, turn.planned, called)
        if reopened:
            s.outputs["reopened"] = reopened
        if turn.working is not None:
            turn.working.active_context.tool_state = {c.skill: c.status for c in called}
    turn.called = called
    with turn.rec.step("working_memory") as s:
        if turn.working is not None:
            s.outputs.update(turn.working.as_dict())
