"""One turn's state, loaded once and passed forward through the steps (``charter.agent.loop``).

What the turn reads of the session before it changes anything — the short-term window of its
earlier turns — is read here, once; each step then takes what it needs from this value and
adds what it found, and no step goes back to a store for what an earlier step already read
(``tests/unit/agent/test_turn_reads.py`` counts the reads of a conversation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from charter.agent.answer import Drafts
from charter.agent.steps import Planned
from charter.learn.apply import NOTHING, Patched
from charter.memory.records import Accessor
from charter.memory.short_term import ShortTermMemory
from charter.memory.short_term import Turn as Said
from charter.traces.recorder import TraceRecorder

if TYPE_CHECKING:
    from charter.agent.calls import Called
    from charter.agent.reply import Reply
    from charter.agent.steps import Recalled
    from charter.compose.composer import Composed
    from charter.memory.working import WorkingMemory
    from charter.skills.fallback import CallContext

T = TypeVar("T")


@dataclass
class Turn:
    """The user's input, the session it continues, and what each step found, in step order."""

    user_id: str
    session_id: str
    text: str
    accessor: Accessor
    rec: TraceRecorder
    context: Mapping[str, Any] | None = None
    # the session's short-term window before this turn, oldest first
    earlier: tuple[Said, ...] = ()
    # the window once this turn is recorded (the memory step); ``earlier`` until then
    recorded: tuple[Said, ...] | None = None
    # how many short-term windows the turn may keep (memory.yaml's short_term.turns)
    window: int = 0
    # the steps' findings, each set once by its step (charter.agent.pipeline)
    negations: int = 0
    patched: Patched = NOTHING
    working: WorkingMemory | None = None
    planned: Planned = field(default_factory=lambda: Planned(None))
    recalled: Recalled | None = None
    ctx: CallContext | None = None
    handoff: str | None = None
    # tickets opened for safety goals that call a person (goal id -> ticket)
    tickets: dict[str, str] = field(default_factory=dict)
    called: list[Called] = field(default_factory=list)
    composed: Composed | None = None
    drafts: Drafts = field(default_factory=Drafts)
    rephrased: str | None = None  # the model's rewording, kept (rephrase mode)
    reply: Reply | None = None

    @classmethod
    def load(
        cls,
        short_term: ShortTermMemory,
        accessor: Accessor,
        rec: TraceRecorder,
        session_id: str,
        text: str,
        context: Mapping[str, Any] | None = None,
    ) -> Turn:
        return cls(
            accessor.user_id,
            session_id,
            text,
            accessor,
            rec,
            context,
            tuple(short_term.turns(accessor.user_id, session_id)),
            window=short_term.policy.short_term_turns,
        )

    @property
    def number(self) -> int:
        """How many turns of the session the short-term window held before this one."""
        return len(self.earlier)

    def record(self, said: Said) -> None:
        """This turn as the short-term store kept it: the window slides as the store's did."""
        self.recorded = (*self.earlier, said)[-self.window :] if self.window else (said,)

    @property
    def window_now(self) -> tuple[Said, ...]:
        """The short-term window as it is now (with this turn once recorded)."""
        return self.earlier if self.recorded is None else self.recorded

    # what a step found, for the steps after it: asking before that step ran is a bug of the
    # pipeline's order, said as such

    @property
    def memory(self) -> Recalled:
        return _ran(self.recalled, "recall")

    @property
    def call_context(self) -> CallContext:
        return _ran(self.ctx, "recall")

    @property
    def told(self) -> Composed:
        return _ran(self.composed, "compose")

    @property
    def answered(self) -> Reply:
        return _ran(self.reply, "answer")


def _ran(value: T | None, step: str) -> T:
    if value is None:
        raise RuntimeError(f"the step '{step}' has not run yet in this turn")
    return value
