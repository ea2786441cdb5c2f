"""Planning new goals (steps 4-6 of ``charter.goals.planner``): the intents an input matches,
in the order their words come, each read from its own clauses (``charter.goals.segments``);
placed under their parent, the
session's root or a new root; limited to ``max_new_subgoals`` per parent (the rest merged into
an aggregate, ``charter.goals.tree``); completed with inherited slots, defaults, missing slots
and descriptions (``charter.goals.slots``); an input with no intent may answer the latest
pending goal's question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import regex

from charter.compile.env import Env
from charter.compile.specs import goals as S
from charter.goals import hearing
from charter.goals.acts import is_question
from charter.goals.plans import Ask, OpenGoal, Plan, SessionState, SlotUpdate
from charter.goals.plans import replace_goal as _replace
from charter.goals.segments import clauses, positions, segments
from charter.goals.shapes import elliptical
from charter.goals.slots import complete
from charter.goals.tree import Tree

# an answer that is only a value: at most this long, letters, digits and a few separators
_BARE = 24
_VALUE = regex.compile(r"[0-9A-Za-z][0-9A-Za-z .\-]*")

if TYPE_CHECKING:
    from charter.goals.planner import Planner


class Build(Tree):
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
        forced: Sequence[str] = (),
    ) -> None:
        super().__init__(planner.spec, planner.intents, state)
        self.p = planner
        self.env = env
        self.text = text
        self.skip = skip or set()  # intents the input was about already (cancelled ones)
        self.skip_goals = skip_goals or set()  # goals a correction already updated
        self.consumed = list(consumed)  # values a correction applied: not a new request's
        # intents decided before the triggers (by the examples, or a clarifying answer)
        self.forced = tuple(forced)

    def plan(self, new_only: bool = False) -> Plan:
        """``new_only``: the input already did something to open goals (a cancellation or a
        correction); only intents without an open goal may still open new ones."""
        p, spec = self.p, self.spec
        if self.forced:
            matched = [p.intents[i] for i in self.forced if i in p.intents]
        else:
            matched = [
                i
                for i in spec.intents
                if i.id not in self.skip and not i.safety and p.triggers[i.id](self.env)
            ]
            if matched and not new_only:
                matched = hearing.asked_about(p, self.text, self.state, matched)
        if not matched:
            if new_only:
                return Plan()
            answered = self.answers()
            if answered != Plan():
                return replace(answered, layer="answer")
            again = p.follow_up(self.text, self.state)
            if again != Plan():
                return again
            return p.by_examples(self.env, self.text, self.state)
        if not new_only and not self.forced:
            # 订单DD202405070007 while a return asks for its order number: the input is the
            # answer (its value and a word), not a new order query; so is 订单DD…退了吧, which
            # names only the request's parent (the order the return is of) beside the value and
            # asks nothing of it
            answered = self.answers()
            ids = {i.id for i in matched}
            target = answered.updates[0].goal if answered.updates else None
            if (
                target is not None
                and self.open[target].intent not in ids
                and (
                    elliptical(self.text, {u.slot: u.value for u in answered.updates})
                    or (
                        ids <= self._ancestors(self.open[target].intent)
                        and not is_question(self.text)  # 订单…现在什么状态 asks of the order
                    )
                )
            ):
                return answered
        where = {i.id: positions(self.env, i, p.table.ids) for i in matched}
        order = {i.id: n for n, i in enumerate(spec.intents)}
        matched.sort(key=lambda i: (where[i.id][0] if where[i.id] else len(self.text), order[i.id]))
        own = segments(self.text, [(i.id, where[i.id]) for i in matched])
        updates: list[SlotUpdate] = []
        self.activate: list[str] = []
        self.awaits: list[str] = []
        self.mentions: list[str] = []
        self.asks: list[Ask] = []
        fresh: list[tuple[S.IntentSpec, dict[str, Any]]] = []
        for intent in matched:
            found = p.values(intent, own[intent.id], self.state.now, self.state.preset)
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
            layer="example" if self.forced else "keyword",
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
        spans = clauses(self.text)
        mine = [
            [pos for pos in where[intent.id] if s <= pos < e]
            for s, e in spans
            if any(s <= pos < e for pos in where[intent.id])
        ]
        if len(mine) < 2:
            return [found]
        others = [(i.id, where[i.id]) for i in matched if i.id != intent.id]
        parts = [(f"{intent.id}#{k}", ps) for k, ps in enumerate(mine)]
        own = segments(self.text, [*parts, *others])
        now, preset = self.state.now, self.state.preset
        each = [self.p.values(intent, own[ref], now, preset) for ref, _ in parts]
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
                found = self._bare(intent, goal.missing[0])
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

    def _ancestors(self, intent_id: str) -> set[str]:
        """The intents ``intent_id`` is a sub-request of (``parent:``), nearest first."""
        out: set[str] = set()
        parent = self.p.intents[intent_id].parent if intent_id in self.p.intents else None
        while parent is not None and parent not in out:
            out.add(parent)
            parent = self.p.intents[parent].parent if parent in self.p.intents else None
        return out

    def _bare(self, intent: S.IntentSpec, name: str) -> dict[str, Any]:
        """A bare value answering the question for slot ``name`` (1234 to 请告诉我卡号后四位):
        read as if the input had said what it is (卡号后四位1234)."""
        slot = intent.slot(name)
        text = self.text.strip()
        if slot is None or not slot.label or len(text) > _BARE or not _VALUE.fullmatch(text):
            return {}
        said = f"{slot.label}{text}"
        found = self.p.values(intent, said, self.state.now, self.state.preset)
        return {name: found[name]} if name in found else {}

    def finish(self) -> list[Ask]:
        """The new goals' slots completed (``charter.goals.slots``); their questions."""
        self.new, questions = complete(self.p, self.new, self.state)
        return questions
