"""Working memory: the structured scratch space of one turn (ARCHITECTURE §7, seed 000 §2.1).

``session_id``, ``active_context`` {``current_task``, ``user_intent``, ``tool_state``} and
``ephemeral_entities``, bound to the turn that is running through a ``ContextVar``:

* ``with turn("sess-1", current_task="宽带故障诊断") as wm:`` (sync) or
  ``async with aturn(...) as wm:`` (in an asyncio task) opens a turn; ``current()`` returns its
  working memory from anywhere the turn's code calls.
* Each thread and each asyncio task has its own context, so concurrent turns never see each
  other's working memory. ``threading.local`` would not do: asyncio tasks share a thread
  (seed 000 §4.1.3, the "ghost residue" of a request's data in the next one).
* The variable's default is None, not a dict: a mutable default would be one object shared by
  every context, the very leak this module exists to prevent.
* When the turn ends, however it ends, the variable is reset to what it was and the container
  is emptied and closed: a reference kept past the turn (a task still running, a closure) holds
  nothing and ``current()`` refuses it.
* A turn inside a turn is an error (``NestedTurnError``), also in a task started by a turn
  (tasks inherit their creator's context): one turn, one working memory.

Nothing here is ever persisted; what should outlive the turn goes through the write pipeline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


class WorkingMemoryError(RuntimeError):
    """Working memory used outside the turn it belongs to."""


class NoTurnError(WorkingMemoryError):
    """``current()`` called where no turn is running."""


class NestedTurnError(WorkingMemoryError):
    """A turn opened while another one is running in the same context."""


@dataclass
class ActiveContext:
    """The turn's task state: what is being done, what the user wants, tool results."""

    current_task: str | None = None
    user_intent: str | None = None
    tool_state: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkingMemory:
    session_id: str
    active_context: ActiveContext = field(default_factory=ActiveContext)
    ephemeral_entities: list[str] = field(default_factory=list)
    closed: bool = field(default=False, init=False)

    def as_dict(self) -> dict[str, Any]:
        """The container as the prompt or a trace shows it."""
        ctx = self.active_context
        return {
            "session_id": self.session_id,
            "active_context": {
                "current_task": ctx.current_task,
                "user_intent": ctx.user_intent,
                "tool_state": dict(ctx.tool_state),
            },
            "ephemeral_entities": list(self.ephemeral_entities),
        }

    def _close(self) -> None:
        self.active_context = ActiveContext()
        self.ephemeral_entities = []
        self.closed = True


_CURRENT: ContextVar[WorkingMemory | None] = ContextVar("charter_working_memory", default=None)


def current() -> WorkingMemory:
    """The working memory of the running turn; NoTurnError outside one."""
    wm = _CURRENT.get()
    if wm is None or wm.closed:
        raise NoTurnError(
            "no turn is running here: working memory exists only inside "
            "`with turn(session_id):` or `async with aturn(session_id):`"
            + (" (this context's turn has ended)" if wm is not None else "")
        )
    return wm


def in_turn() -> bool:
    wm = _CURRENT.get()
    return wm is not None and not wm.closed


def _open(
    session_id: str,
    current_task: str | None,
    user_intent: str | None,
    tool_state: Mapping[str, Any] | None,
    entities: Iterable[str],
) -> WorkingMemory:
    running = _CURRENT.get()
    if running is not None and not running.closed:
        raise NestedTurnError(
            f"a turn of session {running.session_id!r} is already running in this context; "
            f"turn({session_id!r}) cannot start inside it"
        )
    ctx = ActiveContext(current_task, user_intent, dict(tool_state or {}))
    return WorkingMemory(session_id, ctx, list(entities))


@contextmanager
def turn(
    session_id: str,
    *,
    current_task: str | None = None,
    user_intent: str | None = None,
    tool_state: Mapping[str, Any] | None = None,
    entities: Iterable[str] = (),
) -> Iterator[WorkingMemory]:
    """Run one turn with a fresh working memory (see the module docstring). Enter and leave it
    in the same thread or task: the reset of a ContextVar belongs to the context that set it."""
    wm = _open(session_id, current_task, user_intent, tool_state, entities)
    token = _CURRENT.set(wm)
    try:
        yield wm
    finally:
        wm._close()
        _CURRENT.reset(token)


@asynccontextmanager
async def aturn(
    session_id: str,
    *,
    current_task: str | None = None,
    user_intent: str | None = None,
    tool_state: Mapping[str, Any] | None = None,
    entities: Iterable[str] = (),
) -> AsyncIterator[WorkingMemory]:
    """``turn`` for asyncio code: the working memory is bound to the task that enters it and
    to the tasks that task starts during the turn; other tasks never see it."""
    with turn(
        session_id,
        current_task=current_task,
        user_intent=user_intent,
        tool_state=tool_state,
        entities=entities,
    ) as wm:
        yield wm
