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
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import regex

from charter.compile.build import Builder
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.goals import spec as S
from charter.registry import Registry

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


def _answer(text: str) -> bool | None:
    """True for a yes (是 / 好的，继续 / Y), False for a no (不 / 不用了 / N), else None."""
    words = [w for w in _WORDS.split(text.strip().lower()) if w]
    if words and all(w in _YES for w in words):
        return True
    if words and words[0] in _NO and all(w in _NO or w in _YES for w in words):
        return False
    return None


def _merge(first: Plan, then: Plan) -> Plan:
    """Two plans for one input, in order (a cancellation, then a new request)."""
    return Plan(
        goals=then.goals,
        updates=(*first.updates, *then.updates),
        activate=(*first.activate, *then.activate),
        aborts=(*first.aborts, *then.aborts),
        questions=(*first.questions, *then.questions),
        confirm=then.confirm or first.confirm,
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

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ref": self.ref,
            "intent": self.intent,
            "parent": self.parent,
            "status": self.status,
            "description": self.description,
        }
        for key in ("slots", "inherited", "missing", "members"):
            value = getattr(self, key)
            if value:
                out[key] = dict(value) if isinstance(value, Mapping) else list(value)
        if self.awaiting:
            out["awaiting"] = True
        return out


@dataclass(frozen=True)
class SlotUpdate:
    goal: str
    slot: str
    value: Any


@dataclass(frozen=True)
class Plan:
    goals: tuple[NewGoal, ...] = ()
    updates: tuple[SlotUpdate, ...] = ()
    activate: tuple[str, ...] = ()  # open goals to move pending -> active
    aborts: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    confirm: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The plan with empty parts left out: what planner tests compare."""
        out: dict[str, Any] = {}
        if self.goals:
            out["goals"] = [g.as_dict() for g in self.goals]
        if self.updates:
            out["updates"] = [
                {"goal": u.goal, "slot": u.slot, "value": u.value} for u in self.updates
            ]
        for key in ("activate", "aborts", "questions"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.confirm:
            out["confirm"] = self.confirm
        return out


def slot_value(value: Any, now: datetime, written: str = "") -> Any:
    """An extractor's item value as plain JSON: dates ISO (a partial date as far as it is
    known: ``--01-10``, ``2024-05``), amounts as decimal text, a time expression resolved
    against ``now`` (a day, a range of days, or a range of times); anything else (an address)
    as written."""
    if hasattr(value, "resolve"):
        span = value.resolve(now)
        start, end = span.start, span.end
        midnight = start.time() == end.time() == datetime.min.time()
        if midnight and end - start == timedelta(days=1):
            return start.date().isoformat()
        if midnight:
            return f"{start.date().isoformat()}/{(end - timedelta(days=1)).date().isoformat()}"
        return f"{start:%Y-%m-%dT%H:%M}/{end:%Y-%m-%dT%H:%M}"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tuple) and len(value) == 3:  # a partial date: (year, month, day)
        year, month, day = value
        if year is None and month is not None and day is not None:
            return f"--{month:02d}-{day:02d}"
        if year is not None and month is not None:
            return f"{year:04d}-{month:02d}"
    if isinstance(value, str | int | float | bool):
        return value
    return written or str(value)


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
        self.patterns = {
            (i.id, s.name): regex.compile(s.regex, regex.V1)
            for i in spec.intents
            for s in i.slots
            if s.regex is not None
        }

    # ---- reading slots ----------------------------------------------------------------------

    def values(
        self,
        intent: S.IntentSpec,
        text: str,
        now: datetime,
        preset: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for slot in intent.slots:
            got = self._slot(intent.id, slot, text, now)
            if got:
                found[slot.name] = got if slot.multiple else got[0]
        if preset:
            found.update(preset.get(intent.id, {}))
        return found

    def _slot(self, iid: str, slot: S.SlotSpec, text: str, now: datetime) -> list[Any]:
        raw: list[Any] = []
        if slot.regex is not None:
            pattern = self.patterns[(iid, slot.name)]
            for m in pattern.finditer(text):
                if "value" in pattern.groupindex:
                    raw.append(m.group("value"))
                else:
                    raw.append(m.group(1) if pattern.groups else m.group(0))
        elif slot.extractor is not None and slot.extractor in self.extractors:
            items = self.extractors[slot.extractor].extract(text)
            raw = [slot_value(item.value, now, item.text) for item in items]
        out: list[Any] = []
        for value in raw:
            if value is None or value == "":
                continue
            if slot.type == "number":
                try:
                    value = format(Decimal(str(value).replace(",", "")).normalize(), "f")
                except InvalidOperation:
                    continue
            if value not in out:
                out.append(value)
        return out

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
            asks = tuple(q for g in awaiting if g.missing and (q := self._ask(g.intent, g.missing)))
            return Plan(activate=ready, questions=asks)
        if awaiting and (answer is False or self.cancel(env)):
            return Plan(aborts=self._with_empty_parents([g.id for g in awaiting], goals))
        aborts: tuple[str, ...] = ()
        if goals and self.cancel(env):
            aborts = self._cancelled(env, goals)
            # what is left of the input may still be a new request (算了，帮我转账...)
            state = SessionState(
                tuple(g for g in goals if g.id not in aborts), state.now, state.preset
            )
            built = _Build(self, env, text, state, skip={self._goal(goals, a) for a in aborts})
            return _merge(Plan(aborts=aborts), built.plan(new_only=True))
        fixed = Plan()
        if goals and self.correct(env):
            fixed = self._corrections(text, goals, state.now, state.preset)
        updated = {u.goal for u in fixed.updates}
        rest = _Build(
            self, env, text, state, skip_goals=updated, consumed=[u.value for u in fixed.updates]
        ).plan(new_only=bool(updated))
        return _merge(fixed, rest)

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

    def _ask(self, intent_id: str, missing: Sequence[str]) -> str:
        intent = self.intents.get(intent_id)
        slot = intent.slot(missing[0]) if intent and missing else None
        return slot.ask if slot else ""

    def _cancelled(self, env: Env, goals: list[OpenGoal]) -> tuple[str, ...]:
        # named by the intent's own words, not its whole trigger: a registration trigger that
        # excludes 取消 must still let 取消预约 name the registration
        hits = env.hits("input", env.input)
        ids = self.table.ids

        def named(g: OpenGoal) -> bool:
            intent = self.intents.get(g.intent)
            return intent is not None and any(ids[w] in hits for w in intent.literals if w in ids)

        target = ([g for g in goals if named(g)] or goals)[-1]
        out, frontier = [target.id], {target.id}
        for g in goals:  # creation order: a descendant comes after its parent
            if g.parent in frontier:
                out.append(g.id)
                frontier.add(g.id)
        return tuple(out)

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
        updates = tuple(SlotUpdate(goal.id, k, v) for k, v in found.items())
        still = [m for m in goal.missing if m not in found]
        ready = (goal.id,) if goal.status == "pending" and not still else ()
        asks = (self._ask(goal.intent, still),) if still else ()
        return Plan(updates=updates, activate=ready, questions=tuple(a for a in asks if a))


class _Build:
    """One planning of new goals (step 4-6 of the module docstring)."""

    def __init__(
        self,
        planner: Planner,
        env: Env,
        text: str,
        state: SessionState,
        skip: set[str] | None = None,
        skip_goals: set[str] | None = None,
        consumed: Sequence[Any] = (),
    ) -> None:
        self.p = planner
        self.env = env
        self.text = text
        self.state = state
        self.spec = planner.spec
        self.open = {g.id: g for g in state.goals}
        self.new: list[NewGoal] = []
        self.skip = skip or set()  # intents the input was about already (cancelled ones)
        self.skip_goals = skip_goals or set()  # goals a correction already updated
        self.consumed = list(consumed)  # values a correction applied: not a new request's

    def depth_of(self, ref: str | None) -> int:
        depth = -1
        seen: set[str] = set()
        while ref is not None and ref not in seen:
            seen.add(ref)
            depth += 1
            mine = next((g for g in self.new if g.ref == ref), None)
            ref = mine.parent if mine else (self.open[ref].parent if ref in self.open else None)
        return depth

    def plan(self, new_only: bool = False) -> Plan:
        """``new_only``: the input already did something to open goals (a cancellation or a
        correction); only intents without an open goal may still open new ones."""
        p, spec = self.p, self.spec
        matched = [i for i in spec.intents if i.id not in self.skip and p.triggers[i.id](self.env)]
        if not matched:
            return Plan() if new_only else self.answers()
        where = {i.id: p._positions(self.env, i) for i in matched}
        order = {i.id: n for n, i in enumerate(spec.intents)}
        matched.sort(key=lambda i: (where[i.id][0] if where[i.id] else len(self.text), order[i.id]))
        segments = p._segments(self.text, [(i.id, where[i.id]) for i in matched])
        updates: list[SlotUpdate] = []
        self.activate: list[str] = []
        self.asks: list[str] = []
        fresh: list[tuple[S.IntentSpec, dict[str, Any]]] = []
        for intent in matched:
            found = p.values(intent, segments[intent.id], self.state.now, self.state.preset)
            existing = [g for g in self.state.goals if g.intent == intent.id]
            goal = existing[-1] if existing else None
            if goal is not None and (new_only or goal.id in self.skip_goals):
                continue
            if goal is None or self._another(goal, found):
                if not (found and all(v in self.consumed for v in found.values())):
                    fresh.append((intent, found))
                continue
            changed = {k: v for k, v in found.items() if goal.slots.get(k) != v}
            updates += [SlotUpdate(goal.id, k, v) for k, v in changed.items()]
            still = [m for m in goal.missing if m not in found]
            if goal.status == "pending" and goal.missing and not still:
                self.activate.append(goal.id)
            elif still and changed:
                self.asks.append(p._ask(goal.intent, still))
        self.place(fresh)
        self.limit()
        questions = self.finish()
        confirm = None
        real = [g for g in self.new if g.intent != S.ROOT_INTENT]
        if spec.confirm_split_over is not None and len(real) > spec.confirm_split_over:
            names = "、".join(g.description for g in real)
            confirm = f"检测到您可能需要同时处理{len(real)}件事：{names}，是否继续？（Y/N）"
            self.new = [
                _replace(g, status="pending", awaiting=True) if g.intent != S.ROOT_INTENT else g
                for g in self.new
            ]
            questions = []
        return Plan(
            goals=tuple(self.new),
            updates=tuple(updates),
            activate=tuple(self.activate),
            questions=tuple(q for q in [*self.asks, *questions] if q),
            confirm=confirm,
        )

    @staticmethod
    def _another(goal: OpenGoal, found: Mapping[str, Any]) -> bool:
        """Is this a second request of the same intent (再给李四转账) rather than more about the
        open one? Yes when the open goal is complete and the input gives another value for a
        slot it has."""
        if goal.status != "active" or goal.missing:
            return False
        return any(goal.slots.get(k) not in (None, v) for k, v in found.items())

    def answers(self) -> Plan:
        """No intent: the input may answer the question of the latest pending goal."""
        for goal in reversed(self.state.goals):
            intent = self.p.intents.get(goal.intent)
            if goal.status != "pending" or not goal.missing or intent is None:
                continue
            found = {
                k: v
                for k, v in self.p.values(
                    intent, self.text, self.state.now, self.state.preset
                ).items()
                if k in goal.missing
            }
            if not found:
                return Plan()
            still = [m for m in goal.missing if m not in found]
            return Plan(
                updates=tuple(SlotUpdate(goal.id, k, v) for k, v in found.items()),
                activate=() if still else (goal.id,),
                questions=(self.p._ask(goal.intent, still),) if still else (),
            )
        return Plan()

    def _ref(self) -> str:
        return f"n{len(self.new) + 1}"

    def _goal(self, intent: S.IntentSpec, parent: str | None, slots: dict[str, Any]) -> NewGoal:
        return NewGoal(
            ref=self._ref(),
            intent=intent.id,
            parent=parent,
            depth=self.depth_of(parent) + 1,
            status="active",
            description="",
            timeout_s=intent.timeout_s,
            slots=slots,
        )

    def place(self, fresh: list[tuple[S.IntentSpec, dict[str, Any]]]) -> None:
        """Under their parent intent's goal, else under the session's root when they belong
        there (a root a split made, or a root of their own group), else at the top, sharing a
        new root when several go there."""
        roots = [g for g in self.state.goals if self.depth_of(g.id) == 0]
        current = roots[-1] if roots else None

        def joins(intent: S.IntentSpec) -> bool:
            if current is None:
                return False
            if current.intent == S.ROOT_INTENT:
                return True
            theirs = self.p.intents.get(current.intent)
            return intent.group is not None and theirs is not None and theirs.group == intent.group

        top = [i for i, _ in fresh if not self._parent_intent(i, fresh)]
        alone = [i for i in top if not joins(i)]
        new_root = None
        if len(alone) > 1:
            groups = {i.group for i in alone}
            shared = groups.pop() if len(groups) == 1 else None
            new_root = self._ref()
            self.new.append(
                NewGoal(
                    new_root,
                    S.ROOT_INTENT,
                    None,
                    0,
                    "active",
                    shared or self.spec.root,
                    self.spec.timeout_s,
                )
            )
        for intent, slots in fresh:
            parent_intent = self._parent_intent(intent, fresh)
            parent = current.id if current is not None and joins(intent) else new_root
            if parent_intent is not None:
                mine = [g.ref for g in self.new if g.intent == parent_intent]
                theirs = [g.id for g in self.state.goals if g.intent == parent_intent]
                parent = mine[-1] if mine else theirs[-1] if theirs else parent
            while parent is not None and self.depth_of(parent) + 1 > self.spec.max_depth:
                parent = self._parent(parent)
            self.new.append(self._goal(intent, parent, slots))

    def _parent_intent(
        self, intent: S.IntentSpec, fresh: list[tuple[S.IntentSpec, dict[str, Any]]]
    ) -> str | None:
        wanted = intent.parent
        if wanted is None:
            return None
        present = any(i.id == wanted for i, _ in fresh) or any(
            g.intent == wanted for g in self.state.goals
        )
        return wanted if present else None

    def _parent(self, ref: str) -> str | None:
        mine = next((g for g in self.new if g.ref == ref), None)
        return mine.parent if mine else (self.open[ref].parent if ref in self.open else None)

    def limit(self) -> None:
        """At most max_new_subgoals new goals under one parent; the rest become one aggregate."""
        cap = self.spec.max_new_subgoals
        by_parent: dict[str | None, list[NewGoal]] = {}
        for g in self.new:
            if g.intent != S.ROOT_INTENT:
                by_parent.setdefault(g.parent, []).append(g)
        for parent, kids in by_parent.items():
            if len(kids) <= cap:
                continue
            merged = kids[cap - 1 :]
            merged_refs = {g.ref for g in merged}
            slots: dict[str, Any] = {}
            for g in merged:
                for k, v in g.slots.items():
                    slots.setdefault(k, v)
            names = "、".join(self.p.intents[g.intent].describe for g in merged)
            aggregate = NewGoal(
                ref=merged[0].ref,
                intent=S.AGGREGATE_INTENT,
                parent=parent,
                depth=merged[0].depth,
                status="active",
                description=f"{self.spec.aggregate}：{names}",
                timeout_s=max(g.timeout_s for g in merged),
                slots=slots,
                members=tuple(g.intent for g in merged),
            )
            kept = []
            for g in self.new:
                if g.ref == merged[0].ref:
                    kept.append(aggregate)
                elif g.ref not in merged_refs:
                    reparent = g.parent in merged_refs
                    kept.append(_replace(g, parent=aggregate.ref) if reparent else g)
            self.new = kept

    def finish(self) -> list[str]:
        """Inherited slots, defaults, missing slots and questions, descriptions; refs renumbered
        in order so that plans read n1, n2, n3."""
        renames = {g.ref: f"n{k + 1}" for k, g in enumerate(self.new)}
        questions: list[str] = []
        done: list[NewGoal] = []
        for g in self.new:
            g = _replace(
                g, ref=renames[g.ref], parent=renames.get(g.parent, g.parent) if g.parent else None
            )
            intent = self.p.intents.get(g.intent)
            if intent is None:
                done.append(g)
                continue
            slots, inherited = dict(g.slots), {}
            for name in intent.inherits:
                if name not in slots and (v := self._inherit(name, g, done)) is not None:
                    inherited[name] = v
            for s in intent.slots:
                if s.name not in slots and s.name not in inherited and s.default is not None:
                    slots[s.name] = s.default
            missing = tuple(
                s.name
                for s in intent.slots
                if s.required and s.name not in slots and s.name not in inherited
            )
            if missing:
                questions.append(self.p._ask(intent.id, missing))
            values = {**inherited, **slots}
            done.append(
                _replace(
                    g,
                    slots=slots,
                    inherited=inherited,
                    missing=missing,
                    status="pending" if missing else "active",
                    description=fill_slots(intent.description, values),
                )
            )
        self.new = done
        return [q for q in questions if q]

    def _inherit(self, name: str, goal: NewGoal, done: list[NewGoal]) -> Any:
        """From the parent (new or open), then earlier new siblings, then the open ancestors."""
        candidates = [g for g in done if g.ref == goal.parent]
        candidates += [g for g in done if g.parent == goal.parent and g.ref != goal.ref]
        for g in candidates:
            merged = {**g.inherited, **g.slots}
            if name in merged:
                return merged[name]
        ref = goal.parent
        while ref is not None and ref in self.open:
            if name in self.open[ref].slots:
                return self.open[ref].slots[name]
            ref = self.open[ref].parent
        for sibling in self.state.goals:
            if sibling.parent == goal.parent and name in sibling.slots:
                return sibling.slots[name]
        return None


def fill_slots(template: str, values: Mapping[str, Any]) -> str:
    def one(m: regex.Match[str]) -> str:
        value = values.get(m.group(1))
        if value is None:
            return "？"
        return "、".join(map(str, value)) if isinstance(value, list) else str(value)

    return regex.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", one, template)


def _replace(goal: NewGoal, **changes: Any) -> NewGoal:
    from dataclasses import replace

    return replace(goal, **changes)


def state_from(goals: Sequence[Mapping[str, Any]], now: str) -> SessionState:
    """A session state written as in a planner test: open goals as mappings, an ISO clock."""
    return SessionState(
        goals=tuple(
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
        ),
        now=datetime.fromisoformat(now),
    )


def plan_case(planner: Planner, case: S.GoalCase) -> dict[str, Any]:
    """The plan of a planner test, as the dict the test compares."""
    return planner.plan(case.input, state_from(case.goals, case.now)).as_dict()
