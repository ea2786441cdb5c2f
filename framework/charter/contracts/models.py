"""The language model and the embedder a deployment plugs in (ARCHITECTURE §7, §10).

Backends and embedders are registered as *factories* (a name and ``create(options)``):
registering one must stay cheap, and a model is only loaded when a configuration picks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

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
    vectors of two different models. An embedder may also have ``model_id`` (a string naming
    the model, its version and whatever else changes its vectors): the compile stage keeps the
    examples' vectors under it (``charter.compile.vectors``), else under name and ``dim``."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        """One vector of ``dim`` floats per text, L2-normalised."""
        ...


@runtime_checkable
class EmbedderFactory(Protocol):
    name: str

    def create(self, options: Mapping[str, Any]) -> Embedder: ...
