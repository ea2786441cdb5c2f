"""The typed model of ``memory.yaml`` (schema ``memory.json``), read leniently (``_lenient``)
after the schema has reported what is wrong with it.

Durations and validities stay text: the memory stage parses them (and bounds them). Where an
absent key means something else than any value the model can hold (``lifecycle.warm`` names
the place of a report, ``merge_similarity`` unset defers to the embedder, ``remember`` unset
inherits the default rule), the stage asks ``model_fields_set``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from charter.pack.typed._lenient import (
    DocModel,
    Entries,
    Flag,
    Items,
    MapOf,
    OptBool,
    OptInt,
    OptNum,
    OptStr,
    Str,
    Strs,
    Sub,
)


class ShortTerm(DocModel):
    turns: OptInt = None
    summary_chars: OptInt = None


class Prompt(DocModel):
    token_budget: OptInt = None


class Retrieval(DocModel):
    top_k: OptInt = None
    min_score: OptNum = None
    recency_weight: OptBool = None
    recency_half_life: OptStr = None
    recency_boost: OptNum = None
    embedder: OptStr = None


class MemoryType(DocModel):
    """A value of ``types:``."""

    validity: OptStr = None
    level: OptStr = None
    roles: Strs = ()
    track_last_used: Flag = False


class PiiRule(DocModel):
    """A value of ``pii:``."""

    level: OptStr = None
    action: OptStr = None
    token: Str = ""


class Encryption(DocModel):
    levels: Strs = ()
    key_env: OptStr = None


class Lifecycle(DocModel):
    decay: OptNum = None
    decay_period: OptStr = None
    merge_count: OptInt = None
    merge_window: OptStr = None
    merge_similarity: OptNum = None
    deprecate_on: Strs = ()
    hot: OptStr = None
    warm: OptStr = None


class FactRule(DocModel):
    """How a slot value is stored as a fact: ``slot_facts.default`` and each of its ``keys``."""

    type: OptStr = None
    level: OptStr = None
    validity: OptStr = None
    confidence: OptNum = None
    remember: OptBool = None


class Origin(DocModel):
    confidence: OptNum = None
    validity: OptStr = None


class Origins(DocModel):
    """``slot_facts.origins``: how far a value is trusted by where it came from."""

    stated: Sub[Origin] = Origin()
    inferred: Sub[Origin] = Origin()
    verified: Sub[Origin] = Origin()


class SlotFacts(DocModel):
    default: Sub[FactRule] = FactRule()
    keys: Entries[FactRule] = Field(default_factory=dict)
    origins: Sub[Origins] = Origins()


def _phrases(value: Any) -> str | tuple[str, ...]:
    if isinstance(value, str):
        return value
    return tuple(x for x in value if isinstance(x, str)) if isinstance(value, list) else ()


Phrases = Annotated[str | tuple[str, ...], BeforeValidator(_phrases)]
"""A phrase, or the strings of a list of phrases (a list stays a tuple, so that a report points
into it); () when it is neither."""


class Statement(DocModel):
    """One item of ``statements:``; ``type`` to ``confidence`` are read as a ``FactRule``."""

    pattern: Phrases = ()
    key: OptStr = None
    values: Strs = ()
    value: OptStr = None
    type: OptStr = None
    level: OptStr = None
    validity: OptStr = None
    confidence: OptNum = None
    roles: Strs = ()
    intent: OptStr = None
    consent: Flag = False


class MemoryFile(DocModel):
    """A ``memory.yaml``; item ``i`` of ``statements`` is the file's (None where that is no
    mapping), so that ``("statements", i)`` points at it."""

    short_term: Sub[ShortTerm] = ShortTerm()
    prompt: Sub[Prompt] = Prompt()
    retrieval: Sub[Retrieval] = Retrieval()
    uncertainty: OptNum = None
    types: Entries[MemoryType] = Field(default_factory=dict)
    pii: Entries[PiiRule] = Field(default_factory=dict)
    encryption: Sub[Encryption] = Encryption()
    scopes: MapOf[Strs] = Field(default_factory=dict)
    roles: MapOf[Strs] = Field(default_factory=dict)
    lifecycle: Sub[Lifecycle] = Lifecycle()
    slot_facts: Sub[SlotFacts] = SlotFacts()
    statements: Items[Statement] = ()
