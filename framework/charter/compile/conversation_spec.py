"""The specs of a pack's scripted conversations (``tests/conversations/*.yaml``): what the
``conversations`` compile stage (``charter.compile.conversations``) builds and what the runtime
side reads — ``charter.conversations`` plays and checks them, ``charter.reflect.testing``
reports them.

Kept apart from the stage so that the readers of a compiled pack see the frozen types, the
words an expectation may use and the two matching rules (a time, a response template id)
without the checks that built them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.diagnostics import Location

VERDICTS: tuple[str, ...] = ("pass", "fixed", "retry", "escalate", "block", "ask")
ANSWERED_BY: tuple[str, ...] = (
    "model",
    "template",
    "escalation",
    "rules",
    "faq",
)
DEFAULT_USER = "u1"
DEFAULT_SESSION = "s1"
DEFAULT_NOW = "2024-05-01T10:00:00+08:00"


@dataclass(frozen=True)
class Expect:
    """What a turn must show; None (or empty for the mappings) checks nothing."""

    reply: str | None = None
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    matches: str | None = None
    responses: tuple[str, ...] | None = None
    events: tuple[str, ...] | None = None
    verdict: str | None = None
    answered_by: str | None = None
    goals: tuple[tuple[str, str], ...] = ()  # (intent, status)
    slots: tuple[tuple[str, str], ...] = ()  # (intent, JSON of the slot values wanted)
    skills: tuple[str, ...] | None = None
    # the skills whose result was given back from the execution ledger, not run again
    replayed: tuple[str, ...] | None = None
    ticket: bool | None = None
    memory: tuple[tuple[str, str], ...] = ()  # (fact key, value)
    model_calls: int | None = None

    def slot_values(self) -> dict[str, dict[str, Any]]:
        return {intent: json.loads(values) for intent, values in self.slots}


@dataclass(frozen=True)
class Turn:
    """One user input. ``session``, ``at`` and ``user_id`` hold from this turn on; ``model``
    (the scripted answers) and ``outage`` only for this turn."""

    text: str
    location: Location
    session: str | None = None
    at: str | None = None
    user_id: str | None = None
    model: tuple[str, ...] | None = None  # None: the conversation's answers
    outage: str | None = None
    expect: Expect = field(default_factory=Expect)


@dataclass(frozen=True)
class Conversation:
    name: str
    location: Location
    user: str = DEFAULT_USER
    session: str = DEFAULT_SESSION
    now: str = DEFAULT_NOW
    model: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 date-time with a UTC offset (``Z`` or ``+08:00``), else None."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def template_matches(want: str, got: str) -> bool:
    """``transfer.asked`` names every variant (``#2``, ``#2.1``) of the entry, ``transfer.asked#2``
    every text of alternative 2; an id with both names one text."""
    if got == want:
        return True
    if "#" not in want:
        return got.startswith(want + "#")
    return "." not in want.split("#", 1)[1] and got.startswith(want + ".")
