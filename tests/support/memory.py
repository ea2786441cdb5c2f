"""What the memory tests share: a fixed time and a clock that moves when told, fact ids in
write order, the type of the ``make_fact`` fixture, and the memory key and policy of the
write pipeline's tests."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from charter.compile.specs.memory import MemoryPolicy, PiiRule
from charter.memory.records import PreparedFact

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
MakeFact = Callable[..., PreparedFact]

# the write pipeline's tests (tests/unit/memory/test_pipeline.py and the PII tests after it)
KEY = base64.b64encode(bytes(range(32))).decode()
PIPELINE_T0 = datetime(2026, 1, 7, 9, 0, tzinfo=UTC)
RULES = {
    "id_card": PiiRule("id_card", "L3", "redact", "[ID]"),
    "phone": PiiRule("phone", "L2", "redact", "[PHONE]"),
    "address": PiiRule("address", "L1", "generalize"),
    "bank_card": PiiRule("bank_card", "L3", "drop"),
}
POLICY = MemoryPolicy(pii=RULES)  # encrypts L2 and L3


@dataclass
class FakeClock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@dataclass
class Ids:
    """Fact ids f-001, f-002 ... in write order: outputs can be pinned."""

    made: list[str] = field(default_factory=list)

    def __call__(self) -> str:
        self.made.append(f"f-{len(self.made) + 1:03d}")
        return self.made[-1]
