"""Measuring understanding (ARCHITECTURE §6a): a pack's intent test table (``tests/intents.yaml``,
compiled into ``CompiledPack.phrases``) planned phrase by phrase, and scored.

Each phrase is planned from the state it is said in: an empty session; ``pending: confirm``,
one goal of the pack's first ``confirm: true`` intent (or the phrase's ``of``) awaiting the yes,
its slots filled with the values the planner tests give them; ``pending: question``, a goal of
the first intent with a required slot (or ``of``), every required slot missing and the first
asked (a customer may answer with any
of them: 上午 to 请问您要挂哪个科室的号？). What the plan decided:

* the intent: the first new goal's (not a root or aggregate goal; a safety goal counts),
  ``clarify`` when the plan asks a clarifying question (right when the expected intent is one of
  its candidates, counted apart), none otherwise; and ``Plan.layer``, the layer that decided;
* the dialogue act: affirm when the plan accepted what awaited the yes, deny or cancel when it
  declined or aborted (as ``act_of`` reads the text), answer when the input answered the slot
  question (gave values to slots it asks for only), correct when it changed the pending goal's
  other slots, else ``act_of``;
* the slots: the first new goal's, as text, against the phrase's ``slots``.

``measure(pack, registry, understander)`` runs the table once; the report
(``charter.conversations.understanding_report``) puts the keyword-only run beside the one with
examples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.agent.steps import faq_direct
from charter.compile.specs import goals as S
from charter.compile.specs.phrases import IntentPhrase
from charter.contracts.registry import Registry
from charter.goals.acts import Act, act_of
from charter.goals.planner import Planner
from charter.goals.plans import Plan, SessionState, state_from

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack
    from charter.goals.understand import Understander

NOW = "2026-01-07T09:00"
PENDING_ID = "g1"
CLARIFY = S.CLARIFY_INTENT
DUMMY = "1"  # a slot value no planner test gives
_SKIP = frozenset({S.ROOT_INTENT, S.AGGREGATE_INTENT})


@dataclass(frozen=True)
class Outcome:
    """One phrase, planned."""

    phrase: IntentPhrase
    decided: str | None  # an intent id, "clarify", or None
    layer: str  # Plan.layer ("" when no layer decided)
    candidates: tuple[str, ...] = ()  # a clarifying question's intents
    act: str | None = None  # the act read (phrases that expect one)
    slots: Mapping[str, str] = field(default_factory=dict)  # the first new goal's

    @property
    def intent_right(self) -> bool:
        expected = self.phrase.intent
        if self.decided == CLARIFY:
            return expected is not None and expected in self.candidates
        return self.decided == expected

    @property
    def clarified(self) -> bool:
        return self.decided == CLARIFY

    @property
    def act_right(self) -> bool:
        return self.act == self.phrase.act

    @property
    def slots_right(self) -> bool:
        return all(self.slots.get(k) == v for k, v in self.phrase.slots.items())

    @property
    def shown(self) -> str:
        """What was decided, as the report prints it."""
        if self.decided == CLARIFY:
            return "clarified: " + "|".join(self.candidates)
        return self.decided or "none"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "say": self.phrase.say,
            "expected": self.phrase.intent if self.phrase.checks_intent else None,
            "decided": self.decided,
            "layer": self.layer,
            "location": str(self.phrase.location),
        }
        if self.candidates:
            out["candidates"] = list(self.candidates)
        if self.phrase.act is not None:
            out["act"] = {"expected": self.phrase.act, "read": self.act}
        if self.phrase.slots:
            out["slots"] = {"expected": self.phrase.slots, "read": dict(self.slots)}
        return out


@dataclass(frozen=True)
class Score:
    """An intent's precision and recall (None: nothing to divide by)."""

    intent: str
    expected: int  # phrases that expect it
    decided: int  # phrases it was opened for
    precision: float | None
    recall: float | None


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class Measure:
    """One run of the table: every phrase's outcome, and the scores they make."""

    outcomes: tuple[Outcome, ...]
    order: tuple[str, ...]  # the pack's intents in file order

    @property
    def scored(self) -> tuple[Outcome, ...]:
        """The outcomes of phrases that expect an intent (or none)."""
        return tuple(o for o in self.outcomes if o.phrase.checks_intent)

    def accuracy(self) -> float | None:
        scored = self.scored
        return ratio(sum(o.intent_right for o in scored), len(scored))

    def clarified(self) -> tuple[int, int]:
        """Clarifying questions asked, and of those the ones naming the expected intent."""
        asked = [o for o in self.scored if o.clarified]
        return len(asked), sum(o.intent_right for o in asked)

    def score(self, intent: str) -> Score:
        """Recall counts a clarifying question naming the intent as found; precision is over
        the phrases the intent was opened for."""
        scored = self.scored
        expected = [o for o in scored if o.phrase.intent == intent]
        opened = [o for o in scored if o.decided == intent]
        found = sum(o.intent_right for o in expected)
        hits = sum(o.phrase.intent == intent for o in opened)
        return Score(
            intent,
            len(expected),
            len(opened),
            ratio(hits, len(opened)),
            ratio(found, len(expected)),
        )

    def scores(self) -> tuple[Score, ...]:
        """Each intent the table expects or the plans opened, in the pack's order."""
        seen = {o.phrase.intent for o in self.scored} | {o.decided for o in self.scored}
        return tuple(self.score(i) for i in self.order if i in seen)

    def out_of_scope(self) -> tuple[int, int]:
        """Phrases expecting no intent, and those no intent answered."""
        none = [o for o in self.scored if o.phrase.intent is None]
        return len(none), sum(o.decided is None for o in none)

    def confusion(self) -> tuple[tuple[str, str, int], ...]:
        """(expected, decided, count) of the misses, most frequent first."""
        counts = Counter(
            (o.phrase.intent or "none", CLARIFY if o.clarified else o.shown)
            for o in self.scored
            if not o.intent_right
        )
        return tuple((e, d, n) for (e, d), n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))

    def layers(self) -> tuple[tuple[str, int], ...]:
        counts = Counter(o.layer or "none" for o in self.outcomes)
        return tuple(sorted(counts.items(), key=lambda x: (-x[1], x[0])))

    def acts(self) -> tuple[int, int]:
        with_act = [o for o in self.outcomes if o.phrase.act is not None]
        return len(with_act), sum(o.act_right for o in with_act)

    def slots(self) -> tuple[int, int]:
        with_slots = [o for o in self.outcomes if o.phrase.slots]
        return len(with_slots), sum(o.slots_right for o in with_slots)

    def misses(self) -> tuple[Outcome, ...]:
        return tuple(
            o
            for o in self.outcomes
            if (o.phrase.checks_intent and not o.intent_right)
            or (o.phrase.act is not None and not o.act_right)
            or (o.phrase.slots and not o.slots_right)
        )


# ---- the states ------------------------------------------------------------------------------


def sample_slots(spec: S.GoalsSpec, intent: S.IntentSpec) -> dict[str, Any]:
    """Values of ``intent``'s slots as the planner tests give them (the first seen of each):
    the open goals before a test and the goals its plan wants."""
    out: dict[str, Any] = {}
    for case in spec.cases:
        goals = [*case.goals, *(case.plan.get("goals") or ())]
        for goal in goals:
            if isinstance(goal, Mapping) and goal.get("intent") == intent.id:
                for k, v in (goal.get("slots") or {}).items():
                    out.setdefault(str(k), v)
    return out


def states(spec: S.GoalsSpec, of: str | None = None) -> dict[str | None, SessionState]:
    """The session state each ``pending:`` value means (None: an empty session), for the
    request of intent ``of`` (None: the pack's first that confirms, the first with a required
    slot)."""
    out: dict[str | None, SessionState] = {None: state_from([], NOW)}
    named = [i for i in spec.intents if i.id == of] if of is not None else list(spec.intents)
    confirming = next((i for i in named if i.confirm), None)
    if confirming is not None:
        given = sample_slots(spec, confirming)
        required = [s.name for s in confirming.slots if s.required]
        slots = {k: given.get(k, DUMMY) for k in required} | {
            k: v for k, v in given.items() if confirming.slot(k) is not None
        }
        goal = {
            "id": PENDING_ID,
            "intent": confirming.id,
            "status": "pending",
            "slots": slots,
            "awaiting": True,
        }
        out["confirm"] = state_from([goal], NOW)
    asking = next((i for i in named if any(s.required for s in i.slots)), None)
    if asking is not None:
        required = [s.name for s in asking.slots if s.required]
        given = sample_slots(spec, asking)
        slots = {k: v for k, v in given.items() if k not in required and asking.slot(k) is not None}
        goal = {
            "id": PENDING_ID,
            "intent": asking.id,
            "status": "pending",
            "slots": slots,
            "missing": required,
        }
        out["question"] = state_from([goal], NOW)
    return out


# ---- one phrase ------------------------------------------------------------------------------


def _first_goal(plan: Plan) -> tuple[str | None, Mapping[str, Any]]:
    new = [g for g in plan.goals if g.intent not in _SKIP]
    if not new:
        return None, {}
    return new[0].intent, {**new[0].inherited, **new[0].slots}


def read_act(plan: Plan, text: str, planner: Planner, missing: Sequence[str] = ()) -> str:
    """The dialogue act the plan shows (see the module docstring); ``missing``: the slots the
    pending question asks for (a value given to one of them answers it, whatever layer)."""
    said = act_of(text, planner.lexicon)
    if plan.accepted:
        return str(Act.AFFIRM)
    if plan.declined or plan.aborts:
        if said in (Act.DENY, Act.CANCEL):
            return str(said)
        return str(Act.DENY if plan.declined else Act.CANCEL)
    mine = [u for u in plan.updates if u.goal == PENDING_ID]
    if plan.layer == "answer" or (mine and all(u.slot in missing for u in mine)):
        return "answer"  # 转给李雷 to 请问收款人是谁: the transfer's trigger fired, still an answer
    if mine:
        return str(Act.CORRECT)
    return str(said)


def outcome(
    planner: Planner,
    phrase: IntentPhrase,
    state: SessionState | None,
    pack: CompiledPack | None = None,
) -> Outcome:
    """``phrase`` planned in ``state`` (None: the pack has no goal for that state; nothing is
    decided). With ``pack``, as the agent answers it: a question that only opens requests and
    matches an FAQ entry closely is the FAQ's (``charter.agent.steps.faq_direct``), no
    intent's."""
    if state is None:
        return Outcome(phrase, None, "", act=None)
    plan = planner.plan(phrase.say, state)
    if pack is not None and phrase.act is None and faq_direct(pack, plan, phrase.say):
        return Outcome(phrase, None, "faq", act=None)
    intent, slots = _first_goal(plan)
    candidates: tuple[str, ...] = ()
    if intent == CLARIFY:
        candidates = plan.clarify
    missing = next((g.missing for g in state.goals if g.id == PENDING_ID), ())
    act = read_act(plan, phrase.say, planner, missing) if phrase.act is not None else None
    return Outcome(
        phrase,
        intent,
        plan.layer,
        candidates,
        act,
        {str(k): _text(v) for k, v in slots.items()},
    )


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "、".join(str(v) for v in value)
    return str(value)


def measure(
    pack: CompiledPack,
    registry: Registry,
    understander: Understander | None,
    phrases: Sequence[IntentPhrase] | None = None,
) -> Measure:
    """The pack's table (or ``phrases``) planned once; ``understander`` None: keywords only."""
    spec = pack.goals
    table = tuple(pack.phrases if phrases is None else phrases)
    if spec is None:
        return Measure(tuple(Outcome(p, None, "") for p in table), ())
    planner = Planner(spec, registry, pack.constants, understander)
    by_of = {of: states(spec, of) for of in {p.of for p in table}}
    outcomes = tuple(outcome(planner, p, by_of[p.of].get(p.pending), pack) for p in table)
    return Measure(outcomes, tuple(i.id for i in spec.intents))
