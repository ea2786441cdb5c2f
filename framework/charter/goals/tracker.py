"""The planner and the goal store together: what one turn does with the user's input.

``GoalTracker.handle(user, session, input)`` reads the session's open goals from the store,
plans, and applies the plan: new goals are created (``pending``, then ``active`` when nothing is
missing and no confirmation is awaited), slot updates written, goals activated or aborted — each
status change a compare-and-set with its history row and its ``charter_on_goal_transition``
hook. The planner stays pure; only this module writes.

Two things the store does not model are kept in the goal's slots under reserved keys: whether a
goal awaits the user's confirmation of a split (``_awaiting``) and the planner's clock is the
tracker's clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from charter.compile.specs.goals import STAGE_SEP, GoalsSpec
from charter.contracts.registry import Registry
from charter.goals.planner import Ask, OpenGoal, Plan, Planner, SessionState
from charter.goals.session import SessionGoals
from charter.goals.store import GoalStoreProtocol, TransitionResult
from charter.goals.tables import Goal
from charter.goals.understand import Understander
from charter.store.clock import utcnow

AWAITING = "_awaiting"
CARRIED = "_carried"  # slot -> where a carried value came from (session / memory)
MOVES = "_moves"  # the completed goal whose action this one moves (moves:), ended when it is done
OUTCOME = "_outcome"  # "refused": the skill answered that it would not do it (aborted goal)
# "moved": a later goal moved what it did; a stage's own name for its status (compliant)
RECENT = 5  # completed goals of the session a follow-up may carry from
REFUSED = "_refused"  # slot -> the value a skill's contract refused (the old value when re-given)


@dataclass(frozen=True)
class Turn:
    """What the tracker did with one input."""

    plan: Plan
    created: Mapping[str, str]  # plan ref -> goal id
    transitions: tuple[TransitionResult, ...]
    questions: tuple[str, ...]
    confirm: str | None
    asks: tuple[Ask, ...] = ()  # the questions, about goals by id
    skipped: Plan | None = None  # the plan not applied (``unless`` held): the FAQ answers

    def goal_id(self, ref_or_id: str) -> str:
        return self.created.get(ref_or_id, ref_or_id)


class GoalTracker:
    def __init__(
        self,
        spec: GoalsSpec,
        registry: Registry,
        store: GoalStoreProtocol,
        *,
        clock: Callable[[], datetime] = utcnow,
        constants: Mapping[str, Any] | None = None,
        scrub: Callable[[str], str] | None = None,
        understander: Understander | None = None,
    ) -> None:
        self.spec = spec
        # the input quoted in each history row's trigger: scrubbed of personal data when the
        # agent gives its write pipeline's scrubber
        self._scrub = scrub or (lambda text: text)
        self.planner = Planner(spec, registry, constants, understander)
        self.store = store
        self.clock = clock

    def state(
        self,
        user_id: str,
        session_id: str,
        preset: Mapping[str, Mapping[str, Any]] | None = None,
        remembered: Mapping[str, Any] | None = None,
    ) -> SessionState:
        goals = []
        held = self.store.session(user_id, session_id)
        for g in held.goals:
            if g.status not in ("pending", "active") or self.spec.stage(g.intent):
                continue  # a stage is its goal's bookkeeping, not something the user asked
            context = held.context(g.id)
            # a slot set to None was dropped (refused by a contract): it is missing again
            slots = {k: v for k, v in context.items() if not k.startswith("_") and v is not None}
            intent = self.spec.intent(g.intent)
            required = [s.name for s in (intent.slots if intent else ()) if s.required]
            missing = tuple(name for name in required if name not in slots)
            goals.append(
                OpenGoal(
                    id=g.id,
                    intent=g.intent,
                    status=g.status,
                    parent=g.parent_id,
                    slots=slots,
                    missing=missing if g.status == "pending" else (),
                    awaiting=bool(context.get(AWAITING)),
                )
            )
        # the planner reads 明天 on the local calendar: an aware clock is converted to local time
        now = self.clock()
        recent = self._recent(held)
        return SessionState(
            tuple(goals),
            now.astimezone().replace(tzinfo=None) if now.tzinfo else now,
            dict(preset or {}),
            recent[0] if recent else None,
            recent,
            dict(remembered or {}),
        )

    def _recent(self, held: SessionGoals) -> tuple[OpenGoal, ...]:
        """The session's finished goals of the pack's intents, the latest first (at most
        ``RECENT``): completed ones, and those a skill refused (号源已满 — 那就周四上午 asks
        again); the last is what a correction or a follow-up redoes, all are where ``carry:``
        looks."""
        done = [
            (g.updated_at, g.created_at, n, g)
            for n, g in enumerate(held.goals)  # creation order breaks a tie of one clock tick
            if g.status in ("completed", "aborted") and self.spec.intent(g.intent)
        ]
        done.sort(key=lambda row: row[:3], reverse=True)
        out = []
        for *_, g in done:
            context = held.context(g.id)
            if g.status == "aborted" and context.get(OUTCOME) != "refused":
                continue  # what the user cancelled is not carried or redone
            slots = {k: v for k, v in context.items() if not k.startswith("_")}
            out.append(OpenGoal(g.id, g.intent, g.status, g.parent_id, slots))
            if len(out) == RECENT:
                break
        return tuple(out)

    def handle(
        self,
        user_id: str,
        session_id: str,
        text: str,
        *,
        preset: Mapping[str, Mapping[str, Any]] | None = None,
        remembered: Mapping[str, Any] | None = None,
        unless: Callable[[Plan], bool] | None = None,
    ) -> Turn:
        """Plan the input and apply the plan. ``preset``: slot values decided before planning
        (intent -> slot -> value, from learned patches), overriding what the input gives;
        ``remembered``: the user's facts for ``carry: memory`` slots; ``unless``: a plan it
        holds for is not applied (the input is answered otherwise: an FAQ question)."""
        state = self.state(user_id, session_id, preset, remembered)
        plan = self.planner.plan(text, state)
        if unless is not None and unless(plan):
            return Turn(Plan(), {}, (), (), None, skipped=plan)
        trigger = f"input: {self._scrub(text)[:60]}"
        created: dict[str, str] = {}
        moves: list[TransitionResult] = []
        for g in plan.goals:
            parent = created.get(g.parent, g.parent) if g.parent else None
            slots = {**g.inherited, **g.carried, **g.slots}
            if g.awaiting:
                slots[AWAITING] = True
            if g.carried or g.inherited:  # what the user did not say, and where it came from
                slots[CARRIED] = {
                    **{k: "parent" for k in g.inherited},
                    **{k: "memory" if k in g.remembered else "session" for k in g.carried},
                }
            intent = self.spec.intent(g.intent)
            movable = intent.skill.moves if intent is not None and intent.skill else ()
            if g.redoes and any(k in g.inherited for k in movable):
                slots[MOVES] = g.redoes
            goal = self.store.create(
                g.intent,
                user_id=user_id,
                session_id=session_id,
                parent_id=parent,
                description=g.description,
                slots=slots,
                timeout_s=g.timeout_s,
                actor="agent",
                trigger=trigger,
            )
            created[g.ref] = goal.id
            for stage in intent.stages if intent is not None else ():
                self.store.create(
                    f"{g.intent}{STAGE_SEP}{stage.id}",
                    user_id=user_id,
                    session_id=session_id,
                    parent_id=goal.id,
                    description=stage.describe,
                    slots={},
                    timeout_s=g.timeout_s,
                    actor="agent",
                    trigger=f"stage of {g.intent}",
                )
            if g.status == "active":
                done = self.store.transition(
                    goal.id, "active", actor="agent", trigger="slots complete"
                )
                moves.append(done)
        changed: dict[str, str] = {}
        for u in plan.updates:
            self.store.set_slots(u.goal, {u.slot: u.value, **self._stale(u.goal, u.slot, plan)})
            changed[u.goal] = u.slot
        for goal_id in changed:
            self._describe(goal_id)
        for goal_id in plan.awaits:
            self.store.set_slots(goal_id, {AWAITING: True})
        if plan.accepted:  # the yes ends every wait; a goal still missing a slot is asked it
            for waiting in state.goals:
                if waiting.awaiting and waiting.id not in plan.activate:
                    self.store.set_slots(waiting.id, {AWAITING: False})
        for goal_id in plan.activate:
            self.store.set_slots(goal_id, {AWAITING: False})
            moves.append(self.store.transition(goal_id, "active", actor="user", trigger=trigger))
        for goal_id in plan.aborts:
            moves.append(self.store.transition(goal_id, "aborted", actor="user", trigger=trigger))
            self.end_stages(goal_id, trigger=trigger)
        asks = tuple(Ask(created.get(a.goal, a.goal), a.slot, a.text) for a in plan.asks)
        return Turn(plan, created, tuple(moves), plan.questions, plan.confirm, asks)

    def fill(
        self, goal_id: str, slots: Mapping[str, Any], *, trigger: str
    ) -> TransitionResult | None:
        """Slot values found after planning (read by the model): stored, the description
        renamed, and a pending goal that now has every required slot activated."""
        self.store.set_slots(goal_id, dict(slots))
        self._describe(goal_id)
        goal = self.store.get(goal_id)
        intent = self.spec.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None or goal.status != "pending":
            return None
        held = self.store.context(goal_id)
        if any(s.required and held.get(s.name) in (None, "", []) for s in intent.slots):
            return None
        return self.store.transition(goal_id, "active", actor="agent", trigger=trigger)

    def stages(self, goal_id: str) -> list[Goal]:
        """The stage goals of a goal, in its intent's order."""
        goal = self.store.get(goal_id)
        intent = self.spec.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None or not intent.stages:
            return []
        kids = {
            g.intent: g
            for g in self.store.tree(goal.user_id, goal.session_id)
            if g.parent_id == goal_id
        }
        names = [f"{intent.id}{STAGE_SEP}{s.id}" for s in intent.stages]
        return [kids[n] for n in names if n in kids]

    def end_stages(self, goal_id: str, *, trigger: str) -> None:
        """A goal ended without its stages done (cancelled, refused): they end with it."""
        for stage in self.stages(goal_id):
            if stage.status in ("pending", "active"):
                self.store.transition(stage.id, "aborted", actor="agent", trigger=trigger)

    def keep(self, goal_id: str, values: Mapping[str, Any]) -> None:
        """Fields of a skill's result kept as the goal's slots (``keep:``), for follow-ups; a
        field the result lacks is kept as None (missing)."""
        if values:
            self.store.set_slots(goal_id, dict(values))

    def await_again(self, goal_id: str, *, trigger: str) -> TransitionResult | None:
        """An action that failed without executing: its goal waits for the user's yes again."""
        goal = self.store.get(goal_id)
        if goal is None or goal.status != "active":
            return None
        self.store.set_slots(goal_id, {AWAITING: True})
        return self.store.transition(goal_id, "pending", actor="agent", trigger=trigger)

    def reopen(
        self, goal_id: str, slots: Sequence[str], *, trigger: str
    ) -> TransitionResult | None:
        """Arguments a skill's contract refused: those slots are dropped and the goal waits
        for them again (an active one goes back to pending; one that awaited the yes stops
        awaiting it), so the user's next answer fills them."""
        goal = self.store.get(goal_id)
        if goal is None or goal.status not in ("active", "pending") or not slots:
            return None
        held = self.store.context(goal_id)
        refused = {name: held.get(name) for name in slots if held.get(name) is not None}
        dropped = {name: None for name in slots}
        self.store.set_slots(goal_id, {**dropped, REFUSED: refused, AWAITING: False})
        self._describe(goal_id)
        if goal.status == "pending":
            return TransitionResult(True, goal_id, "pending", "pending", trigger)
        return self.store.transition(goal_id, "pending", actor="agent", trigger=trigger)

    def _stale(self, goal_id: str, slot: str, plan: Plan) -> dict[str, Any]:
        """Another order named (a ``carry:`` slot corrected): the optional values that came
        along with the old one (its coupon) are dropped, not kept for the new one."""
        goal = self.store.get(goal_id)
        intent = self.spec.intent(goal.intent) if goal is not None else None
        spec = intent.slot(slot) if intent is not None else None
        if intent is None or spec is None or spec.carry is None:
            return {}
        came = self.store.context(goal_id).get(CARRIED) or {}
        given = {u.slot for u in plan.updates if u.goal == goal_id}
        return {
            name: None
            for name in came
            if name not in given
            and (other := intent.slot(name)) is not None
            and other.carry is not None
            and not other.required
        }

    def _describe(self, goal_id: str) -> None:
        """A goal's description names its slot values ("向张三转账5000元"): after a correction
        or an answer it must name the new ones, or the prompt asks about the old."""
        goal = self.store.get(goal_id)
        intent = self.spec.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None or not intent.description:
            return
        slots = {k: v for k, v in self.store.context(goal_id).items() if not k.startswith("_")}
        self.store.set_description(goal_id, self.planner.describe(intent.description, slots))
