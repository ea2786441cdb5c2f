"""What happened in a turn, as goal events in the order the reply tells them (ARCHITECTURE §5a):

1. what the user did — ``cancelled``, ``confirmation_declined``, ``confirmation_accepted``,
   ``slot_corrected`` (old and new value); and ``slot_carried``, a value the input did not
   give, taken from the session or memory;
2. each goal the input touched, in plan order — a skill's ``result``, a fallback protocol's own
   text (``fallback``), arguments the contract refused (``invalid``), ``skill_failed``,
   ``completed`` (for an intent without a skill, its answer);
3. the next question — ``slot_asked``, ``confirmation_asked``; or ``resumed`` for a goal the
   user left open, when this turn asks nothing else.

Events carry the fields their templates read (``scope``); ``charter.compose.composer`` tells
them. Pure: the same plan, goals and calls always give the same events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from charter.compile.specs.goals import AGGREGATE_INTENT, GoalsSpec, IntentSpec
from charter.goals.planner import Plan, fill_slots
from charter.goals.plans import SlotUpdate
from charter.skills.runner import SkillOutcome

QUESTIONS = ("slot_asked", "confirmation_asked", "resumed", "invalid", "clarification_asked")


@dataclass(frozen=True)
class GoalView:
    """A goal as the reply sees it after planning (its slots without reserved keys)."""

    id: str
    intent: str
    status: str
    description: str
    slots: Mapping[str, Any]
    parent: str | None = None
    awaiting: bool = False
    refused: Mapping[str, Any] = field(default_factory=dict)  # values a contract refused


@dataclass(frozen=True)
class Call:
    """A skill call made for a goal this turn."""

    goal: str
    skill: str
    args: Mapping[str, Any]
    outcome: SkillOutcome
    refused: bool = False  # answered, but the request is refused (its goal ends)


@dataclass(frozen=True)
class Event:
    kind: str
    goal: str | None = None
    intent: str | None = None
    scope: Mapping[str, Any] = field(default_factory=dict)
    items: tuple[Mapping[str, Any], ...] = ()  # a result's items, for templates with each:
    skill: str | None = None
    text: str | None = None  # a text of its own: a fallback's, a refusal, an FAQ answer
    text_id: str | None = None
    ticket: str | None = None
    question: Event | None = None  # what a ``resumed`` goal still needs

    @property
    def asks(self) -> bool:
        """Telling it puts a question to the user."""
        return self.kind in QUESTIONS or (
            self.kind == "fallback" and self.scope.get("action") == "clarify"
        )

    @property
    def delivers(self) -> bool:
        """Telling it delivers its goal (the goal completes when the reply passes)."""
        return self.kind in ("result", "completed") and self.goal is not None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for key in ("goal", "intent", "skill", "ticket"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.kind in ("slot_corrected", "slot_asked", "slot_carried"):
            out["slot"] = self.scope.get("slot")
        return out


@dataclass(frozen=True)
class TurnFacts:
    """Everything the events of a turn are derived from."""

    spec: GoalsSpec | None
    plan: Plan
    goals: Mapping[str, GoalView]  # the session's goals after planning, by id
    created: Mapping[str, str]  # plan ref -> goal id
    calls: Sequence[Call]
    handoff: str | None = None  # a ticket opened because the user asked for a person
    asks: Sequence[str] = ()  # the goals (ids) the plan has a question for
    results_keys: Mapping[str, str] = field(default_factory=dict)  # skill -> its results key
    # (intent, slot) -> what the input gave that the slot's regex passed over as personal
    # data, in words (银行卡号): a question for that slot says it was not kept
    passed_over: Callable[[str, str], str | None] | None = None
    tickets: Mapping[str, str] = field(default_factory=dict)  # safety goal -> its ticket


def goal_scope(goal: GoalView, intent: IntentSpec | None) -> dict[str, Any]:
    slots = dict(goal.slots)
    return {
        **slots,
        "slots": slots,
        "goal": goal.description,
        "intent": intent.describe if intent is not None else goal.intent,
    }


def touched(plan: Plan, created: Mapping[str, str]) -> list[str]:
    """The goals the input opened, changed, activated, asked about again or has a question
    for, in plan order: the open goals it updated (as their updates come), then the new ones."""
    order: list[str] = []
    for gid in (
        *(u.goal for u in plan.updates),
        *plan.activate,
        *plan.awaits,
        *plan.mentions,
        *(created[g.ref] for g in plan.goals if g.ref in created),
        *(created.get(a.goal, a.goal) for a in plan.asks),
    ):
        if gid not in order and gid not in plan.aborts:
            order.append(gid)
    return order


class _Build:
    def __init__(self, facts: TurnFacts) -> None:
        self.f = facts
        self.spec = facts.spec

    def intent(self, goal: GoalView) -> IntentSpec | None:
        return self.spec.intent(goal.intent) if self.spec is not None else None

    def real(self, goal_id: str | None) -> GoalView | None:
        """The goal, unless it is a root or aggregate Charter made (not an intent of the pack)."""
        g = self.f.goals.get(goal_id or "")
        return g if g is not None and self.intent(g) is not None else None

    def scope(self, goal: GoalView, **extra: Any) -> dict[str, Any]:
        return {**goal_scope(goal, self.intent(goal)), **extra}

    def event(self, kind: str, goal: GoalView, **extra: Any) -> Event:
        ticket = self.f.tickets.get(goal.id)
        if ticket is not None:
            extra = {"ticket": ticket, **extra}
        return Event(kind, goal.id, goal.intent, self.scope(goal, **extra), ticket=ticket)

    # ---- 1 ------------------------------------------------------------------------------------

    def acknowledgements(self) -> list[Event]:
        plan = self.f.plan
        out: list[Event] = []
        aborted = [g for a in plan.aborts if (g := self.real(a)) is not None]
        top = [g for g in aborted if self.real(g.parent) is None or g.parent not in plan.aborts]
        out += self.grouped("confirmation_declined" if plan.declined else "cancelled", top)
        if plan.accepted:
            out += self.grouped(
                "confirmation_accepted", [g for a in plan.activate if (g := self.real(a))]
            )
        # one acknowledgement per goal and input, of its first slot changed (in the intent's
        # order): 改到后天下午 changes the date and the half-day, and the user hears one change;
        # what follows (the confirmation asked again, the result) restates every value
        acked: set[str] = set()
        for u in sorted(plan.updates, key=self._slot_order):
            g = self.real(u.goal)
            old = u.old if u.old not in (None, "", []) or g is None else g.refused.get(u.slot)
            if g is None or old in (None, "", []) or old == u.value or g.id in acked:
                continue
            acked.add(g.id)
            spec = self.intent(g)
            slot = spec.slot(u.slot) if spec is not None else None
            label = slot.label if slot is not None and slot.label else None
            out.append(
                self.event("slot_corrected", g, slot=u.slot, label=label, old=old, new=u.value)
            )
        for new in plan.goals:  # a completed goal's request again, with corrected values
            g = self.real(self.f.created.get(new.ref))
            spec = self.intent(g) if g is not None else None
            if g is None or spec is None:
                continue
            for name, old in list(new.replaces.items())[:1]:
                slot = spec.slot(name)
                label = slot.label if slot is not None and slot.label else None
                new_value = g.slots.get(name)
                out.append(
                    self.event("slot_corrected", g, slot=name, label=label, old=old, new=new_value)
                )
            for name, value in new.carried.items():  # said, so a wrong guess can be corrected
                slot = spec.slot(name)
                label = slot.label if slot is not None and slot.label else None
                source = "memory" if name in new.remembered else "session"
                out.append(
                    self.event(
                        "slot_carried", g, slot=name, label=label, value=value, source=source
                    )
                )
        return out

    def _slot_order(self, u: SlotUpdate) -> tuple[int, int]:
        """Updates in plan order by goal, each goal's in its intent's slot order."""
        goals = list(dict.fromkeys(x.goal for x in self.f.plan.updates))
        g = self.f.goals.get(u.goal)
        spec = self.intent(g) if g is not None else None
        names = [s.name for s in spec.slots] if spec is not None else []
        return goals.index(u.goal), names.index(u.slot) if u.slot in names else len(names)

    def grouped(self, kind: str, goals: list[GoalView]) -> list[Event]:
        """One event per goal; the goals of a split as one (``goals``, ``count``)."""
        if len(goals) > 1 and kind.startswith("confirmation_"):
            names = [g.description for g in goals]
            return [Event(kind, None, None, {"goals": names, "count": len(names)})]
        return [self.event(kind, g) for g in goals]

    # ---- 2 ------------------------------------------------------------------------------------

    def outcomes(self, goal: GoalView) -> list[Event]:
        calls = [c for c in self.f.calls if c.goal == goal.id]
        out: list[Event] = []
        for c in calls:
            out += self.call(goal, c)
        if goal.status == "active" and (any(c.outcome.status == "ok" for c in calls) or not calls):
            out.append(self.event("completed", goal))
        return out

    def call(self, goal: GoalView, c: Call) -> list[Event]:
        o = c.outcome
        if o.status == "ok":
            result = o.result if isinstance(o.result, Mapping) else {}
            items = _items(result, self.f.results_keys.get(c.skill, "results"))
            own = self.scope(goal)
            scope = {
                "slots": own["slots"],
                "goal": own["goal"],
                "intent": own["intent"],
                **result,  # the result's fields by name win over these
                "args": dict(c.args),
                "result": dict(result),
                "found": len(items),
            }
            return [Event("result", goal.id, goal.intent, scope, items, c.skill, o.text)]
        if o.status == "invalid":
            return [
                Event(
                    "invalid",
                    goal.id,
                    goal.intent,
                    self.scope(goal),
                    skill=c.skill,
                    text=o.text,
                    text_id=f"{c.skill}.invalid",
                )
            ]
        fb = o.fallback
        if fb is not None and fb.action != "none":
            return [
                Event(
                    "fallback",
                    goal.id,
                    goal.intent,
                    self.scope(goal, action=fb.action),
                    skill=c.skill,
                    text=fb.text,
                    text_id=f"{c.skill}.fallback.{fb.action}",
                    ticket=fb.ticket,
                )
            ]
        failure = o.failure.kind if o.failure is not None else "error"
        return [self.event("skill_failed", goal, skill=c.skill, failure=failure)]

    def aggregate(self, goal: GoalView) -> Event:
        """The requests over the limit of one input, merged into one goal: nothing does them
        together, so the reply says so (``members``: what they are called)."""
        members = next(
            (g.members for g in self.f.plan.goals if self.f.created.get(g.ref) == goal.id), ()
        )
        names = [i.describe for m in members if self.spec and (i := self.spec.intent(m))]
        scope = {"goal": goal.description, "members": names}
        return Event("unanswered", goal.id, goal.intent, scope)

    # ---- 3 ------------------------------------------------------------------------------------

    def question(self, goal: GoalView) -> Event | None:
        """What a pending goal still needs: its confirmation, or its first missing slot."""
        if goal.awaiting:
            return self.event("confirmation_asked", goal)
        spec = self.intent(goal)
        if spec is None:
            return None
        for s in spec.slots:
            if s.required and goal.slots.get(s.name) in (None, "", []):
                question = fill_slots(s.ask, goal.slots) if s.ask else None
                passed = self.f.passed_over
                refused = passed(goal.intent, s.name) if passed is not None else None
                return self.event(
                    "slot_asked",
                    goal,
                    slot=s.name,
                    label=s.label or None,
                    question=question,
                    refused=refused,
                )
        return None


def _items(result: Mapping[str, Any], key: str) -> tuple[Mapping[str, Any], ...]:
    found = result.get(key)
    return tuple(i for i in found if isinstance(i, Mapping)) if isinstance(found, list) else ()


def turn_events(facts: TurnFacts) -> list[Event]:
    """The turn's events, in the order the reply tells them."""
    b = _Build(facts)
    out = b.acknowledgements()
    if facts.plan.repeated:
        out += [b.event("already_done", g) for gid in facts.plan.mentions if (g := b.real(gid))]
    if facts.plan.dismissed:
        out.append(Event("cancelled"))
    if facts.plan.clarify_declined:
        out.append(Event("clarification_declined"))
    if facts.plan.clarify and b.spec is not None:
        names = [i.describe for c in facts.plan.clarify if (i := b.spec.intent(c)) is not None]
        scope = {"first": names[0], "second": names[1] if len(names) > 1 else None}
        out.append(Event("clarification_asked", scope={**scope, "count": len(names)}))
    if facts.handoff is not None:
        scope = {"ticket": facts.handoff, "reason": "handoff"}
        return [*out, Event("handed_off", scope=scope, ticket=facts.handoff)]
    order = touched(facts.plan, facts.created)
    questions: list[Event] = []
    for gid in order:
        g = b.real(gid)
        if g is None:
            merged = facts.goals.get(gid)
            if merged is not None and merged.intent == AGGREGATE_INTENT:
                out.append(b.aggregate(merged))
            continue
        if g.status == "completed":  # a repeated yes: the result told again, if one was kept
            out += [e for c in facts.calls if c.goal == gid for e in b.call(g, c)]
        elif g.status == "active" or any(c.goal == gid for c in facts.calls):
            # a call refused for its arguments left the goal pending on them: the contract's
            # message is the question; a stage's passing result is told before it
            out += b.outcomes(g)
            mine = [c for c in facts.calls if c.goal == gid]
            passed = all(c.outcome.status == "ok" and not c.refused for c in mine)
            if g.status == "pending" and passed and (q := b.question(g)) is not None:
                questions.append(q)
        elif g.status == "pending" and (q := b.question(g)) is not None:
            questions.append(q)
    if facts.plan.confirm:  # a split awaiting the yes: one question for all its goals
        waiting = [g for gid in order if (g := b.real(gid)) is not None and g.awaiting]
        questions = [q for q in questions if q.kind != "confirmation_asked"]
        questions += b.grouped("confirmation_asked", waiting)
    out += questions
    # after an emergency or a fraud report, the reply is that alone: the request left open is
    # not brought up again in the same breath (the user may come back to it)
    alarmed = facts.plan.layer == "safety"
    if not any(e.asks for e in out) and not alarmed:
        left = [
            g
            for gid, g in facts.goals.items()
            if g.status == "pending"
            and gid not in order
            and gid not in facts.plan.aborts
            and b.real(gid) is not None
        ]
        q = b.question(left[-1]) if left else None
        if q is not None:
            out.append(Event("resumed", q.goal, q.intent, q.scope, question=q))
    return out
