"""The planner's data: the session as it sees it (``SessionState``, ``OpenGoal``) and what
it decides (``Plan``: new goals, slot updates, activations, waits, aborts, questions). Plain
frozen values; ``charter.goals.tracker`` applies a plan to the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.compile.specs.understanding import Heard


def merge(first: Plan, then: Plan) -> Plan:
    """Two plans for one input, in order (a cancellation, then a new request)."""
    return Plan(
        goals=then.goals,
        updates=(*first.updates, *then.updates),
        activate=(*first.activate, *then.activate),
        aborts=(*first.aborts, *then.aborts),
        questions=(*first.questions, *then.questions),
        confirm=then.confirm or first.confirm,
        asks=(*first.asks, *then.asks),
        awaits=(*first.awaits, *then.awaits),
        mentions=(*first.mentions, *then.mentions),
        accepted=first.accepted or then.accepted,
        declined=first.declined or then.declined,
        clarify=then.clarify or first.clarify,
        clarify_declined=first.clarify_declined or then.clarify_declined,
        layer=then.layer or first.layer,
        heard=then.heard or first.heard,
    )


@dataclass(frozen=True)
class OpenGoal:
    """A pending or active goal of the session, as the planner sees it."""

    id: str
    intent: str
    status: str = "active"
    parent: str | None = None
    slots: Mapping[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    awaiting: bool = False  # opened by a split the user has not confirmed yet


@dataclass(frozen=True)
class SessionState:
    goals: tuple[OpenGoal, ...] = ()  # open goals, in the order they were created
    now: datetime = datetime(2026, 1, 7, 9, 0)
    # slot values decided before planning (learned patches): intent -> slot -> value; they
    # override what the intent's regex and extractors read from the same input
    preset: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # the session's goal completed last: what "不对，是尾号5678" right after an answer corrects
    done: OpenGoal | None = None
    # the session's completed goals, the latest first: where ``carry:`` slots look after the
    # open goals (their slots, and the result fields their skill binding keeps)
    recent: tuple[OpenGoal, ...] = ()
    # the user's remembered facts, slot name -> value, for the slots declared ``carry: memory``
    remembered: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewGoal:
    ref: str  # "n1", "n2"... within the plan; the store gives the real id
    intent: str
    parent: str | None  # a ref of this plan or the id of an open goal
    depth: int
    status: str
    description: str
    timeout_s: int
    slots: Mapping[str, Any] = field(default_factory=dict)
    inherited: Mapping[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    members: tuple[str, ...] = ()  # the intents an aggregate goal merges
    awaiting: bool = False
    # a correction of a completed goal is a new goal of its intent: which one, and the values
    # the correction replaced (slot -> old value)
    redoes: str | None = None
    replaces: Mapping[str, Any] = field(default_factory=dict)
    # values the input did not give, taken by ``carry:`` from the session or memory (slot ->
    # value), and the slots of those that came from memory
    carried: Mapping[str, Any] = field(default_factory=dict)
    remembered: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ref": self.ref,
            "intent": self.intent,
            "parent": self.parent,
            "status": self.status,
            "description": self.description,
        }
        for key in ("slots", "inherited", "carried", "remembered", "missing", "members"):
            value = getattr(self, key)
            if value:
                out[key] = dict(value) if isinstance(value, Mapping) else list(value)
        if self.awaiting:
            out["awaiting"] = True
        if self.redoes:
            out["redoes"] = self.redoes
        return out


@dataclass(frozen=True)
class SlotUpdate:
    goal: str
    slot: str
    value: Any
    old: Any = None  # the value it replaces (None: the slot was missing)


@dataclass(frozen=True)
class Ask:
    """A question the plan asks: the first missing slot of a goal (a ref of this plan's new
    goals, or an open goal's id), in the words of the slot's ``ask``."""

    goal: str
    slot: str
    text: str


@dataclass(frozen=True)
class Plan:
    goals: tuple[NewGoal, ...] = ()
    updates: tuple[SlotUpdate, ...] = ()
    activate: tuple[str, ...] = ()  # open goals to move pending -> active
    aborts: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    confirm: str | None = None
    asks: tuple[Ask, ...] = ()  # the questions, with the goal and slot each is about
    # open goals of an intent with ``confirm`` whose slots are now complete (or changed): they
    # wait for the user's yes
    awaits: tuple[str, ...] = ()
    # open goals the input asks about again without changing them (再查一下尾号1234的余额)
    mentions: tuple[str, ...] = ()
    accepted: bool = False  # the input is a yes to what awaits it (activate)
    declined: bool = False  # the input is a no to what awaits it (aborts)
    dismissed: bool = False  # a cancellation (算了) with nothing open to cancel
    # a yes with nothing awaiting it, right after an action was done: it is done already
    # (``mentions`` holds that goal; its result is told again, never executed again)
    repeated: bool = False
    # the examples left the request open (ARCHITECTURE §6a): one question naming these intents
    # (two: which one; one: "您是想…吗"), kept as a clarify goal (plan.goals) until answered
    clarify: tuple[str, ...] = ()
    clarify_declined: bool = False  # the answer to such a question was a no
    # which layer decided the input: safety, act, keyword, example, clarified, answer, "" (none)
    layer: str = ""
    heard: Heard | None = field(default=None, compare=False)  # what the examples said

    def as_dict(self) -> dict[str, Any]:
        """The plan with empty parts left out: what planner tests compare."""
        out: dict[str, Any] = {}
        if self.goals:
            out["goals"] = [g.as_dict() for g in self.goals]
        if self.updates:
            out["updates"] = [
                {"goal": u.goal, "slot": u.slot, "value": u.value} for u in self.updates
            ]
        for key in ("activate", "awaits", "aborts", "questions"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.confirm:
            out["confirm"] = self.confirm
        if self.clarify:
            out["clarify"] = list(self.clarify)
        return out


def replace_goal(goal: NewGoal, **changes: Any) -> NewGoal:
    return replace(goal, **changes)


def state_from(
    goals: Sequence[Mapping[str, Any]],
    now: str,
    remembered: Mapping[str, Any] | None = None,
) -> SessionState:
    """A session state written as in a planner test: goals as mappings (open ones, and
    completed ones the session finished, the last listed the latest), an ISO clock, the
    user's remembered facts."""
    made = [
        OpenGoal(
            id=str(g["id"]),
            intent=str(g["intent"]),
            status=str(g.get("status", "active")),
            parent=g.get("parent"),
            slots=dict(g.get("slots") or {}),
            missing=tuple(g.get("missing") or ()),
            awaiting=bool(g.get("awaiting", False)),
        )
        for g in goals
    ]
    recent = tuple(reversed([g for g in made if g.status == "completed"]))
    return SessionState(
        goals=tuple(g for g in made if g.status != "completed"),
        now=datetime.fromisoformat(now),
        done=recent[0] if recent else None,
        recent=recent,
        remembered=dict(remembered or {}),
    )
