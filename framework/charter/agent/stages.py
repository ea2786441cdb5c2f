"""The stages of a goal (goals.yaml ``stages:``, seed 000 §5.3): each a sub-goal with its own
status, moved here, in the intent's order, when the user's input touched its goal.

A ``slots`` stage is done once the goal has those slots (症状采集); a ``skill`` stage calls its
query with the goal's slots — again whenever they changed — and its ``done:`` condition is the
verdict: held, the stage completes (``compliant``) and what its binding keeps goes into the
goal; not held, the stage ends ``non_compliant`` and the goal is refused with it, its answer
told (no confirmation is asked for what would be refused). A ``by`` stage waits for a goal of
another intent to complete in the session (转专科 by the booked registration). The goal's own
skill runs only once its ``slots`` and ``skill`` stages are done: an action never executes
past a check that did not pass."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.agent.calls import Called, at, call_skills, prechecks, refused, replays, typed
from charter.agent.parts import Parts, slot_args
from charter.compile.specs.goals import STAGE_SEP, StageSpec
from charter.goals.session import SessionGoals
from charter.goals.tables import Goal
from charter.goals.tracker import OUTCOME
from charter.skills.fallback import CallContext

if TYPE_CHECKING:
    from charter.agent.steps import Planned

CHECKED = "_checked"  # the arguments a skill stage last judged


@dataclass
class Advanced:
    calls: list[Called] = field(default_factory=list)  # the stages' results to tell
    blocked: set[str] = field(default_factory=set)  # goals a stage keeps from their own skill
    # every stage moved this turn, for the trace: {goal, stage, to (its name for it), ok}
    log: list[dict[str, Any]] = field(default_factory=list)


def skills(
    p: Parts, planned: Planned, ctx: CallContext
) -> tuple[list[Called], list[dict[str, Any]]]:
    """The turn's skill calls, and the stages they moved (for the trace): a yes again after
    an action replays it; otherwise an action about to be confirmed has its arguments checked
    (calls.prechecks), the touched goals' stages advance, and the goals they do not hold call
    their own skill."""
    if p.runner is None or p.pack.goals is None:
        return [], []
    if planned.turn is not None and planned.turn.plan.repeated:
        return replays(p, planned), []
    out = prechecks(p, planned, ctx)
    refused_args = {c.goal_id for c in out}
    staged = advance(p, planned.goals, [g for g in planned.touched if g not in refused_args], ctx)
    own = call_skills(p, planned, ctx, held=staged.blocked)
    return out + staged.calls + own, staged.log


def advance(p: Parts, session: SessionGoals, goal_ids: Iterable[str], ctx: CallContext) -> Advanced:
    """Each touched goal's stages, in order, as far as they go this turn. ``session``: the
    session's goals as planning left them (a goal's stages change only here, in order)."""
    out = Advanced()
    if p.tracker is None or p.pack.goals is None or p.runner is None:
        return out
    for gid in goal_ids:
        goal = session.get(gid)
        intent = p.pack.goals.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None or not intent.stages:
            continue
        if goal.status not in ("pending", "active"):
            continue
        kids = {g.intent: g for g in session.goals if g.parent_id == gid}
        for stage in intent.stages:
            held = kids.get(f"{intent.id}{STAGE_SEP}{stage.id}")
            if held is None or not _step(p, goal, stage, held, ctx, out, intent.confirm):
                break
        refusing = any(c.refused for c in out.calls if c.goal_id == gid)
        if gid in out.blocked and intent.confirm and goal.status == "active" and not refusing:
            # a yes the check could not stand behind: the action waits for the next one
            p.tracker.await_again(gid, trigger="a stage is not done")
    return out


def _step(
    p: Parts,
    goal: Goal,
    stage: StageSpec,
    held: Goal,
    ctx: CallContext,
    out: Advanced,
    confirms: bool,
) -> bool:
    """One stage; True when the next may follow. ``confirms``: the goal is an action, whose
    stages are judged before the user is asked to confirm it."""
    slots = {k: v for k, v in p.goals.context(goal.id).items() if not k.startswith("_")}
    if stage.by is not None:
        if held.status == "pending":
            _move(p, held, "active", f"waiting for {stage.by}", out)
        return held.status == "completed"  # nothing after a by stage runs before it is done
    if held.status == "aborted":
        out.blocked.add(goal.id)
        return False
    if stage.slots:
        if all(slots.get(s) not in (None, "", []) for s in stage.slots):
            _pass(p, held, stage, "its slots are given", out)
            return True
        _move(p, held, "active", "collecting", out)
        out.blocked.add(goal.id)
        return False
    assert stage.skill is not None and p.runner is not None and p.tracker is not None
    contract = p.runner.contract(stage.skill.name)
    args = typed(slot_args(stage.skill.args, slots, p.registry.formatters), contract.input_schema)
    early = goal.status == "pending" and not confirms  # only an action is checked before its yes
    if early or any(name not in args for name in contract.input_schema.get("required", [])):
        _move(p, held, "active", "waiting for the goal's slots", out)
        out.blocked.add(goal.id)
        return False
    if held.status == "completed" and p.goals.context(held.id).get(CHECKED) == args:
        return True  # judged on these very values: not asked again
    outcome = p.runner.call(stage.skill.name, args, ctx)
    if outcome.status != "ok":  # not judged: the goal waits, the stage is asked again
        _move(p, held, "active", f"{stage.skill.name} {outcome.status}", out)
        out.calls.append(Called(goal.id, stage.skill.name, args, outcome))
        out.blocked.add(goal.id)
        return False
    p.goals.set_slots(held.id, {CHECKED: args})
    if stage.skill.keep:  # the stage's result goes into its goal (帮我挂这个科 carries it)
        p.tracker.keep(goal.id, {s: at(outcome.result, path) for s, path in stage.skill.keep})
    if refused(p, held.intent, outcome):
        p.goals.set_slots(held.id, {OUTCOME: stage.failed})
        _move(p, held, "aborted", f"{stage.skill.name}: {stage.failed}", out, stage.failed)
        out.calls.append(Called(goal.id, stage.skill.name, args, outcome, refused=True))
        out.blocked.add(goal.id)
        return False
    _pass(p, held, stage, f"{stage.skill.name}: {stage.passed}", out)
    if not stage.quiet:
        out.calls.append(Called(goal.id, stage.skill.name, args, outcome))
    return True


def _pass(p: Parts, held: Goal, stage: StageSpec, why: str, out: Advanced) -> None:
    if held.status == "completed":
        return
    p.goals.set_slots(held.id, {OUTCOME: stage.passed})
    if held.status == "pending":
        p.goals.transition(held.id, "active", actor="agent", trigger=why)
    done = p.goals.complete(held.id, {}, actor="agent", trigger=why)
    out.log.append({"goal": held.id, "stage": held.intent, "to": stage.passed, "ok": done.ok})


def _move(
    p: Parts, held: Goal, to: str, why: str, out: Advanced, called: str | None = None
) -> None:
    """``called``: the stage's own name for the status (non_compliant)."""
    if held.status == to:
        return
    done = p.goals.transition(held.id, to, actor="agent", trigger=why)  # type: ignore[arg-type]
    out.log.append({"goal": held.id, "stage": held.intent, "to": called or to, "ok": done.ok})


def completed_by(p: Parts, tree: Iterable[Goal], intents: Iterable[str]) -> list[str]:
    """The session's waiting ``by`` stages (``tree``: the session's goals as they are now) a
    goal of one of ``intents`` just completed: done."""
    spec = p.pack.goals
    names = set(intents)
    if spec is None or not names:
        return []
    done = []
    for g in list(tree):
        found = spec.stage(g.intent)
        if found is None or g.status != "active" or found[1].by not in names:
            continue
        stage = found[1]
        p.goals.set_slots(g.id, {OUTCOME: stage.passed})
        if p.goals.complete(g.id, {}, actor="agent", trigger=f"{stage.by} completed").ok:
            done.append(g.id)
    return done
