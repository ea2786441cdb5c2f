"""What flows between the memory layers: a fact prepared by the write pipeline for the fact
store, the fact as stored, and who is asking.

The write pipeline (``charter.memory.pipeline``) turns what a user said into ``PreparedFact``s:
personal data already redacted or generalised by the pack's policy, the value already encrypted
when its level says so, validity computed. The fact store (``charter.memory.facts``) only
stores what it is given, and every read or write names an ``Accessor``: there is no way to reach
a memory without a user scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Source = Literal["user_confirmed", "system_verified", "inferred", "default"]
SOURCES: tuple[Source, ...] = ("user_confirmed", "system_verified", "inferred", "default")
FactStatus = Literal["active", "superseded", "contradicted", "deprecated", "expired", "archived"]


@dataclass(frozen=True)
class Accessor:
    """Who reads or writes, on whose behalf, for what use. ``user_id`` is the only user whose
    memories this accessor can reach; ``use`` is the domain of the purpose (billing, marketing)
    checked against the policy's scopes; ``role`` against its role visibility."""

    user_id: str
    actor: str  # "agent", "user", "admin:<name>", "cli"...
    role: str = "agent"
    use: str = "default"
    consent: str | None = None  # the consent version the user gave (app_v3.2)


@dataclass(frozen=True)
class PreparedFact:
    """A long-term fact ready to store: nothing in it may be raw personal data."""

    user_id: str
    key: str  # what the fact is about: "phone", "delivery_address", "preferred_size"
    value: str  # redacted or generalised; ciphertext (base64) when ``encrypted``
    memory_type: str  # a type of the policy: commitment, inferred, preference...
    level: str  # L0-L3
    encrypted: bool
    confidence: float
    source: Source
    domain: str  # billing, marketing, medical...
    valid_until: datetime | None
    entity_ref: str | None = None  # an order number, a contract id: exact-match retrieval
    intent_type: str | None = None  # the goal intent it came with
    consent_source: str | None = None
    value_score: float = 0.0  # 0-10: impact, recurrence, business relevance


@dataclass(frozen=True)
class Fact:
    """A stored fact, as the store returns it."""

    id: str
    user_id: str
    key: str
    value: str
    memory_type: str
    level: str
    encrypted: bool
    confidence: float
    source: Source
    domain: str
    status: FactStatus
    created_at: datetime
    valid_until: datetime | None
    entity_ref: str | None = None
    intent_type: str | None = None
    consent_source: str | None = None
    value_score: float = 0.0
    supersedes: str | None = None  # the fact this one replaced
    contradicts: str | None = None  # a confirmed fact this one disagrees with
    access_count: int = 0
    last_used_at: datetime | None = None


SummaryKind = Literal["summary", "question", "tag"]
SummaryStatus = Literal["active", "deprecated", "expired", "archived", "merged"]


@dataclass(frozen=True)
class PreparedSummary:
    """A narrative summary ready to embed and store: personal data already scrubbed.

    ``kind``: a turn's ``summary``; a ``question`` the user asked (recurring ones merge into a
    ``tag``, seed 003 §3.2)."""

    user_id: str
    text: str
    domain: str
    kind: SummaryKind = "summary"
    session_id: str | None = None
    memory_type: str = "summary"
    intent_type: str | None = None
    consent_source: str | None = None
    valid_until: datetime | None = None
    created_at: datetime | None = None  # None: when stored


@dataclass(frozen=True)
class Summary:
    """A stored narrative summary."""

    id: str
    user_id: str
    session_id: str | None
    kind: SummaryKind
    text: str
    domain: str
    memory_type: str
    intent_type: str | None
    consent_source: str | None
    created_at: datetime
    valid_until: datetime | None
    status: SummaryStatus
    count: int = 1  # a tag: how many questions it stands for
    merged_into: str | None = None  # a merged question: its tag
    access_count: int = 0
    last_used_at: datetime | None = None
