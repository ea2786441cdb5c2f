"""What the lifecycle hooks receive: one frozen event per hook.

An event is a value, not a live object: a plugin can keep it, log it or send it elsewhere without
reaching into the runtime's state. Later versions may add fields (with defaults), never remove
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class GoalTransition:
    """A goal changed status (``pending`` → ``active``, ``active`` → ``completed`` ...)."""

    goal_id: str
    intent: str
    from_status: str | None  # None when the goal was just created
    to_status: str
    actor: str  # "user", "agent" or "sweeper" (charter.compile.specs.goal_states.ACTORS)
    trigger: str  # why: the input that matched, "timeout: active 1800s > 900s", ...
    user_id: str
    session_id: str
    at: datetime


@dataclass(frozen=True)
class MemoryWrite:
    """A memory was written, superseded or forgotten. ``value`` is already redacted by the
    pack's PII policy: plugins never see what the policy keeps out of storage."""

    action: str  # "write", "supersede", "forget", "expire"
    layer: str  # "short_term", "facts", "narrative"
    user_id: str
    key: str
    value: str
    memory_type: str
    confidence: float
    memory_id: str
    at: datetime


@dataclass(frozen=True)
class Reflection:
    """The outcome of checking one answer: the verdict and the three-line reflection record."""

    pack: str
    verdict: str  # pass, fixed, retry, escalate, block
    text: str
    final_text: str
    failed_rules: tuple[str, ...]
    goal_aligned: bool
    constraints_ok: bool
    uncertain: bool
    attempt: int = 1
    trace_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class Fallback:
    """A fallback protocol ran an action (``degrade_to_faq``, ``handoff_human`` ...)."""

    pack: str
    protocol: str
    condition: str
    action: str
    skill: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    user_id: str | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class ReflectionAlert:
    """The model's self-reflection disagreed with the rules too often in a row."""

    pack: str
    reason: str
    consecutive: int
    trace_ids: tuple[str, ...] = ()
    user_id: str | None = None
    session_id: str | None = None
