"""Evaluate a compiled pack on a text: findings, deterministic repairs, one verdict.

Verdict precedence (ARCHITECTURE §4): block > escalate > retry > fixed > pass. A ``fix`` rule
whose repair did not make it pass falls back to its ``on_unfixed`` action (retry by default);
``flag`` annotates and never changes the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from charter.compile.build import Builder, Test
from charter.compile.codegen import rule_function
from charter.compile.compiled import CompiledPack, CompiledRule
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.compile.relevance import rule_sources
from charter.compile.repairing import Failure, Outcome, explain, outcome, repaired
from charter.contracts.registry import Registry
from charter.contracts.rules import Repair, RepairArg

Verdict = Literal["pass", "fixed", "retry", "escalate", "block"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fixed", "retry", "escalate", "block")
_RANK = {"block": 4, "escalate": 3, "retry": 2}


@dataclass(frozen=True)
class Finding:
    """A rule that failed: on the original text, or (``introduced``) only after repairs."""

    rule_id: str
    action: str
    message: str
    spans: tuple[tuple[int, int], ...] = ()
    evidence: tuple[str, ...] = ()
    fixed: bool = False
    introduced: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "action": self.action,
            "message": self.message,
            "spans": [list(s) for s in self.spans],
            "evidence": list(self.evidence),
            "fixed": self.fixed,
            "introduced": self.introduced,
        }


@dataclass(frozen=True)
class CheckResult:
    verdict: Verdict
    text: str
    fixed_text: str | None
    final_text: str  # what to send: the repaired text, or the safe message when blocked
    findings: tuple[Finding, ...]
    outcomes: Mapping[str, Outcome] = field(default_factory=dict)  # on the original text

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(r for r, o in self.outcomes.items() if o == "fail")

    @property
    def passed(self) -> tuple[str, ...]:
        return tuple(r for r, o in self.outcomes.items() if o == "pass")

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "text": self.text,
            "fixed_text": self.fixed_text,
            "final_text": self.final_text,
            "findings": [f.as_dict() for f in self.findings],
            "outcomes": dict(self.outcomes),
        }


@dataclass(frozen=True)
class _Bound:
    rule: CompiledRule
    when: Test | None
    check: Test
    when_explain: Test | None  # the guard built to record what it found, for evidence
    repair: Repair | None
    repair_args: tuple[RepairArg, ...]


class Engine:
    """A compiled pack bound to the installed extractors, predicates and repairs."""

    def __init__(self, pack: CompiledPack, registry: Registry) -> None:
        self.pack = pack
        self.registry = registry
        self.literals = LiteralTable(pack.literals)
        self.extractors = dict(registry.extractors)
        builder = Builder(self.literals.ids, pack.constants, registry.predicates)
        bound = []
        for rule in pack.rules:
            repair = None
            args: tuple[RepairArg, ...] = ()
            if rule.action.kind == "fix" and rule.action.repair is not None:
                repair = registry.repairs[rule.action.repair.text]
                args = tuple(RepairArg(a.kind, a.value) for a in rule.action.args)
            bound.append(
                _Bound(
                    rule,
                    builder.expr(rule.when) if rule.when is not None else None,
                    builder.expr(rule.check),
                    builder.expr(rule.when, negated=True) if rule.when is not None else None,
                    repair,
                    args,
                )
            )
        self._rules = tuple(bound)
        # the hot path: each rule as generated code; the closures above explain failures
        self._plan = tuple(
            (b.rule.id, rule_function(b.rule.id, b.rule.when, b.rule.check, builder)) for b in bound
        )
        self._messages = pack.messages
        self._index_rules()

    def _index_rules(self) -> None:
        """Which rules each literal and extractor can affect (``charter.compile.relevance``).

        A rule none of whose sources occur in a text has its *empty* outcome, computed once
        here on the empty text, so per text only the rules some evidence touches are run.
        """
        empty_env = self._env("", "", {})
        self._empty: dict[str, Outcome] = {}
        always: list[int] = []
        by_literal: dict[int, list[int]] = {}
        by_extractor: dict[str, list[int]] = {}
        for i, b in enumerate(self._rules):
            sources = rule_sources(b.rule.when, b.rule.check)
            if sources is None:
                always.append(i)
                self._empty[b.rule.id] = "skip"  # placeholder, always overwritten
                continue
            self._empty[b.rule.id] = self._outcome(b, empty_env)
            for lit in sources.literals:
                by_literal.setdefault(self.literals.ids[lit], []).append(i)
            for name in sources.extractors:
                by_extractor.setdefault(name, []).append(i)
        self._always = frozenset(always)
        # rules that fail on a text without any of their sources (a required phrase missing)
        self._fail_when_absent = frozenset(
            i
            for i, b in enumerate(self._rules)
            if i not in self._always and self._empty[b.rule.id] == "fail"
        )
        self._by_literal = {k: tuple(v) for k, v in by_literal.items()}
        self._by_extractor = tuple((k, frozenset(v)) for k, v in sorted(by_extractor.items()))

    def _affected(self, env: Env) -> list[int]:
        """Indices, in rule order, of the rules whose outcome this text can change."""
        todo = set(self._always)
        by_literal = self._by_literal
        for lid in env.hits("output", env.output):
            found = by_literal.get(lid)
            if found:
                todo.update(found)
        for name, idxs in self._by_extractor:
            if not idxs <= todo and env.items(name, "output", env.output):
                todo |= idxs
        return sorted(todo)

    def _run(self, env: Env) -> tuple[dict[str, Outcome], list[int]]:
        outcomes = dict(self._empty)
        affected = self._affected(env)
        failed = set(self._fail_when_absent).difference(affected)
        plan = self._plan
        for i in affected:
            rid, rule = plan[i]
            outcome = outcomes[rid] = rule(env)
            if outcome == "fail":
                failed.add(i)
        return outcomes, sorted(failed)

    def _env(self, output: str, input: str, context: Mapping[str, Any]) -> Env:
        return Env(output, input, context, self.literals, self.extractors)

    # for charter.reflect.explain, which shows what each rule saw and why it decided
    env = _env

    @property
    def bound(self) -> tuple[_Bound, ...]:
        return self._rules

    def blame(self, bound: _Bound, env: Env) -> Failure:
        return self._explain(bound, env)

    @staticmethod
    def _outcome(b: _Bound, env: Env) -> Outcome:
        return outcome(b, env)

    @staticmethod
    def _explain(b: _Bound, env: Env) -> Failure:
        return explain(b, env)

    def evaluate(
        self, output: str, input: str = "", context: Mapping[str, Any] | None = None
    ) -> dict[str, Outcome]:
        """Outcome of every rule, without repairs: the fast path."""
        return self._run(self._env(output, input, context or {}))[0]

    def check(
        self, output: str, input: str = "", context: Mapping[str, Any] | None = None
    ) -> CheckResult:
        ctx = context or {}
        env = self._env(output, input, ctx)
        outcomes, failed = self._run(env)
        failures = {self._rules[i].rule.id: self._explain(self._rules[i], env) for i in failed}
        if not failures:
            return CheckResult("pass", output, None, output, (), outcomes)

        by_id = {b.rule.id: b for b in self._rules}
        blocked = any(by_id[r].rule.action.kind == "block" for r in failures)
        text = output if blocked else self._repair(output, input, ctx)
        final = outcomes if text == output else self.evaluate(text, input, ctx)

        rank, verdict = 0, "pass"
        for rid, o in final.items():
            if o != "fail":
                continue
            rule = by_id[rid].rule
            action = rule.on_unfixed if rule.action.kind == "fix" else rule.action.kind
            if _RANK.get(action, 0) > rank:
                rank, verdict = _RANK[action], action
        if rank == 0:
            verdict = "fixed" if text != output else "pass"

        findings = [
            self._finding(by_id[rid].rule, output, f, fixed=final[rid] != "fail")
            for rid, f in failures.items()
        ]
        if text != output:
            fresh = self._env(text, input, ctx)
            for rid, o in final.items():
                if o == "fail" and rid not in failures:
                    f = self._explain(by_id[rid], fresh)
                    findings.append(self._finding(by_id[rid].rule, text, f, introduced=True))
        final_text = self._messages.get("safe", "") if verdict == "block" else text
        return CheckResult(
            verdict,  # type: ignore[arg-type]
            output,
            text if text != output else None,
            final_text,
            tuple(findings),
            outcomes,
        )

    def _repair(self, text: str, input: str, ctx: Mapping[str, Any]) -> str:
        """Apply each failing fix rule's repair in rule order, re-checking between repairs."""
        return repaired(text, self._rules, lambda t: self._env(t, input, ctx), self.extractors)

    @staticmethod
    def _finding(
        rule: CompiledRule, text: str, f: Failure, *, fixed: bool = False, introduced: bool = False
    ) -> Finding:
        return Finding(
            rule.id,
            rule.action.kind,
            rule.message,
            f.spans,
            tuple(text[s:e] for s, e in f.spans),
            fixed=fixed,
            introduced=introduced,
        )
