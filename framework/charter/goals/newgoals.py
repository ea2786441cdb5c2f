"""Planning new goals (steps 4-6 of ``charter.goals.planner``): the intents an input matches,
in the order their words come, each read from its own clauses; placed under their parent, the
session's root or a new root; limited to ``max_new_subgoals`` per parent (the rest merged into
an aggregate); completed with inherited slots, defaults, missing slots and descriptions; an
input with no intent may answer the latest pending goal's question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from charter.compile.env import Env
from charter.goals import spec as S
from charter.goals.plans import Ask, NewGoal, OpenGoal, Plan, SessionState, SlotUpdate
from charter.goals.plans import replace_goal as _replace

if TYPE_CHECKING:
    from charter.goals.planner import Planner


class Build:
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
            if new_only:
                return Plan()
            answered = self.answers()
            return answered if answered != Plan() else p.follow_up(self.text, self.state)
        if not new_only:
            # 订单DD202405070007 while a return asks for its order number: the input is the
            # answer (its value and a word), not a new order query
            answered = self.answers()
            ids = {i.id for i in matched}
            target = answered.updates[0].goal if answered.updates else None
            if (
                target is not None
                and self.open[target].intent not in ids
                and p.elliptical(self.text, {u.slot: u.value for u in answered.updates})
            ):
                return answered
        where = {i.id: p._positions(self.env, i) for i in matched}
        order = {i.id: n for n, i in enumerate(spec.intents)}
        matched.sort(key=lambda i: (where[i.id][0] if where[i.id] else len(self.text), order[i.id]))
        segments = p._segments(self.text, [(i.id, where[i.id]) for i in matched])
        updates: list[SlotUpdate] = []
        self.activate: list[str] = []
        self.awaits: list[str] = []
        self.mentions: list[str] = []
        self.asks: list[Ask] = []
        fresh: list[tuple[S.IntentSpec, dict[str, Any]]] = []
        for intent in matched:
            found = p.values(intent, segments[intent.id], self.state.now, self.state.preset)
            existing = [g for g in self.state.goals if g.intent == intent.id]
            goal = existing[-1] if existing else None
            if goal is not None and (new_only or goal.id in self.skip_goals):
                continue
            if goal is None or self._another(goal, found):
                if not (found and all(v in self.consumed for v in found.values())):
                    fresh += [(intent, f) for f in self.requests(intent, found, where, matched)]
                continue
            changed = {k: v for k, v in found.items() if goal.slots.get(k) != v}
            if not changed:
                self.mentions.append(goal.id)
            updates += [SlotUpdate(goal.id, k, v, goal.slots.get(k)) for k, v in changed.items()]
            still = [m for m in goal.missing if m not in found]
            confirming = p.confirms(goal.intent)
            if goal.status == "pending" and goal.missing and not still:
                (self.awaits if confirming else self.activate).append(goal.id)
            elif changed and confirming and goal.awaiting:
                self.awaits.append(goal.id)  # asked again, with the new values
            elif still and changed and (ask := p._ask(goal.intent, still, goal.id)):
                self.asks.append(ask)
        self.place(fresh)
        self.limit()
        new_asks = self.finish()
        confirm = None
        real = [g for g in self.new if g.intent != S.ROOT_INTENT]
        if spec.confirm_split_over is not None and len(real) > spec.confirm_split_over:
            names = "、".join(g.description for g in real)
            confirm = f"检测到您可能需要同时处理{len(real)}件事：{names}，是否继续？（Y/N）"
            self.new = [
                _replace(g, status="pending", awaiting=True) if g.intent != S.ROOT_INTENT else g
                for g in self.new
            ]
            new_asks = []
        asks = (*self.asks, *new_asks)
        return Plan(
            goals=tuple(self.new),
            updates=tuple(updates),
            activate=tuple(self.activate),
            questions=tuple(a.text for a in asks),
            confirm=confirm,
            asks=asks,
            awaits=tuple(self.awaits),
            mentions=tuple(self.mentions),
        )

    def requests(
        self,
        intent: S.IntentSpec,
        found: dict[str, Any],
        where: Mapping[str, Sequence[int]],
        matched: Sequence[S.IntentSpec],
    ) -> list[dict[str, Any]]:
        """One request of the intent, or several when the input says it in several clauses
        with different values (给张三转账5000元，再给李四转账2000元: two transfers, not one)."""
        clauses = self.p._clauses(self.text)
        mine = [
            [pos for pos in where[intent.id] if s <= pos < e]
            for s, e in clauses
            if any(s <= pos < e for pos in where[intent.id])
        ]
        if len(mine) < 2:
            return [found]
        others = [(i.id, where[i.id]) for i in matched if i.id != intent.id]
        parts = [(f"{intent.id}#{k}", ps) for k, ps in enumerate(mine)]
        segments = self.p._segments(self.text, [*parts, *others])
        now, preset = self.state.now, self.state.preset
        each = [self.p.values(intent, segments[ref], now, preset) for ref, _ in parts]
        single = {s.name for s in intent.slots if not s.multiple}
        differ = any(len({repr(f[name]) for f in each if name in f}) > 1 for name in single)
        return [f for f in each if f] if differ else [found]

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
            confirm = self.p.confirms(goal.intent)
            ask = self.p._ask(goal.intent, still, goal.id) if still else None
            return Plan(
                updates=tuple(SlotUpdate(goal.id, k, v) for k, v in found.items()),
                activate=() if still or confirm else (goal.id,),
                awaits=(goal.id,) if not still and confirm else (),
                questions=(ask.text,) if ask else (),
                asks=(ask,) if ask else (),
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

    def finish(self) -> list[Ask]:
        """Inherited slots, defaults, missing slots and questions, descriptions; refs renumbered
        in order so that plans read n1, n2, n3."""
        renames = {g.ref: f"n{k + 1}" for k, g in enumerate(self.new)}
        questions: list[Ask] = []
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
            carried: dict[str, Any] = {}
            remembered: list[str] = []
            for s in intent.slots:
                if s.carry is None or s.name in slots or s.name in inherited:
                    continue
                # the other context slots (carry:) the new goal holds: what a source must share
                values = {**inherited, **carried, **slots}
                held = {
                    c.name: values[c.name] for c in intent.slots if c.carry and c.name in values
                }
                got = self._carry(s.name, s.carry, held)
                if got is not None:
                    carried[s.name] = got[0]
                    if got[1] == "memory":
                        remembered.append(s.name)
            for s in intent.slots:
                given = s.name in slots or s.name in inherited or s.name in carried
                if not given and s.default is not None:
                    slots[s.name] = s.default
            missing = tuple(
                s.name
                for s in intent.slots
                if s.required
                and s.name not in slots
                and s.name not in inherited
                and s.name not in carried
            )
            if missing and (ask := self.p._ask(intent.id, missing, g.ref)):
                questions.append(ask)
            values = {**inherited, **carried, **slots}
            confirm = intent.confirm and not missing
            done.append(
                _replace(
                    g,
                    slots=slots,
                    inherited=inherited,
                    carried=carried,
                    remembered=tuple(remembered),
                    missing=missing,
                    status="pending" if missing or confirm else "active",
                    description=self.p.describe(intent.description, values),
                    awaiting=confirm,
                )
            )
        self.new = done
        return questions

    def _carry(self, name: str, mode: str, held: Mapping[str, Any]) -> tuple[Any, str] | None:
        """A ``carry:`` slot's value: from the session's open goals, then its completed ones
        (the latest first), then — ``memory`` — the user's remembered facts. Only a goal that
        agrees with what the new goal already ``held`` counts (the coupon of the order whose
        number was carried or given, not of another order; ``held``: the new goal's other
        ``carry:`` slots), and the first that agrees and kept the slot decides, empty or not:
        an order without a coupon has none to carry."""
        for goal in (*reversed(self.state.goals), *self.state.recent):
            if any(
                goal.slots.get(k) not in (None, "", []) and goal.slots.get(k) != v
                for k, v in held.items()
            ):
                continue
            if name not in goal.slots:
                continue
            value = goal.slots.get(name)
            return (value, "session") if value not in (None, "", []) else None
        value = self.state.remembered.get(name) if mode == "memory" else None
        if value not in (None, "", []):
            return value, "memory"
        return None

    def _inherit(self, name: str, goal: NewGoal, done: list[NewGoal]) -> Any:
        """From the parent (new or open), then earlier new siblings, then finished siblings
        under an open parent, then the open ancestors."""
        candidates = [g for g in done if g.ref == goal.parent]
        candidates += [g for g in done if g.parent == goal.parent and g.ref != goal.ref]
        for g in candidates:
            merged = {**g.inherited, **g.slots}
            if name in merged:
                return merged[name]
        # a finished sub-goal of the same parent, latest first: its result is the parent's
        # context now (seed 000 §3.3: 子目标完成时结果注入父目标) — the order looked up since
        for sibling in self.state.recent if goal.parent in self.open else ():
            if sibling.parent == goal.parent and name in sibling.slots:
                return sibling.slots[name]
        ref = goal.parent
        while ref is not None and ref in self.open:
            if name in self.open[ref].slots:
                return self.open[ref].slots[name]
            ref = self.open[ref].parent
        # an open sibling under the same parent; a goal of its own (no parent) has none: an
        # unrelated open request (a lookup left open by an outage) is not its context
        for sibling in self.state.goals if goal.parent is not None else ():
            if sibling.parent == goal.parent and name in sibling.slots:
                return sibling.slots[name]
        return None
