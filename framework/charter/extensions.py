"""The interfaces behind the registration hooks other than extractors, predicates and repairs.

Skills, LLM backends, embedders, stores and PII recognizers are registered by plugins through
``charter.hookspecs``; this module is what a plugin author implements. The classes are small
``Protocol``s checked at registration (``isinstance``), so a plugin returning the wrong kind of
object is reported by name instead of failing later, deep inside a turn.

Backends, embedders and stores are registered as *factories* (a name and ``create(options)``):
registering one must stay cheap, and a model is only loaded when a configuration picks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

# ---- skills (ARCHITECTURE §8) ---------------------------------------------------------------


@runtime_checkable
class Skill(Protocol):
    """The implementation of a skill contract (``skills/<name>.yaml``) of the same ``name``.

    Charter validates ``args`` against the contract's ``input_schema`` and constraints before the
    call and the result against its ``output_schema`` after it; the call runs with the contract's
    timeout, behind its circuit breaker. Raise to signal failure: the fallback protocol runs.

    A skill that keeps state between calls (a demo ledger numbering its transfers) may also
    define ``fresh() -> Skill``, a new instance in its first state: each conversation test
    (``charter test``) calls it, so the numbers a test pins do not depend on the tests before.
    """

    name: str
    description: str

    def __call__(self, args: Mapping[str, Any]) -> Any: ...


# ---- packs shipped inside a plugin ----------------------------------------------------------


@dataclass(frozen=True)
class PackRef:
    """A pack directory inside a plugin distribution, addressable as ``--domain NAME``.

    ``name`` defaults to the ``name:`` of the directory's ``pack.yaml`` when the hook returns a
    bare path.
    """

    name: str
    path: Path


# ---- LLMs (ARCHITECTURE §10) ----------------------------------------------------------------

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class Completion:
    """What a backend generated. ``logprobs`` holds one entry per generated token when the
    backend was asked for them (entropy-based reflection triggers), else it is empty."""

    text: str
    tokens: int
    logprobs: tuple[float, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)


@runtime_checkable
class LLM(Protocol):
    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        """Generate one answer. ``grammar`` is a GBNF grammar constraining the decoding, for
        backends that support it; others raise ``NotImplementedError`` when it is given."""
        ...


@runtime_checkable
class LLMBackend(Protocol):
    """A named way to get an ``LLM`` (``llamacpp``, ``openai``, ``scripted``)."""

    name: str

    def create(self, options: Mapping[str, Any]) -> LLM:
        """Build the LLM from the configuration's options (model path, URL, ...)."""
        ...


# ---- embeddings (ARCHITECTURE §7, narrative memory) -------------------------------------------


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of ``dim`` floats for the narrative channel.

    Retrieval models such as E5 embed a question differently from the passage that answers
    it: ``query=True`` marks the texts as questions (the recall side), the default as passages
    (the summaries stored). ``name`` is stored with every vector, so a store never compares
    vectors of two different models."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        """One vector of ``dim`` floats per text, L2-normalised."""
        ...


@runtime_checkable
class EmbedderFactory(Protocol):
    name: str

    def create(self, options: Mapping[str, Any]) -> Embedder: ...


# ---- stores (ARCHITECTURE §6, §7) -----------------------------------------------------------

StoreKind = Literal["goals", "facts", "short_term", "narrative", "audit", "traces"]
STORE_KINDS: tuple[str, ...] = ("goals", "facts", "short_term", "narrative", "audit", "traces")


@runtime_checkable
class StoreFactory(Protocol):
    """A storage backend for one kind of data, chosen by configuration (``sqlite``,
    ``postgresql``, ``lancedb``...). ``create`` returns the object implementing that kind's
    store protocol."""

    name: str
    kind: str  # one of STORE_KINDS

    def create(self, options: Mapping[str, Any]) -> Any: ...


# ---- PII (ARCHITECTURE §7, the memory write pipeline) ----------------------------------------


@dataclass(frozen=True, slots=True)
class PiiMatch:
    """Personal data found in a text.

    ``generalised`` is the coarser form a policy may keep instead of the value (an address
    generalised to its district: ``浙江省杭州市西湖区``), or None when the kind can only be
    redacted.
    """

    start: int
    end: int
    text: str
    kind: str
    generalised: str | None = None

    def exposes(self, start: int, end: int, value: str) -> bool:
        """Whether ``value``, found at ``start:end`` of the same text, gives away this personal
        data: it overlaps the match and is not as coarse as the policy may keep anyway (杭州
        out of 浙江省杭州市西湖区文三路90号 locates nobody)."""
        if not (start < self.end and self.start < end):
            return False
        return not (self.generalised and value and value in self.generalised)


@runtime_checkable
class PiiRecognizer(Protocol):
    """Finds one kind of personal data. ``placeholder`` replaces a redacted match (``[ID]``,
    ``[PHONE]``); matches are in order and never overlap. A recognizer may also carry
    ``examples`` (sentences holding one value of its kind, as users write them): validation
    tries slot regexes on them (CH308)."""

    name: str
    kind: str
    placeholder: str

    def recognize(self, text: str) -> tuple[PiiMatch, ...]: ...


def redact(text: str, matches: Sequence[PiiMatch], placeholders: Mapping[str, str]) -> str:
    """``text`` with each match replaced by its kind's placeholder (later matches first, so the
    spans stay valid). Overlapping matches keep the first."""
    out: list[str] = []
    pos = 0
    for m in sorted(matches, key=lambda m: (m.start, -m.end)):
        if m.start < pos:
            continue
        out.append(text[pos : m.start])
        out.append(placeholders.get(m.kind, f"[{m.kind.upper()}]"))
        pos = m.end
    out.append(text[pos:])
    return "".join(out)
