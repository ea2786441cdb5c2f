"""Conversation tests: a pack's ``tests/conversations/*.yaml`` played through a fresh agent
with a scripted model, a fixed clock and a temporary database, every turn checked
(``charter test`` runs them; the format is in docs/testing.md).

``run_conversations(pack, registry)`` -> ``ConversationResult`` per conversation;
``coverage_of(pack, results)`` -> ``ConversationCoverage``; ``char_diff(want, got)``. The names
are loaded on first use: the diff and the model do not need the agent runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.conversations.coverage import ConversationCoverage, Part, coverage_of
    from charter.conversations.model import TurnModel, Unscripted
    from charter.conversations.runner import (
        TEST_MEMORY_KEY,
        ConversationResult,
        Failure,
        TurnResult,
        run_conversation,
        run_conversations,
    )
    from charter.text.diff import char_diff

_WHERE = {
    "ConversationCoverage": "coverage",
    "Part": "coverage",
    "coverage_of": "coverage",
    "char_diff": "diff",
    "TurnModel": "model",
    "Unscripted": "model",
    "TEST_MEMORY_KEY": "runner",
    "ConversationResult": "runner",
    "Failure": "runner",
    "TurnResult": "runner",
    "run_conversation": "runner",
    "run_conversations": "runner",
}

__all__ = [
    "TEST_MEMORY_KEY",
    "ConversationCoverage",
    "ConversationResult",
    "Failure",
    "Part",
    "TurnModel",
    "TurnResult",
    "Unscripted",
    "char_diff",
    "coverage_of",
    "run_conversation",
    "run_conversations",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'charter.conversations' has no attribute {name!r}")
    return getattr(importlib.import_module(f"charter.conversations.{_WHERE[name]}"), name)
