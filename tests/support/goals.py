"""A clock that moves only when a goal test says so, and reading a goal back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from charter.goals.store import GoalStore
from charter.goals.tables import Goal

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def goal(store: GoalStore, goal_id: str) -> Goal:
    found = store.get(goal_id)
    assert found is not None, goal_id
    return found


def status(store: GoalStore, goal_id: str) -> str:
    return goal(store, goal_id).status
