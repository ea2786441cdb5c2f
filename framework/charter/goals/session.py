"""A session's goals and the slot context of each, read together: the goal rows in one query,
their context rows (and their ancestors') in one more, each goal's context merged in memory the
way ``GoalReads.context`` merges it row by row (root first, inherited under own, nearer over
farther).

A turn reads it where a step starts and works from it, instead of asking the store for the tree
and then for each goal's context — 1 + n queries, each context itself a walk up the parents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from charter.goals.tables import Goal

# the rows of goal_context a snapshot holds: goal id -> (parent id, inherited, own slots)
Rows = Mapping[str, tuple[str | None, Mapping[str, Any], Mapping[str, Any]]]


@dataclass(frozen=True)
class SessionGoals:
    """Every goal of one user's session in creation order, and their contexts."""

    goals: tuple[Goal, ...] = ()
    rows: Rows = field(default_factory=dict)
    open: Callable[[dict[str, Any], str], dict[str, Any]] = lambda slots, user: slots
    user_id: str = ""

    def get(self, goal_id: str) -> Goal | None:
        return next((g for g in self.goals if g.id == goal_id), None)

    def active(self) -> list[Goal]:
        """The active goals, in creation order (``GoalReads.active``)."""
        return [g for g in self.goals if g.status == "active"]

    def context(self, goal_id: str) -> dict[str, Any]:
        """The slots the goal can use (``GoalReads.context``, ``merged``); {} for a goal not
        held here."""
        layers: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
        current: str | None = goal_id
        while current is not None and current in self.rows:
            parent, inherited, slots = self.rows[current]
            layers.append((inherited, slots))
            current = parent
        return self.open(merged(layers), self.user_id)

    def slots(self, goal_id: str) -> dict[str, Any]:
        """The context without the bookkeeping keys (``_awaiting`` ...)."""
        return {k: v for k, v in self.context(goal_id).items() if not k.startswith("_")}


def merged(layers: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any]:
    """A goal's context from its layers, the goal's own first and the root's last: from the
    root down, each goal's inherited slots and then its own, nearer over farther. The
    bookkeeping keys (``_awaiting`` ...) are the goal's own only: a balance query opened under
    a transfer that awaits its yes does not await one."""
    out: dict[str, Any] = {}
    for n, (inherited, slots) in enumerate(reversed(layers), 1):
        own = n == len(layers)
        for layer in (inherited, slots):
            out.update(layer if own else {k: v for k, v in layer.items() if not k.startswith("_")})
    return out
