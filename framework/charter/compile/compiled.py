"""The output of compilation: immutable, hashable, picklable for the disk cache.

A ``CompiledPack`` holds checked ASTs and tables, never the parser; ``charter.reflect`` turns it
into closures bound to the installed extractors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.compile.response_spec import ResponsesSpec
from charter.compile.specs.goals import GoalsSpec
from charter.compile.specs.memory import MemoryPolicy
from charter.compile.specs.skills import SkillsSpec
from charter.diagnostics import Location
from charter.dsl import ast as A

if TYPE_CHECKING:
    from charter.compile.conversations import Conversation
    from charter.compile.specs.learn import LearningSpec
    from charter.compile.specs.phrases import IntentPhrase
    from charter.compile.specs.understanding import UnderstandingSpec

ACTION_PRECEDENCE = ("block", "escalate", "retry", "fix", "flag")


@dataclass(frozen=True)
class CompiledRule:
    id: str
    describe: str
    message: str
    origin: str
    check: A.Expr
    action: A.Action
    on_unfixed: str
    location: Location
    when: A.Expr | None = None
    tags: tuple[str, ...] = ()
    source_check: str = ""
    source_when: str = ""
    source_action: str = ""

    @property
    def action_kind(self) -> str:
        return self.action.kind


@dataclass(frozen=True)
class CompiledCase:
    name: str
    output: str
    origin: str
    location: Location
    input: str = ""
    context: tuple[tuple[str, Any], ...] = ()  # a dict as sorted items, so the case hashes
    expect_pass: tuple[str, ...] = ()
    expect_fail: tuple[str, ...] = ()
    verdict: str | None = None
    fixed: str | None = None

    def context_dict(self) -> dict[str, Any]:
        import json

        return {k: json.loads(v) for k, v in self.context}


@dataclass(frozen=True, eq=False)
class CompiledPack:
    name: str
    version: str
    kind: str
    digest: str  # hash of every source file and of the registry: the identity of the pack
    rules: tuple[CompiledRule, ...]
    cases: tuple[CompiledCase, ...]
    literals: tuple[str, ...]
    constants_json: str  # what ``pack.<path>`` means (thresholds, messages, ...), as JSON
    root: str = ""
    extends: tuple[str, ...] = ()
    files: tuple[str, ...] = field(default=())
    goals: GoalsSpec | None = None  # the compiled goals.yaml, when the pack has one
    memory: MemoryPolicy | None = None  # the compiled memory.yaml, when the pack has one
    skills: SkillsSpec | None = None  # skills/*.yaml, fallbacks.yaml and faq.yaml, if any
    learning: LearningSpec | None = None  # learning.yaml and patches/*.yaml, if any
    responses: ResponsesSpec | None = None  # responses.yaml, contracts' reply:, confirm questions
    conversations: tuple[Conversation, ...] = ()  # tests/conversations/*.yaml (charter test)
    # its intents' examples embedded, with the bands fitted from them (ARCHITECTURE §6a)
    understanding: UnderstandingSpec | None = None
    # tests/intents.yaml: the phrases ``charter test`` measures understanding on
    phrases: tuple[IntentPhrase, ...] = ()

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompiledPack) and other.digest == self.digest

    @property
    def constants(self) -> dict[str, Any]:
        import json

        value: dict[str, Any] = json.loads(self.constants_json)
        return value

    @property
    def thresholds(self) -> dict[str, Any]:
        value: dict[str, Any] = self.constants.get("thresholds", {})
        return value

    @property
    def messages(self) -> dict[str, str]:
        value: dict[str, str] = self.constants.get("messages", {})
        return value

    def rule(self, rule_id: str) -> CompiledRule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)
