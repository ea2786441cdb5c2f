"""The planner: one user input and the open goals of the session -> a ``Plan``.

Deterministic: no model, no clock of its own (``SessionState.now`` is the reference for time
slots), no randomness; the same input and state always give the same plan. In order:

1. a split awaiting confirmation is confirmed (是/好/Y) or dropped (不/否/N);
2. a cancellation (``cancel:``, 取消/不用了...) aborts the open goal the input refers to (the
   latest whose trigger fires on the input, else the latest open goal) and its open descendants;
3. a correction (``correct:``, 改成/换成...) updates the slots of the latest open goal for
   which the input has values, instead of opening a new goal;
4. every intent whose trigger fires is ordered by where its words occur in the input; an intent
   with an open goal updates that goal's slots, the others open new goals. Slots are read from
   the clauses holding the intent's words (so one clause's date does not leak into another's
   goal), inherited slots from the parent and earlier siblings, defaults last; a goal missing a
   required slot is ``pending`` with its question, else ``active``;
5. limits (seed 000 §4.3.1): several new top-level goals share a new root goal (named by their
   common ``group``); no goal is deeper than ``max_depth`` (deeper ones attach higher up); at
   most ``max_new_subgoals`` new goals per parent per input, the rest merged into one aggregate
   goal; over ``confirm_split_over`` new goals, the user is asked first;
6. an input with no intent may answer the question of the latest pending goal.

Steps 1-3 and the redo of a request corrected or followed up are here; new goals are
``charter.goals.newgoals`` (with ``segments``, ``tree``, ``slots`` and ``shapes`` beside it);
safety, dialogue acts in context and the examples are ``charter.goals.hearing``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from charter.compile.env import Env
from charter.compile.program import Program
from charter.compile.specs import goals as S
from charter.compile.specs.slots import SlotReader, fill_slots, slot_value
from charter.compile.specs.understanding import Decision
from charter.contracts.registry import Registry
from charter.goals import acts, hearing
from charter.goals.newgoals import Build
from charter.goals.plans import (
    Ask,
    NewGoal,
    OpenGoal,
    Plan,
    SessionState,
    SlotUpdate,
    merge,
    state_from,
)
from charter.goals.shapes import COMMON, elliptical, yes_or_no
from charter.goals.tree import with_descendants, with_empty_parents

if TYPE_CHECKING:
    from charter.goals.understand import Understander

__all__ = [
    "Ask",
    "NewGoal",
    "OpenGoal",
    "Plan",
    "Planner",
    "SessionState",
    "SlotUpdate",
    "fill_slots",
    "plan_case",
    "slot_value",
    "state_from",
]


def _never(env: Env) -> bool:
    return False


class Planner:
    def __init__(
        self,
        spec: S.GoalsSpec,
        registry: Registry,
        constants: Mapping[str, Any] | None = None,
        understander: Understander | None = None,
    ) -> None:
        self.spec = spec
        self.understander = understander
        self.lexicon = acts.BUILTIN.extended(
            affirm=spec.affirm, deny=spec.deny, cancel=spec.cancel_words
        )
        self.program: Program[tuple[str, str]] = Program(
            [
                *((("trigger", i.id), i.trigger) for i in spec.intents if i.trigger is not None),
                (("cancel", ""), spec.cancel),
                (("correct", ""), spec.correct),
            ],
            registry,
            constants,
            literals=spec.literals,
        )
        self.table = self.program.table
        self.triggers = {
            i.id: self.program[("trigger", i.id)] if i.trigger is not None else _never
            for i in spec.intents
        }
        self.cancel = self.program[("cancel", "")]
        self.correct = self.program[("correct", "")]
        self.intents = {i.id: i for i in spec.intents}
        self.reader = SlotReader(spec, registry.extractors, registry.pii_recognizers.values())
        self.formatters = registry.formatters

    # ---- reading slots ----------------------------------------------------------------------

    def values(
        self,
        intent: S.IntentSpec,
        text: str,
        now: datetime,
        preset: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return self.reader.values(intent, text, now, preset)

    def describe(self, template: str, values: Mapping[str, Any]) -> str:
        return fill_slots(template, values, self.formatters)

    # ---- the plan ---------------------------------------------------------------------------

    def plan(self, text: str, state: SessionState) -> Plan:
        env = self.program.env(input=text)
        clarifying = [g for g in state.goals if g.intent == S.CLARIFY_INTENT]
        if clarifying:
            state = replace(state, goals=tuple(g for g in state.goals if g not in clarifying))
        goals = list(state.goals)
        safety = hearing.keyword_safety(self, env)
        screened = not safety and bool(safety := hearing.screened_safety(self, env, text, state))
        if safety:
            ids = tuple(g.id for g in clarifying)
            plan = merge(Plan(aborts=ids), hearing.safety_plan(self, safety, goals))
            if screened and self.understander is not None:
                plan = replace(plan, heard=self.understander.hear(text))  # kept: not embedded again
            return plan
        act = hearing.in_context(self, env, text, acts.act_of(text, self.lexicon), state)
        if clarifying:
            resolved = self._clarified(env, text, act, clarifying[-1], state)
            if resolved is not None:
                return merge(Plan(aborts=tuple(g.id for g in clarifying)), resolved)
            dropped = Plan(aborts=tuple(g.id for g in clarifying))
            return merge(dropped, self._plan(env, text, state, act))
        return self._plan(env, text, state, act)

    def _clarified(
        self, env: Env, text: str, act: acts.Act, goal: OpenGoal, state: SessionState
    ) -> Plan | None:
        """The answer to a clarifying question: the plan of the candidate it picks, a no, or
        None (the input is about something else)."""
        candidates = [c for c in goal.slots.get("candidates") or () if c in self.intents]
        pick = hearing.chosen(self, env, text, act, candidates)
        if pick is None:
            if act in (acts.Act.DENY, acts.Act.CANCEL):
                return Plan(clarify_declined=True, layer="act")
            return None
        values = goal.slots.get("values") or {}
        given = hearing.preset_for(self, state, pick, values, text)
        built = Build(self, env, text, given, forced=(pick,)).plan()
        return replace(built, layer="clarified")

    def _plan(self, env: Env, text: str, state: SessionState, act: acts.Act) -> Plan:
        goals = list(state.goals)
        awaiting = [g for g in goals if g.awaiting]
        answer = True if act is acts.Act.AFFIRM else None
        # a stop that names what it stops (转账不用了 / 不转了 in the pack's cancel:) is a
        # cancellation, told as one; a bare no (不用了 / 先别弄了) declines what awaits
        if act is acts.Act.DENY or (
            act is acts.Act.CANCEL and (yes_or_no(text) is False or not self.cancel(env))
        ):
            answer = False
        if awaiting and answer is True:
            ready = tuple(g.id for g in awaiting if not g.missing)
            asks = tuple(
                a for g in awaiting if g.missing and (a := self._ask(g.intent, g.missing, g.id))
            )
            return Plan(
                activate=ready,
                questions=tuple(a.text for a in asks),
                asks=asks,
                accepted=True,
                layer="act",
            )
        done = state.done
        if (
            answer is True
            and not awaiting
            and done is not None
            and done.status == "completed"  # not one a skill refused: nothing was done
            and self.confirms(done.intent)
            # an open question (请问您要转账多少钱？) is what the yes answers, not the done action
            and not any(g.status == "pending" and g.missing for g in goals)
        ):
            return Plan(mentions=(done.id,), repeated=True)
        if awaiting and answer is False:
            ids = [g.id for g in awaiting]
            return Plan(aborts=with_empty_parents(ids, goals), declined=True, layer="act")
        asking = [g for g in goals if g.status == "pending" and g.missing]
        if asking and act is acts.Act.CANCEL and not self.cancel(env):
            # 等等，先不弄了 while a question is pending: the request asked about is dropped
            return Plan(aborts=with_descendants(asking[-1], goals), layer="act")
        if awaiting and self.cancel(env):
            # 算了 drops what awaits the yes; 取消转账 the awaiting transfer only; a cancellation
            # naming another goal is an ordinary one (below)
            named = [g for g in goals if self._named(env, g)]
            if not named or any(g.awaiting for g in named):
                dropped = [g.id for g in awaiting if not named or g in named]
                return Plan(aborts=with_empty_parents(dropped, goals))
        aborts: tuple[str, ...] = ()
        if goals and self.cancel(env):
            aborts = self._cancelled(env, goals)
            # what is left of the input may still be a new request (算了，帮我转账...)
            # what is cancelled is not redone by a correction: no done goal past a cancellation
            state = replace(state, goals=tuple(g for g in goals if g.id not in aborts), done=None)
            built = Build(self, env, text, state, skip={self._goal(goals, a) for a in aborts})
            return merge(Plan(aborts=aborts), built.plan(new_only=True))
        fixed = Plan()
        if goals and self.correct(env):
            fixed = self._corrections(text, goals, state.now, state.preset)
        if (
            not fixed.updates
            and state.done is not None
            and self.correct(env)
            and not self._elsewhere(env, state.done.intent)
        ):
            again = self._redo(text, state.done, state.now, state.preset)
            if again.goals:
                return again
        updated = {u.goal for u in fixed.updates}
        rest = Build(
            self, env, text, state, skip_goals=updated, consumed=[u.value for u in fixed.updates]
        ).plan(new_only=bool(updated))
        merged = merge(fixed, rest)
        if not goals and merged == Plan() and self.cancel(env):
            return Plan(dismissed=True)
        return merged

    def by_examples(self, env: Env, text: str, state: SessionState) -> Plan:
        """No trigger fired, nothing answered: what the nearest examples say (§6a)."""
        if self.understander is None:
            return Plan()
        heard = self.understander.hear(text)  # a safety intent they open comes first
        if safety := hearing.examples_safety(heard, text):
            return replace(hearing.safety_plan(self, safety, state.goals), heard=heard)
        if hearing.opens_nothing(self, heard, text, state):
            return Plan(heard=heard)
        if heard.decision is Decision.OPEN:
            built = Build(self, env, text, state, forced=heard.intents).plan()
            return replace(built, layer="example", heard=heard)
        if heard.decision in (Decision.CLARIFY, Decision.CONFIRM):
            return hearing.clarify_plan(self, heard, text, state)
        return Plan(heard=heard)

    def _elsewhere(self, env: Env, intent: str) -> bool:
        """The input asks for another intent than ``intent`` (订单…要换货，换成XL码 after a
        logistics query is a new exchange, not the query corrected)."""
        return any(i.id != intent and self.triggers[i.id](env) for i in self.spec.intents)

    @staticmethod
    def _goal(goals: Sequence[OpenGoal], goal_id: str) -> str:
        return next(g.intent for g in goals if g.id == goal_id)

    def _ask(self, intent_id: str, missing: Sequence[str], goal: str) -> Ask | None:
        intent = self.intents.get(intent_id)
        slot = intent.slot(missing[0]) if intent and missing else None
        return Ask(goal, slot.name, slot.ask) if slot and slot.ask else None

    def confirms(self, intent_id: str) -> bool:
        intent = self.intents.get(intent_id)
        return intent is not None and intent.confirm

    def _named(self, env: Env, goal: OpenGoal) -> bool:
        """The input names the goal by its intent's own words, not its whole trigger: a
        registration trigger that excludes 取消 must still let 取消预约 name the registration."""
        hits = env.hits("input", env.input)
        ids = self.table.ids
        intent = self.intents.get(goal.intent)
        return intent is not None and any(ids[w] in hits for w in intent.literals if w in ids)

    def _cancelled(self, env: Env, goals: list[OpenGoal]) -> tuple[str, ...]:
        target = ([g for g in goals if self._named(env, g)] or goals)[-1]
        return with_descendants(target, goals)

    def _redo(
        self,
        text: str,
        done: OpenGoal,
        now: datetime,
        preset: Mapping[str, Mapping[str, Any]],
        *,
        added: bool = False,
    ) -> Plan:
        """不对，是尾号5678 right after the balance was told: the completed goal's request again,
        with the corrected values (a new goal; an action is confirmed again). ``added``: a value
        for a slot the goal did not have counts too (a follow-up gives the missing card)."""
        intent = self.intents.get(done.intent)
        found = self.values(intent, text, now, preset) if intent is not None else {}
        replaced = {
            k: done.slots[k] for k, v in found.items() if done.slots.get(k) not in (None, v)
        }
        new = [k for k, v in found.items() if done.slots.get(k) in (None, "", [])]
        if intent is None or not (replaced or (added and new)):
            return Plan()
        # the intent's own slots: what a result kept (keep:) belongs to the old request, but
        # for what a correction of a done action moves (moves:, its booking number)
        own = {k: v for k, v in done.slots.items() if intent.slot(k) is not None}
        slots = {**own, **found}
        movable = intent.skill.moves if intent.skill is not None and not added else ()
        moved = {
            k: done.slots[k]
            for k in movable
            if done.status == "completed" and done.slots.get(k) not in (None, "")
        }
        goal = NewGoal(
            ref="n1",
            intent=intent.id,
            parent=None,
            depth=0,
            status="pending" if intent.confirm else "active",
            description=self.describe(intent.description, slots),
            timeout_s=intent.timeout_s,
            slots=slots,
            inherited=moved,
            awaiting=intent.confirm,
            redoes=done.id,
            replaces=replaced,
        )
        return Plan(goals=(goal,))

    def follow_up(self, text: str, state: SessionState) -> Plan:
        """An input with no intent that gives another value for the session's last request
        (那尾号9009呢 after a balance, 换成XL码 after a return): that request again with it.
        Only an elliptical input is one: a 那…呢 / 换成… form, or little besides the value
        (卡号是6222…); 现在到39度了 says something new about the symptom, it asks nothing again.
        A value counts when its slot is required, has the pack's own pattern or a specific
        extractor (a bank card): a date or an amount alone is too common to mean "the same
        again"."""
        done = state.done
        intent = self.intents.get(done.intent) if done is not None else None
        if done is None or intent is None:
            return Plan()
        found = self.values(intent, text, state.now, state.preset)
        telling = [
            k
            for k in found
            if (s := intent.slot(k)) is not None
            and (s.required or s.regex or s.extractor not in (None, *COMMON))
        ]
        if not telling or not elliptical(text, found):
            return Plan()
        again = self._redo(text, done, state.now, state.preset, added=True)
        # another request, not a correction: its result says what was asked, no "改为" first
        return replace(again, goals=tuple(replace(g, replaces={}) for g in again.goals))

    def _corrections(
        self,
        text: str,
        goals: list[OpenGoal],
        now: datetime,
        preset: Mapping[str, Mapping[str, Any]],
    ) -> Plan:
        """A correction changes a value already given: the latest goal whose slot the input
        gives another value for; failing that, the latest goal the input has values for."""
        candidates = []
        for goal in reversed(goals):
            intent = self.intents.get(goal.intent)
            found = self.values(intent, text, now, preset) if intent is not None else {}
            if found:
                candidates.append((goal, found))
        changing = [
            (g, f)
            for g, f in candidates
            if any(g.slots.get(k) not in (None, v) for k, v in f.items())
        ]
        if not candidates:
            return Plan()
        goal, found = (changing or candidates)[0]
        updates = tuple(SlotUpdate(goal.id, k, v, goal.slots.get(k)) for k, v in found.items())
        still = [m for m in goal.missing if m not in found]
        complete = goal.status == "pending" and not still
        confirm = self.confirms(goal.intent)
        ask = self._ask(goal.intent, still, goal.id) if still else None
        asks = (ask,) if ask is not None else ()
        return Plan(
            updates=updates,
            activate=(goal.id,) if complete and not confirm else (),
            awaits=(goal.id,) if complete and confirm else (),
            questions=tuple(a.text for a in asks),
            asks=asks,
        )


def plan_case(planner: Planner, case: S.GoalCase) -> dict[str, Any]:
    """The plan of a planner test, as the dict the test compares."""
    state = state_from(case.goals, case.now, case.remembered)
    return planner.plan(case.input, state).as_dict()
