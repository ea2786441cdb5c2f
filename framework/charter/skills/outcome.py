"""What a guarded skill call gave (``charter.skills.runner``): its outcome for the turn and its
record for traces and the health metrics."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from charter.skills.fallback import Failure, FallbackOutcome

Status = Literal["ok", "invalid", "failed"]
_TEXT_KEYS = ("summary", "answer", "text", "message")


@dataclass(frozen=True)
class CallRecord:
    skill: str
    status: Status
    at: float  # time.time() when the call started
    elapsed_s: float
    failure: str | None = None  # error / timeout / breaker_open / contract_violation / invalid_args
    detail: str = ""
    fallback: str | None = None  # the action that answered, "none", or None (no fallback ran)
    depth: int = 0  # 0: called by the turn; 1+: called by a fallback


@dataclass(frozen=True)
class SkillOutcome:
    """What a call gave: the ``result`` (ok), or the ``failure`` and, when a protocol ran, the
    ``fallback``; ``text`` is what to tell the user either way."""

    skill: str
    status: Status
    args: Mapping[str, Any]
    text: str
    result: Any = None
    failure: Failure | None = None
    fallback: FallbackOutcome | None = None
    elapsed_s: float = 0.0
    # an executing skill's outcome given back from the ledger: this call did not run it
    replayed: bool = False

    @property
    def reflect(self) -> bool:
        """The post-check caught a result that claims what it does not hold."""
        return self.failure is not None and self.failure.reflect


def result_text(result: Any) -> str:
    """A result's own words for the user (its summary), else the result as JSON."""
    if isinstance(result, Mapping):
        for key in _TEXT_KEYS:
            if isinstance(result.get(key), str) and result[key]:
                return str(result[key])
    return json.dumps(result, ensure_ascii=False, sort_keys=True)
