"""The memory write pipeline (seed 003 §3.1, ARCHITECTURE §7): what a user said becomes a
``PreparedFact`` for the fact store, or a ``Dropped`` saying why not. Nothing leaves it raw.

(a) **Intent filter.** Only candidates that carry an intent are kept. The predicate is
    pluggable; the default, ``carries_intent``, keeps a candidate whose caller marked an
    ``intent_type`` or that has both a key and a value extracted. "这个页面怎么这么卡" with
    nothing extracted is feedback for monitoring, not a memory.
(b) **Personal data**, before anything is stored (``charter.memory.pii_scan``): every
    installed PII recognizer (``registry.pii_recognizers``) runs over the value, the key and
    the entity reference, and each match is redacted, generalised, kept, or drops the whole
    fact (``Dropped`` names the kind, never the value), as the policy's rule for its kind
    says; a kind without a rule is redacted at level ``L3``. The key and the entity reference
    are stored in clear (the store looks facts up by them), so there a ``keep`` at an
    encrypted level is redacted. The identifier fields (domain, memory type, intent type,
    consent source) must hold no personal data at all: a fact with some there is dropped.

    The fact's level is the highest of its type's level and the levels of all personal data
    found, whatever was done with it.
(c) **Encryption** of the value (AES-GCM, ``charter.memory.crypto``) when the policy encrypts
    the fact's level, bound to (user id, key). A policy that encrypts any level needs the key
    when the pipeline is built: ``MemoryKeyError`` then, never plaintext later.
(d) **Value score**, 0-10, three parts after seed 003 (complaint resolved 3, opening hours 0.5,
    recurring 3+ times 2, strongly tied to high-value business 5)::

        impact     = 3 commitment | 2 has an entity_ref | 1 has an intent_type | 0.5 otherwise
        recurrence = min(recurrence - 1, 2)     (recurrence: times seen, this one included)
        relevance  = 5 × domain_weight × trust × confidence
        value_score = round(min(impact + recurrence + relevance, 10), 2)

    ``domain_weight`` (0-1) comes from the pipeline's ``domain_weights`` (a pack marks loans
    or insurance 1.0), 0.5 for a domain not listed; ``trust`` is 1.0 user_confirmed, 0.9
    system_verified, 0.5 inferred, 0.2 default.
(e) **Validity** from the policy: ``policy.valid_until(type, now, confidence, deadline)``,
    or earlier when a rule of memory.yaml gives the candidate a shorter ``validity``.

A candidate from memory.yaml's ``slot_facts`` or ``statements`` (``charter.memory.statements``)
also carries its least ``level`` (the fact's level is the highest of it, its type's and its
personal data's: encrypted as any fact of that level) and may require consent: without a
consent version (the candidate's or the accessor's) it is ``Dropped`` at stage ``consent``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from charter.compile.specs.memory import LEVELS, Level, MemoryPolicy, Validity
from charter.contracts.pii import PiiRecognizer
from charter.memory.crypto import MemoryKeyError, ValueCipher, load_key
from charter.memory.pii_scan import PiiHandler
from charter.memory.records import (
    SOURCES,
    Accessor,
    PreparedFact,
    PreparedSummary,
    Source,
    SummaryKind,
)
from charter.store.clock import Clock, utcnow

IntentFilter = Callable[["Candidate"], bool]
SOURCE_TRUST: Mapping[str, float] = {
    "user_confirmed": 1.0,
    "system_verified": 0.9,
    "inferred": 0.5,
    "default": 0.2,
}
DEFAULT_DOMAIN_WEIGHT = 0.5
_RANK: Mapping[str, int] = {level: i for i, level in enumerate(LEVELS)}


@dataclass(frozen=True)
class Candidate:
    """Something a user said that may become a long-term fact (raw: it may hold PII)."""

    key: str
    value: str
    memory_type: str = "fact"
    confidence: float = 1.0
    source: Source = "user_confirmed"
    domain: str = "default"
    entity_ref: str | None = None
    intent_type: str | None = None
    consent_source: str | None = None
    deadline: datetime | None = None
    recurrence: int = 1  # times this has come up, this one included
    # from memory.yaml (``slot_facts``, ``statements``): the least level of the fact (the
    # type's level and the personal data found may raise it), validities shorter than its
    # type's (the earliest end applies), and whether only a user who consented is remembered
    level: Level | None = None
    validity: tuple[Validity, ...] = ()
    consent_required: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be within 0..1, got {self.confidence}")
        if self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r} (one of {', '.join(SOURCES)})")
        if self.recurrence < 1:
            raise ValueError(f"recurrence counts this time too: at least 1, got {self.recurrence}")


@dataclass(frozen=True)
class Dropped:
    """A candidate that is not stored; ``reason`` names kinds and fields, never values."""

    reason: str
    stage: Literal["intent", "pii", "consent"]
    kinds: tuple[str, ...] = ()


class PiiSource(Protocol):
    """Where the recognizers come from: a ``Registry`` or anything holding them."""

    @property
    def pii_recognizers(self) -> Mapping[str, PiiRecognizer]: ...


class Sealed(Protocol):
    """A prepared or stored fact, as far as reading its value goes."""

    @property
    def user_id(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def encrypted(self) -> bool: ...


def carries_intent(candidate: Candidate) -> bool:
    """The default intent filter (see the module docstring, (a))."""
    extracted = bool(candidate.key.strip()) and bool(candidate.value.strip())
    return bool(candidate.intent_type) or extracted


def value_score(candidate: Candidate, domain_weights: Mapping[str, float]) -> float:
    """The value score (see the module docstring, (d))."""
    c = candidate
    if c.memory_type == "commitment":
        impact = 3.0
    elif c.entity_ref:
        impact = 2.0
    else:
        impact = 1.0 if c.intent_type else 0.5
    recurrence = float(min(c.recurrence - 1, 2))
    weight = domain_weights.get(c.domain, DEFAULT_DOMAIN_WEIGHT)
    relevance = 5.0 * weight * SOURCE_TRUST[c.source] * c.confidence
    return round(min(impact + recurrence + relevance, 10.0), 2)


def _highest(levels: Iterable[str]) -> str:
    return max(levels, key=_RANK.__getitem__)


def _earliest(*ends: datetime | None) -> datetime | None:
    """The earliest end of validity; None (for ever) only when every one is."""
    return min((e for e in ends if e is not None), default=None)


class WritePipeline:
    """Candidates in, ``PreparedFact`` or ``Dropped`` out (see the module docstring).

    ``key`` is the encryption key (base64 text or 32 bytes); without it the key comes from the
    environment variable the policy names (``environ`` replaces ``os.environ`` in tests)."""

    def __init__(
        self,
        policy: MemoryPolicy,
        registry: PiiSource,
        key: str | bytes | None = None,
        *,
        intent: IntentFilter = carries_intent,
        domain_weights: Mapping[str, float] | None = None,
        clock: Clock = utcnow,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        weights = dict(domain_weights or {})
        for domain, weight in weights.items():
            if not 0.0 <= weight <= 1.0:
                raise ValueError(f"domain weight of {domain!r} must be within 0..1, got {weight}")
        self.policy = policy
        self.pii = PiiHandler(policy, registry.pii_recognizers.values())
        raw = load_key(policy, key, environ)
        self.cipher = ValueCipher(raw) if raw is not None else None
        self._intent = intent
        self._weights = weights
        self._clock = clock

    def prepare(self, accessor: Accessor, candidate: Candidate) -> PreparedFact | Dropped:
        c = candidate
        if not self._intent(c):
            return Dropped("no intent: nothing was extracted and no intent was marked", "intent")
        if not c.key.strip():
            return Dropped("no key: a fact needs to say what it is about", "intent")
        if c.consent_required and not (c.consent_source or accessor.consent):
            return Dropped(f"{c.key}: remembered only with the user's consent", "consent")
        for name in ("domain", "memory_type", "intent_type", "consent_source"):
            ident = getattr(c, name)
            found = self.pii.scan(ident, in_clear=True).kinds if ident else ()
            if found:
                return Dropped(f"personal data ({', '.join(found)}) in the {name}", "pii", found)
        value = self.pii.scan(c.value, in_clear=False)
        key = self.pii.scan(c.key, in_clear=True)
        ref = self.pii.scan(c.entity_ref, in_clear=True) if c.entity_ref else None
        scans = (value, key, ref) if ref else (value, key)
        dropped = tuple(sorted({k for s in scans for k in s.dropped}))
        if dropped:
            return Dropped(f"the policy drops facts holding {', '.join(dropped)}", "pii", dropped)
        least = (self.policy.memory_type(c.memory_type).level, c.level or "L0")
        level = _highest((*least, *(v for s in scans for v in s.levels)))
        stored = value.text
        encrypted = self.policy.encrypted(level)
        if encrypted:
            if self.cipher is None:  # load_key refuses a missing key when a level is encrypted
                raise AssertionError("a policy that encrypts has a key")
            stored = self.cipher.encrypt(stored, user_id=accessor.user_id, fact_key=key.text)
        now = self._clock()
        return PreparedFact(
            user_id=accessor.user_id,
            key=key.text,
            value=stored,
            memory_type=c.memory_type,
            level=level,
            encrypted=encrypted,
            confidence=c.confidence,
            source=c.source,
            domain=c.domain,
            valid_until=_earliest(
                self.policy.valid_until(c.memory_type, now, c.confidence, c.deadline),
                *(v.until(now, c.confidence, c.deadline) for v in c.validity),
            ),
            # an encrypted value's reference that repeats it would be the value in clear
            entity_ref=ref.text if ref and not (encrypted and ref.text in value.text) else None,
            intent_type=c.intent_type,
            consent_source=c.consent_source or accessor.consent,
            value_score=value_score(c, self._weights),
        )

    def prepare_all(
        self, accessor: Accessor, candidates: Iterable[Candidate]
    ) -> list[PreparedFact | Dropped]:
        return [self.prepare(accessor, c) for c in candidates]

    def prepare_summary(
        self,
        accessor: Accessor,
        text: str,
        *,
        domain: str,
        kind: SummaryKind = "summary",
        session_id: str | None = None,
        memory_type: str = "summary",
        intent_type: str | None = None,
        confidence: float = 1.0,
    ) -> PreparedSummary | Dropped:
        """A narrative summary made safe to keep in clear (``scrub``), with the validity of
        its memory type; dropped when nothing is left to say."""
        scrubbed = self.scrub(text).strip()
        if not scrubbed:
            return Dropped("empty summary: nothing to remember", "intent")
        for name, ident in (("domain", domain), ("intent_type", intent_type)):
            found = self.pii.scan(ident, in_clear=True).kinds if ident else ()
            if found:
                return Dropped(f"personal data ({', '.join(found)}) in the {name}", "pii", found)
        now = self._clock()
        return PreparedSummary(
            user_id=accessor.user_id,
            text=scrubbed,
            domain=domain,
            kind=kind,
            session_id=session_id,
            memory_type=memory_type,
            intent_type=intent_type,
            consent_source=accessor.consent,
            valid_until=self.policy.valid_until(memory_type, now, confidence),
            created_at=now,
        )

    def scrub(self, text: str) -> str:
        """Free text made safe to keep in clear (short-term turns, summaries): every match
        redacted or generalised by its rule; a kind the policy drops, or keeps only
        encrypted, is redacted."""
        return self.pii.scan(text, in_clear=True).text  # a dropping kind's span is redacted

    def reveal(self, fact: Sealed) -> str:
        """The value of a prepared or stored fact, decrypted when it is encrypted. Raises
        DecryptionError when it does not belong to its row or the key is another."""
        if not fact.encrypted:
            return fact.value
        if self.cipher is None:
            raise MemoryKeyError("this value is encrypted and the pipeline has no key")
        return self.cipher.decrypt(fact.value, user_id=fact.user_id, fact_key=fact.key)
