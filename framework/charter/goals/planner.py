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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import regex

from charter.compile.build import Builder
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.goals import spec as S
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
from charter.goals.slots import SlotReader, fill_slots, slot_value
from charter.registry import Registry

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

_CLAUSE = regex.compile(r"[，,。；;！!？?\n]+|顺便|另外|还有|同时|然后|以及|并且")
_YES = frozenset(
    {"是", "是的", "好", "好的", "好啊", "可以", "行", "确认", "继续", "对", "嗯", "y", "yes", "ok"}
)
_NO = frozenset(
    {
        "否",
        "不",
        "不是",
        "不用",
        "不用了",
        "不要",
        "不要了",
        "不了",
        "不需要",
        "算了",
        "取消",
        "n",
        "no",
    }
)
_WORDS = regex.compile(r"[\s。，,.!！?？~～、；;]+")


# extractors whose values turn up in any sentence (明天, 100元): alone they are no follow-up
_COMMON = ("time", "money")


_FOLLOW = regex.compile(r"^(?:那么?|那就|还有|换成|改成|改为|换|再)|呢[\p{P}\s]*$")


def _elliptical(text: str, found: Mapping[str, Any]) -> bool:
    """The input is a follow-up's shape: 那…呢, 换成…, or its values with at most three other
    characters (卡号是…)."""
    if _FOLLOW.search(text.strip()):
        return True
    rest = text
    for value in found.values():
        for v in value if isinstance(value, list) else [value]:
            rest = rest.replace(str(v), "")
    return len(regex.sub(r"[\p{P}\s]", "", rest)) <= 3


def _answer(text: str) -> bool | None:
    """True for a yes (是 / 好的，继续 / Y), False for a no (不 / 不用了 / N), else None."""
    words = [w for w in _WORDS.split(text.strip().lower()) if w]
    if words and all(w in _YES for w in words):
        return True
    if words and words[0] in _NO and all(w in _NO or w in _YES for w in words):
        return False
    return None


class Planner:
    def __init__(
        self, spec: S.GoalsSpec, registry: Registry, constants: Mapping[str, Any] | None = None
    ) -> None:
        self.spec = spec
        self.extractors = registry.extractors
        self.table = LiteralTable(spec.literals)
        builder = Builder(self.table.ids, constants or {}, registry.predicates)
        self.triggers = {i.id: builder.expr(i.trigger) for i in spec.intents}
        self.cancel = builder.expr(spec.cancel)
        self.correct = builder.expr(spec.correct)
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

    # ---- where the intents are in the input -------------------------------------------------

    def _positions(self, env: Env, intent: S.IntentSpec) -> list[int]:
        hits = env.hits("input", env.input)
        return sorted(
            start
            for lit in intent.literals
            if lit in self.table.ids
            for start, _ in hits.get(self.table.ids[lit], ())
        )

    @staticmethod
    def _clauses(text: str) -> list[tuple[int, int]]:
        out, pos = [], 0
        for m in _CLAUSE.finditer(text):
            if m.start() > pos:
                out.append((pos, m.start()))
            pos = m.end()
        if pos < len(text):
            out.append((pos, len(text)))
        return out

    def _segments(self, text: str, where: Sequence[tuple[str, Sequence[int]]]) -> dict[str, str]:
        """Each intent's part of the input: the clauses holding its words, and the clauses
        after them that hold no intent's words (我要挂号，皮肤科，明天上午: all three clauses are
        the registration's); clauses before the first intent go to the first."""
        clauses = self._clauses(text)
        owners: list[list[str]] = [
            [iid for iid, ps in where if any(s <= p < e for p in ps)] for s, e in clauses
        ]
        last: list[str] = next((o for o in owners if o), [])
        for n, owner in enumerate(owners):
            if owner:
                last = owner
            else:
                owners[n] = last
        out = {}
        for iid, _ in where:
            mine = [
                text[s:e] for (s, e), owner in zip(clauses, owners, strict=True) if iid in owner
            ]
            out[iid] = "，".join(mine) if mine else text
        return out

    # ---- the plan ---------------------------------------------------------------------------

    def plan(self, text: str, state: SessionState) -> Plan:
        env = Env("", text, {}, self.table, self.extractors)
        goals = list(state.goals)
        awaiting = [g for g in goals if g.awaiting]
        answer = _answer(text)
        if awaiting and answer is True:
            ready = tuple(g.id for g in awaiting if not g.missing)
            asks = tuple(
                a for g in awaiting if g.missing and (a := self._ask(g.intent, g.missing, g.id))
            )
            return Plan(
                activate=ready, questions=tuple(a.text for a in asks), asks=asks, accepted=True
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
            return Plan(aborts=self._with_empty_parents(ids, goals), declined=True)
        if awaiting and self.cancel(env):
            # 算了 drops what awaits the yes; 取消转账 the awaiting transfer only; a cancellation
            # naming another goal is an ordinary one (below)
            named = [g for g in goals if self._named(env, g)]
            if not named or any(g.awaiting for g in named):
                dropped = [g.id for g in awaiting if not named or g in named]
                return Plan(aborts=self._with_empty_parents(dropped, goals))
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

    def _elsewhere(self, env: Env, intent: str) -> bool:
        """The input asks for another intent than ``intent`` (订单…要换货，换成XL码 after a
        logistics query is a new exchange, not the query corrected)."""
        return any(i.id != intent and self.triggers[i.id](env) for i in self.spec.intents)

    @staticmethod
    def _goal(goals: Sequence[OpenGoal], goal_id: str) -> str:
        return next(g.intent for g in goals if g.id == goal_id)

    @staticmethod
    def _with_empty_parents(ids: list[str], goals: Sequence[OpenGoal]) -> tuple[str, ...]:
        """The goals, and a parent all of whose open children go with them (the root a
        declined split made)."""
        out = list(ids)
        for g in goals:
            kids = [k.id for k in goals if k.parent == g.id]
            if g.id not in out and kids and all(k in out for k in kids):
                out.insert(0, g.id)
        return tuple(out)

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
        out, frontier = [target.id], {target.id}
        for g in goals:  # creation order: a descendant comes after its parent
            if g.parent in frontier:
                out.append(g.id)
                frontier.add(g.id)
        return tuple(out)

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

    @staticmethod
    def elliptical(text: str, found: Mapping[str, Any]) -> bool:
        return _elliptical(text, found)

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
            and (s.required or s.regex or s.extractor not in (None, *_COMMON))
        ]
        if not telling or not _elliptical(text, found):
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
