"""What a pack's intent test table (``tests/intents.yaml``) compiles to: one ``IntentPhrase``
per phrase, checked against the pack's intents (``charter.compile.intent_tests``). ``charter
test`` measures understanding on them (``charter.conversations.understanding``). Immutable and
picklable: they travel inside the cached CompiledPack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from charter.diagnostics import Location

ACTS = ("affirm", "deny", "cancel", "correct", "answer", "other")
PENDING = ("confirm", "question")
NONE = "none"  # ``intent: none``: no intent handles it (out of scope)


@dataclass(frozen=True)
class IntentPhrase:
    """A phrase and how it must be understood: ``intent`` None is "no intent" (``none``) when
    ``checks_intent``; ``pending`` the state it is said in (None: an empty session), ``of``
    whose request is pending."""

    say: str
    intent: str | None
    act: str | None
    pending: str | None
    slots_json: str  # expected slot values, {slot: text}, as JSON
    location: Location
    checks_intent: bool = True  # the phrase names an intent (or none): its decision is scored
    of: str | None = None  # the intent whose confirmation or question is pending (None: the
    # pack's first that confirms, or the first with a required slot)

    @property
    def slots(self) -> dict[str, str]:
        value: dict[str, Any] = json.loads(self.slots_json)
        return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class IntentTable:
    """A pack's intent table as one test case of ``charter test`` (its JUnit test case)."""

    name: str
    location: Location
