"""What a skill plugin implements: the code behind a skill contract (``skills/<name>.yaml``,
ARCHITECTURE §8), checked at registration (``isinstance``) so that a plugin returning the
wrong kind of object is reported by name instead of failing deep inside a turn.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class SkillContext:
    """What a skill may know of the turn that calls it, passed as ``context=`` to a skill whose
    ``__call__`` has a ``context`` parameter (an explicit argument rather than a contextvar:
    the call runs on a worker thread).

    ``now`` is the turn's clock, aware: ``charter chat --now``, a conversation test's ``now:``
    (or its default), a skill case's ``now:``, the Agent's ``clock=``; else the wall clock.
    ``clock_set`` says which: True when the clock was set, False for the wall clock — so a
    demo skill whose data has its own "today" can keep that day unless a test or a demo set
    the clock (a real skill just reads ``now``)."""

    now: datetime
    clock_set: bool = False
    pack: str = ""
    user_id: str = ""
    session_id: str = ""

    @property
    def today(self) -> date:
        """The day of ``now`` at its own UTC offset: the day a test or a demo wrote
        (``2026-01-20T01:00+08:00`` is the 20th wherever the tests run); the wall clock comes
        in the machine's local time."""
        return self.now.date()


@dataclass(frozen=True)
class Refused:
    """A skill's own refusal of arguments its contract admitted (``Skill.refuses``): the
    ``message`` the user is told and the arguments to ask again (``asks``), as a contract
    constraint's ``message`` and ``asks:`` are."""

    message: str
    asks: tuple[str, ...]


@runtime_checkable
class Skill(Protocol):
    """The implementation of a skill contract (``skills/<name>.yaml``) of the same ``name``.

    Charter validates ``args`` against the contract's ``input_schema`` and constraints before the
    call and the result against its ``output_schema`` after it; the call runs with the contract's
    timeout, behind its circuit breaker. Raise to signal failure: the fallback protocol runs.

    A skill that keeps state between calls (a demo ledger numbering its transfers) may also
    define ``fresh() -> Skill``, a new instance in its first state: each conversation test
    (``charter test``) calls it, so the numbers a test pins do not depend on the tests before.

    ``__call__`` may also take ``context: SkillContext`` (keyword; Charter looks at the
    signature once and passes it only to a skill that accepts it): the turn's clock and who
    calls. A skill taking only ``args`` keeps working.

    A skill may also define ``refuses(args, *, context: SkillContext) -> Refused | None``:
    its own check of what the contract cannot know — what holds on the turn's day, in its own
    data (a date before today, a session the schedule does not open). Charter asks it after the
    contract's checks, before the call and before an executing skill's confirmation, and tells
    a refusal as a contract constraint's (``status: invalid``, the goal asking ``asks`` again).
    It must change nothing: it is asked again when the call runs.
    """

    name: str
    description: str

    def __call__(self, args: Mapping[str, Any]) -> Any: ...


def takes_context(skill: Callable[..., Any]) -> bool:
    """Does ``skill`` accept ``context=`` (a ``context`` parameter, or ``**kwargs``)?"""
    try:
        params = inspect.signature(skill).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: args only
        return False
    return any(
        p.kind is p.VAR_KEYWORD
        or (p.name == "context" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in params
    )
