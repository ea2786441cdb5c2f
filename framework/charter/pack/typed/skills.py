"""The typed models of a skill contract (``skills/<name>.yaml``, schema ``skill.json``), of
``fallbacks.yaml`` (``fallbacks.json``) and of ``faq.yaml`` (``faq.json``), read leniently
(``_lenient``) after the schema has reported what is wrong with them.

A contract's ``input_schema`` and ``output_schema`` stay as written: they are JSON Schemas,
checked by a validator of their own, and a missing one (None) differs from an empty one (no
argument at all). Its ``reply:`` is read by the responses stage.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from charter.pack.typed._lenient import (
    DocModel,
    Items,
    MapOf,
    OptInt,
    OptMap,
    OptNum,
    OptStr,
    Raw,
    RawList,
    RawMap,
    Str,
    Strs,
    Sub,
)


class Constraint(DocModel):
    """One item of ``constraints:``."""

    check: OptStr = None
    message: OptStr = None
    # as written: an argument that is no string is still named (and reported) at its index
    asks: RawList = ()


class Limits(DocModel):
    """``limits:``; a duration stays text, the stage reads and bounds it."""

    max_results: OptInt = None
    results_key: OptStr = None
    timeout: OptStr = None


class Breaker(DocModel):
    """``breaker:``."""

    failures: OptInt = None
    slow: OptStr = None
    cooldown: OptStr = None


class Expect(DocModel):
    """What a ``tests:`` case must give; a case without a ``status`` is left out."""

    status: OptStr = None
    message: OptStr = None
    reply: OptStr = None
    results: OptInt = None
    failure: OptStr = None
    action: OptStr = None


class SkillTest(DocModel):
    """One item of ``tests:``."""

    name: OptStr = None
    args: RawMap = Field(default_factory=dict)
    context: RawMap = Field(default_factory=dict)
    now: OptStr = None
    inject: OptStr = None
    expect: Sub[Expect] = Expect()


class SkillFile(DocModel):
    """A ``skills/<name>.yaml``. ``name`` and ``description`` are None when absent or no string:
    such a contract is left out (the schema said why)."""

    name: OptStr = None
    description: OptStr = None
    effect: OptStr = None
    input_schema: OptMap = None
    output_schema: OptMap = None
    messages: MapOf[Str] = Field(default_factory=dict)
    constraints: Items[Constraint] = ()
    limits: Sub[Limits] = Limits()
    breaker: Sub[Breaker] = Breaker()
    fallback: OptStr = None
    tests: Items[SkillTest] = ()
    reply: Raw = None

    @property
    def properties(self) -> dict[str, Any] | None:
        """The properties the input schema declares, even when another part of it is not valid
        JSON Schema; None when it or its ``properties`` is no mapping, so nothing can be said
        about the arguments (an absent ``properties`` declares none)."""
        if self.input_schema is None:
            return None
        props = self.input_schema.get("properties", {})
        return props if isinstance(props, dict) else None


def _when(value: Any) -> str | tuple[Any, ...] | None:
    if isinstance(value, str):
        return value
    return tuple(value) if isinstance(value, list) else None


When = Annotated[str | tuple[Any, ...] | None, BeforeValidator(_when)]
"""A condition, or a list of conditions as written (an item that is no string is still read,
and reported, at its index); None when it is neither."""


class FallbackStep(DocModel):
    """One step of a protocol: ``when`` its conditions hold, ``do`` its action."""

    when: When = None
    do: OptStr = None


class FallbacksFile(DocModel):
    """A ``fallbacks.yaml``: protocol name -> its steps (step ``i`` is the file's item ``i``)."""

    protocols: MapOf[Items[FallbackStep]] = Field(default_factory=dict)


class FaqEntry(DocModel):
    """One item of ``entries:``; ``id``, ``question`` and ``answer`` None when absent or no
    string (the entry is left out)."""

    id: OptStr = None
    question: OptStr = None
    answer: OptStr = None
    alternates: Strs = ()
    skills: Strs = ()


class FaqFile(DocModel):
    """A ``faq.yaml``."""

    min_score: OptNum = None
    direct_score: OptNum = None
    entries: Items[FaqEntry] = ()
