"""The slots of new goals, once placed (the end of step 4 of ``charter.goals.planner``): values
inherited from the parent, siblings and open ancestors; ``carry:`` slots from an earlier request
of the same input, else the session's goals or the user's remembered facts; defaults; the
required slots still missing and the question for the first; descriptions; refs renumbered n1,
n2, n3 in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from charter.goals.plans import Ask, NewGoal, OpenGoal, SessionState
from charter.goals.plans import replace_goal as _replace

if TYPE_CHECKING:
    from charter.goals.planner import Planner


def complete(
    planner: Planner, new: Sequence[NewGoal], state: SessionState
) -> tuple[list[NewGoal], list[Ask]]:
    """The new goals with inherited slots, defaults, missing slots and descriptions, refs
    renumbered in order so that plans read n1, n2, n3; and the questions they ask."""
    open_ = {g.id: g for g in state.goals}
    renames = {g.ref: f"n{k + 1}" for k, g in enumerate(new)}
    stated = [dict(g.slots) for g in new]  # what this input said for each new goal
    questions: list[Ask] = []
    done: list[NewGoal] = []
    for k, g in enumerate(new):
        g = _replace(
            g, ref=renames[g.ref], parent=renames.get(g.parent, g.parent) if g.parent else None
        )
        intent = planner.intents.get(g.intent)
        if intent is None:
            done.append(g)
            continue
        slots, inherited = dict(g.slots), {}
        for name in intent.inherits:
            if name not in slots and (v := _inherit(name, g, done, state, open_)) is not None:
                inherited[name] = v
        carried: dict[str, Any] = {}
        remembered: list[str] = []
        for s in intent.slots:
            if s.carry is None or s.name in slots or s.name in inherited:
                continue
            # the other context slots (carry:) the new goal holds: what a source must share
            here = _stated(s.name, k, stated)
            if here is not None:
                slots[s.name] = here  # said in this input: it beats the session and memory
                continue
            values = {**inherited, **carried, **slots}
            held = {c.name: values[c.name] for c in intent.slots if c.carry and c.name in values}
            got = _carry(s.name, s.carry, held, state)
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
        if missing and (ask := planner._ask(intent.id, missing, g.ref)):
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
                description=planner.describe(intent.description, values),
                awaiting=confirm,
            )
        )
    return done, questions


def _stated(name: str, k: int, stated: Sequence[Mapping[str, Any]]) -> Any:
    """The value an earlier request of this input was given for ``name``, the nearest first
    (查一下18612345678的话费，顺便把套餐换成99元 changes the plan of 18612345678, not of the
    number an earlier turn named). A later one's is its own (快递到哪了？另外订单…要退货 does
    not say which parcel)."""
    for j in range(k - 1, -1, -1):
        value = stated[j].get(name)
        if value not in (None, "", []):
            return value
    return None


def _carry(
    name: str, mode: str, held: Mapping[str, Any], state: SessionState
) -> tuple[Any, str] | None:
    """A ``carry:`` slot's value: from the session's open goals, then its completed ones
    (the latest first), then — ``memory`` — the user's remembered facts. Only a goal that
    agrees with what the new goal already ``held`` counts (the coupon of the order whose
    number was carried or given, not of another order; ``held``: the new goal's other
    ``carry:`` slots), and the first that agrees and kept the slot decides, empty or not:
    an order without a coupon has none to carry."""
    for goal in (*reversed(state.goals), *state.recent):
        if any(
            goal.slots.get(k) not in (None, "", []) and goal.slots.get(k) != v
            for k, v in held.items()
        ):
            continue
        if name not in goal.slots:
            continue
        value = goal.slots.get(name)
        return (value, "session") if value not in (None, "", []) else None
    value = state.remembered.get(name) if mode == "memory" else None
    if value not in (None, "", []):
        return value, "memory"
    return None


def _inherit(
    name: str,
    goal: NewGoal,
    done: list[NewGoal],
    state: SessionState,
    open_: Mapping[str, OpenGoal],
) -> Any:
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
    for sibling in state.recent if goal.parent in open_ else ():
        if sibling.parent == goal.parent and name in sibling.slots:
            return sibling.slots[name]
    ref = goal.parent
    while ref is not None and ref in open_:
        if name in open_[ref].slots:
            return open_[ref].slots[name]
        ref = open_[ref].parent
    # an open sibling under the same parent; a goal of its own (no parent) has none: an
    # unrelated open request (a lookup left open by an outage) is not its context
    for sibling in state.goals if goal.parent is not None else ():
        if sibling.parent == goal.parent and name in sibling.slots:
            return sibling.slots[name]
    return None
