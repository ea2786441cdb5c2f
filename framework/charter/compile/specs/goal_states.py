"""The goal state machine: statuses, the one table of allowed transitions, who moves a goal.

Every status change in Charter goes through this table (ARCHITECTURE §6, seed 000 §3.3.2):

    pending   -> active | aborted
    active    -> completed | aborted | pending      (pending: back off, e.g. a slot was lost)
    completed -> aborted                            (a completed goal revoked by the user)
    aborted   -> (nothing: final)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Status = Literal["pending", "active", "completed", "aborted"]
STATUSES: tuple[Status, ...] = ("pending", "active", "completed", "aborted")
Kind = Literal["root", "sub", "leaf"]  # depth 0, 1, 2
Actor = Literal["user", "agent", "sweeper"]
ACTORS: tuple[Actor, ...] = ("user", "agent", "sweeper")

TRANSITIONS: Mapping[Status, frozenset[Status]] = {
    "pending": frozenset({"active", "aborted"}),
    "active": frozenset({"completed", "aborted", "pending"}),
    "completed": frozenset({"aborted"}),
    "aborted": frozenset(),
}


def allowed(from_status: str, to_status: str) -> bool:
    return to_status in TRANSITIONS.get(from_status, frozenset())  # type: ignore[call-overload]


def kind_at(depth: int) -> Kind:
    return "root" if depth == 0 else "sub" if depth == 1 else "leaf"
