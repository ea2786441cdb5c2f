"""Compiled skill contracts and fallback protocols: immutable and picklable (they travel in the
cached ``CompiledPack``). The compile stage (``charter.compile.skills``) builds them from
``skills/*.yaml`` and ``fallbacks.yaml``; ``charter.skills.runner`` executes them.

Schemas are kept as canonical JSON text and constraints as checked DSL ASTs: validators and
closures are built once per process from them, never pickled.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from charter.diagnostics import Location
from charter.dsl import ast as A

if TYPE_CHECKING:
    from charter.compile.specs.faq import FaqIndex

FailureKind = Literal["error", "timeout", "breaker_open", "contract_violation"]
FAILURE_KINDS: tuple[FailureKind, ...] = ("error", "timeout", "breaker_open", "contract_violation")
# condition words that stand for sets of failures
FAILURE_WORDS: dict[str, frozenset[str]] = {
    "error": frozenset({"error"}),
    "timeout": frozenset({"timeout"}),
    "breaker_open": frozenset({"breaker_open"}),
    "contract_violation": frozenset({"contract_violation"}),
    "unavailable": frozenset({"error", "timeout", "breaker_open"}),
    "failed": frozenset(FAILURE_KINDS),  # the skill's side; refused arguments are the user's
    "invalid_args": frozenset({"invalid_args"}),
}
ActionKind = Literal[
    "degrade_to_faq", "handoff_human", "recommend_skill", "clarify", "template", "call"
]
ACTION_KINDS: tuple[ActionKind, ...] = (
    "degrade_to_faq",
    "handoff_human",
    "recommend_skill",
    "clarify",
    "template",
    "call",
)
DEFAULT_TIMEOUT_S = 5.0


def fill_args(text: str, args: Mapping[str, Any]) -> str:
    """A fallback's ``template "为您查询{keyword}"`` with the call's arguments by name; unknown
    names, and a text that is not a template at all (an unmatched brace), stay as written."""
    out = []
    try:
        for literal, name, _, _ in string.Formatter().parse(text):
            out.append(literal)
            if name is not None:
                out.append(str(args[name]) if name in args else "{" + name + "}")
    except ValueError:
        return text
    return "".join(out)


DEFAULT_RESULTS_KEY = "results"


@dataclass(frozen=True)
class Constraint:
    check: A.Expr
    message: str
    source: str
    location: Location
    # the arguments asked for again when it fails (empty: every argument the check reads)
    asks: tuple[str, ...] = ()


@dataclass(frozen=True)
class BreakerSpec:
    failures: int = 3
    slow_s: float = 2.0
    cooldown_s: float = 30.0


@dataclass(frozen=True)
class SkillCase:
    """A ``tests:`` entry of a contract, run by ``charter test``."""

    name: str
    args_json: str
    location: Location
    context_json: str = "{}"
    inject: str | None = None
    now: str | None = None  # the clock the skill sees: ISO 8601 with its offset
    status: str = "ok"
    message: str | None = None  # the outcome's text: a result's summary, a refusal, a fallback's
    reply: str | None = None  # what the agent tells: the contract's reply: over the result
    results: int | None = None
    failure: str | None = None
    action: str | None = None

    @property
    def args(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.args_json)
        return value

    @property
    def context(self) -> dict[str, Any]:
        """The call's context: the written ``context:``, and ``now:`` as the turn's clock."""
        value: dict[str, Any] = json.loads(self.context_json)
        if self.now is not None:
            value["now"] = self.now
        return value


@dataclass(frozen=True)
class SkillContract:
    name: str
    description: str
    input_schema_json: str
    output_schema_json: str
    location: Location
    messages: tuple[tuple[str, str], ...] = ()  # ("year_range.maximum", "年份范围超出…")
    constraints: tuple[Constraint, ...] = ()
    max_results: int | None = None
    results_key: str = DEFAULT_RESULTS_KEY
    timeout_s: float = DEFAULT_TIMEOUT_S
    breaker: BreakerSpec = field(default_factory=BreakerSpec)
    fallback: str | None = None
    cases: tuple[SkillCase, ...] = ()
    # an action (a transfer, a booking): confirmed before it runs, and run at most once per goal
    executes: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.input_schema_json)
        return value

    @property
    def output_schema(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.output_schema_json)
        return value

    def message_for(self, prop: str, keyword: str) -> str | None:
        """The contract's message for a violation of ``keyword`` on property ``prop`` (dotted
        path, "" for the top level): the most specific declared entry, or None."""
        table = dict(self.messages)
        for key in (f"{prop}.{keyword}" if prop else keyword, prop, "default"):
            if key and key in table:
                return table[key]
        return None


@dataclass(frozen=True)
class Condition:
    """One condition of a fallback step. ``kind``: ``failure`` (the call failed in one of
    ``failures``), ``missing_slot`` (argument ``name`` missing), ``negations`` (the user said
    no at least ``number`` times), ``confidence`` (below ``number``), ``expr`` (a DSL
    expression over the turn's context), ``always``."""

    kind: Literal["failure", "missing_slot", "negations", "confidence", "expr", "always"]
    source: str
    failures: frozenset[str] = frozenset()
    name: str = ""
    number: float = 0.0
    expr: A.Expr | None = None


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    source: str
    text: str = ""  # clarify / template text
    target: str = ""  # the skill of recommend_skill / call; the queue of handoff_human
    min_score: float | None = None  # degrade_to_faq's own floor


@dataclass(frozen=True)
class FallbackStep:
    when: tuple[Condition, ...]
    do: Action
    location: Location  # the step
    do_location: Location | None = None  # its action


@dataclass(frozen=True)
class SkillsSpec:
    """Everything a pack says about skills."""

    contracts: tuple[SkillContract, ...] = ()
    protocols: tuple[tuple[str, tuple[FallbackStep, ...]], ...] = ()
    faq: FaqIndex | None = None
    uncertainty: float = 0.72  # low_confidence means below this (the pack's threshold)

    def contract(self, name: str) -> SkillContract | None:
        return next((c for c in self.contracts if c.name == name), None)

    def protocol(self, name: str) -> tuple[FallbackStep, ...]:
        return dict(self.protocols).get(name, ())
