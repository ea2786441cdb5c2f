"""The goal tree as the planner shapes it (step 5 of ``charter.goals.planner``): the open goals a
cancellation or a declined split takes along (descendants, emptied parents), and where new goals
go (``Tree``): under their parent intent's goal, the session's root or a new shared root, never
deeper than ``max_depth``, at most ``max_new_subgoals`` under one parent (the rest merged into an
aggregate goal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from charter.compile.specs import goals as S
from charter.goals.plans import NewGoal, OpenGoal, SessionState
from charter.goals.plans import replace_goal as _replace


def with_empty_parents(ids: list[str], goals: Sequence[OpenGoal]) -> tuple[str, ...]:
    """The goals, and a parent all of whose open children go with them (the root a
    declined split made)."""
    out = list(ids)
    for g in goals:
        kids = [k.id for k in goals if k.parent == g.id]
        if g.id not in out and kids and all(k in out for k in kids):
            out.insert(0, g.id)
    return tuple(out)


def with_descendants(target: OpenGoal, goals: Sequence[OpenGoal]) -> tuple[str, ...]:
    """The goal and its open descendants, in creation order."""
    out, frontier = [target.id], {target.id}
    for g in goals:  # creation order: a descendant comes after its parent
        if g.parent in frontier:
            out.append(g.id)
            frontier.add(g.id)
    return tuple(out)


class Tree:
    """The new goals of one planning (``new``) and the open goals of the session they join."""

    def __init__(
        self, spec: S.GoalsSpec, intents: Mapping[str, S.IntentSpec], state: SessionState
    ) -> None:
        self.spec = spec
        self.intents = intents
        self.state = state
        self.open = {g.id: g for g in state.goals}
        self.new: list[NewGoal] = []

    def depth_of(self, ref: str | None) -> int:
        depth = -1
        seen: set[str] = set()
        while ref is not None and ref not in seen:
            seen.add(ref)
            depth += 1
            mine = next((g for g in self.new if g.ref == ref), None)
            ref = mine.parent if mine else (self.open[ref].parent if ref in self.open else None)
        return depth

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
            theirs = self.intents.get(current.intent)
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
            names = "、".join(self.intents[g.intent].describe for g in merged)
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
