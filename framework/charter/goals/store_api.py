"""What the goal store promises, apart from how it keeps goals: its protocol (what the tracker,
the sweeper and the agent use, and tests fake), the result of a transition, and its error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from charter.compile.specs.goal_states import Actor, Status
from charter.goals.session import SessionGoals
from charter.goals.tables import Goal, HistoryEntry


class GoalNotFound(LookupError):
    """No goal has this id."""


@dataclass(frozen=True)
class TransitionResult:
    """``reason`` says why: the trigger when ``ok``, why nothing changed otherwise."""

    ok: bool
    goal_id: str
    from_status: Status | None
    to_status: str
    reason: str


class GoalStoreProtocol(Protocol):
    def create(
        self,
        intent: str,
        *,
        user_id: str,
        session_id: str,
        parent_id: str | None = None,
        description: str = "",
        slots: Mapping[str, Any] | None = None,
        timeout_s: int | None = None,
        actor: Actor = "agent",
        trigger: str = "created",
        goal_id: str | None = None,
    ) -> Goal: ...
    def transition(
        self,
        goal_id: str,
        to_status: Status,
        *,
        actor: Actor,
        trigger: str,
        expect: Status | None = None,
    ) -> TransitionResult: ...
    def complete(
        self, goal_id: str, result: Mapping[str, Any], *, actor: Actor, trigger: str
    ) -> TransitionResult: ...
    def get(self, goal_id: str) -> Goal | None: ...
    def tree(self, user_id: str, session_id: str | None = None) -> list[Goal]: ...
    def active(self, user_id: str, session_id: str) -> list[Goal]: ...
    def history(self, goal_id: str) -> list[HistoryEntry]: ...
    def set_slots(self, goal_id: str, slots: Mapping[str, Any]) -> dict[str, Any]: ...
    def set_description(self, goal_id: str, description: str) -> None: ...
    def context(self, goal_id: str) -> dict[str, Any]: ...
    def session(self, user_id: str, session_id: str) -> SessionGoals: ...
    def overdue(self, now: datetime) -> list[Goal]: ...
