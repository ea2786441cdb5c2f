"""The skills of a turn (ARCHITECTURE §8): the goals the input touched call their intent's
skill with arguments from their slots — an executing skill with the goal's id as its
idempotency key —; a result's fields the binding keeps stay in the goal; arguments a contract
refused send the goal back to asking for them; a yes again after an action replays its kept
result and runs nothing."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.agent.parts import Parts, slot_args
from charter.compile.specs.slots import SLOT_REF
from charter.goals.tracker import AWAITING
from charter.skills.fallback import CallContext
from charter.skills.runner import SkillOutcome

if TYPE_CHECKING:
    from charter.agent.steps import Planned


@dataclass(frozen=True)
class Called:
    goal_id: str
    skill: str
    args: Mapping[str, Any]
    outcome: SkillOutcome
    # the skill answered but refused the request (the binding's done: does not hold): the
    # result is told and the goal is aborted, not completed
    refused: bool = False

    @property
    def status(self) -> str:
        return self.outcome.status


def call_skills(
    p: Parts, planned: Planned, ctx: CallContext, held: Collection[str] = ()
) -> list[Called]:
    """Each goal this input touched, active, whose intent names a skill calls it, when the
    goal's slots give every argument the contract requires (a missing one is the planner's
    question to ask). A goal the input did not touch is not called again: its result was
    told when it was; a goal ``held`` by a stage not done (agent/stages.py) waits."""
    if p.runner is None or p.pack.goals is None:
        return []
    out = []
    by_id = {g.id: g for g in planned.active}
    for goal in (by_id[gid] for gid in planned.touched if gid in by_id and gid not in held):
        intent = p.pack.goals.intent(goal.intent)
        binding = intent.skill if intent is not None else None
        if binding is None:
            continue
        contract = p.runner.contract(binding.name)
        slots = planned.slots.get(goal.id, {})
        args = typed(slot_args(binding.args, slots, p.registry.formatters), contract.input_schema)
        if any(name not in args for name in contract.input_schema.get("required", [])):
            continue
        # an executing skill's idempotency key is its goal: a repeated yes replays, never reruns
        key = goal.id if contract.executes else None
        outcome = p.runner.call(binding.name, args, ctx, key=key)
        out.append(Called(goal.id, binding.name, args, outcome, refused(p, goal.intent, outcome)))
        if outcome.status == "ok" and binding.keep and p.tracker is not None:
            # the result stays with its goal: a follow-up (帮我挂这个科) carries it from there
            # a field this result lacks is cleared, not left from an earlier result
            p.tracker.keep(goal.id, {s: at(outcome.result, path) for s, path in binding.keep})
    return out


def prechecks(p: Parts, planned: Planned, ctx: CallContext) -> list[Called]:
    """An action about to be confirmed: its arguments against the contract first — and the
    skill's own ``refuses`` on the turn's day —, so the user is never asked to confirm what
    would be refused (单笔转账不能超过5万元 before 请确认…). Nothing runs; a refusal is told as
    the contract's message and the slot asked again."""
    assert p.runner is not None and p.pack.goals is not None
    out = []
    for gid in planned.touched:  # nothing has run yet: the goals as planning left them
        goal = planned.goals.get(gid)
        intent = p.pack.goals.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None or intent.skill is None or goal.status != "pending":
            continue
        context = planned.goals.context(gid)
        contract = p.runner.contract(intent.skill.name)
        if not contract.executes or not context.get(AWAITING):
            continue
        slots = {k: v for k, v in context.items() if not k.startswith("_")}
        if any(s.required and slots.get(s.name) in (None, "", []) for s in intent.slots):
            continue  # a split awaiting its yes, still missing a slot: the planner asks it
        given = slot_args(intent.skill.args, slots, p.registry.formatters)
        args = typed(given, contract.input_schema)
        refusal = p.runner.check(contract.name, args, ctx)
        if refusal is not None:
            out.append(Called(gid, contract.name, args, refusal))
    return out


def refused(p: Parts, intent: str, outcome: SkillOutcome) -> bool:
    """A successful result the intent's ``done:`` condition does not hold for."""
    test = p.done.get(intent)
    if test is None or outcome.status != "ok":
        return False
    return not test(p.done.env(context={"result": outcome.result}))


def replays(p: Parts, planned: Planned) -> list[Called]:
    """A yes again after an action was done: its kept result, never a second execution."""
    assert p.runner is not None and p.pack.goals is not None and planned.turn is not None
    out = []
    for gid in planned.turn.plan.mentions:
        goal = planned.goals.get(gid)
        intent = p.pack.goals.intent(goal.intent) if goal is not None else None
        if intent is None or intent.skill is None:
            continue
        contract = p.runner.contract(intent.skill.name)
        if not contract.executes:
            continue
        slots = planned.goals.slots(gid)
        given = slot_args(intent.skill.args, slots, p.registry.formatters)
        args = typed(given, contract.input_schema)
        told = p.runner.replay(contract.name, args, gid)
        if told is not None:
            out.append(Called(gid, contract.name, args, told))
    return out


def at(value: Any, path: str) -> Any:
    """The field of a result at a dotted path (departments.0.department), or at the first of
    several that has one (results.0.promotion.price|results.0.price); None when absent."""
    if "|" in path:
        found = (at(value, p) for p in path.split("|"))
        return next((v for v in found if v is not None), None)
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value if isinstance(value, str | int | float) else None


def reopen(p: Parts, planned: Planned, called: Sequence[Called]) -> list[dict[str, Any]]:
    """A call refused for its arguments: the goal waits again for the slots those arguments
    come from (季度只能是第1到第4季度 → the quarter is asked, and 第1季度 answers it). An
    action that failed without executing (the system down: its ledger key released) waits
    for the user's yes again, so 是 tries once more."""
    moves = []
    for c in called:
        failure = c.outcome.failure
        # the active goal called, or the pending one refused before its confirmation
        goal = next((g for g in planned.active if g.id == c.goal_id), None) or planned.goals.get(
            c.goal_id
        )
        intent = p.pack.goals.intent(goal.intent) if goal and p.pack.goals else None
        if intent is None or intent.skill is None:
            continue
        if c.status == "failed" and not c.outcome.replayed and _released(p, c):
            assert p.tracker is not None
            back = p.tracker.await_again(c.goal_id, trigger=f"{c.skill} failed: not executed")
            moves.append({"goal": c.goal_id, "awaits": True, "ok": bool(back and back.ok)})
            continue
        if c.status != "invalid" or failure is None:
            continue
        refused = {f.strip().split(".", 1)[0] for f in failure.field.split(",") if f.strip()}
        slots = sorted(
            name
            for arg, value in intent.skill.args.items()
            if arg in refused and isinstance(value, str)
            for name in (m.group(1) for m in SLOT_REF.finditer(value))
        )
        if p.tracker is not None and slots:
            done = p.tracker.reopen(
                c.goal_id, slots, trigger=f"{c.skill} refused {', '.join(slots)}"
            )
            moves.append({"goal": c.goal_id, "slots": slots, "ok": bool(done and done.ok)})
    return moves


def _released(p: Parts, c: Called) -> bool:
    """An executing skill's call that certainly changed nothing (its key is not kept)."""
    runner = p.runner
    if runner is None or runner.ledger is None or p.tracker is None:
        return False
    return runner.contract(c.skill).executes and runner.ledger.get(c.goal_id) is None


def typed(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Slot values are text ("2025" read by a regex); an argument the contract declares an
    integer or a number is passed as one when the text is exactly a number."""
    props = schema.get("properties", {})
    out = dict(args)
    for name, value in args.items():
        kind = props.get(name, {}).get("type") if isinstance(props.get(name), dict) else None
        if not isinstance(value, str) or kind not in ("integer", "number"):
            continue
        if re.fullmatch(r"-?[0-9]+", value.strip()):
            out[name] = int(value)
        elif kind == "number" and re.fullmatch(r"-?[0-9]+\.[0-9]+", value.strip()):
            out[name] = float(value)
    return out


def outcome_dict(c: Called) -> dict[str, Any]:
    o = c.outcome
    return {
        "goal": c.goal_id,
        "skill": c.skill,
        "args": dict(c.args),
        "status": o.status,
        "text": o.text,
        "failure": o.failure.kind if o.failure is not None else None,
        "fallback": o.fallback.action if o.fallback is not None else None,
        "ticket": o.fallback.ticket if o.fallback is not None else None,
        "replayed": o.replayed,
        "refused": c.refused,
    }
