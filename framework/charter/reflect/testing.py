"""Run a pack's test cases, with rule coverage like ``opa test --coverage``.

A rule counts as *seen failing* when a case expects it to fail and it does, and as *seen
passing* when a case expects it to pass and it applied (its ``when`` held) and passed. So 100 %
means every rule is pinned from both sides by a case that names it.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.compile.compiled import CompiledCase, CompiledPack
from charter.compile.specs.goals import GoalCase
from charter.compile.specs.phrases import IntentTable
from charter.compile.specs.skills import SkillCase
from charter.diagnostics import Diagnostic, Location
from charter.reflect.engine import CheckResult, Engine
from charter.reflect.skill_report import skill_call, skill_call_lines
from charter.text.diff import char_diff

if TYPE_CHECKING:
    from charter.compile.conversations import Conversation


@dataclass(frozen=True)
class CaseResult:
    pack: str
    # of rules.yaml, goals.yaml, a skill contract, tests/conversations/*.yaml or tests/intents.yaml
    case: CompiledCase | GoalCase | SkillCase | Conversation | IntentTable
    result: CheckResult | Mapping[str, Any]  # the check, or the plan (the turns) as a dict
    problems: tuple[str, ...]
    seconds: float
    # why it failed, printed under the problems (a skill case: the failure, args and output)
    details: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def kind(self) -> str:
        """rules, planner, skill, conversation or intents: where the case is written."""
        if isinstance(self.case, IntentTable):
            return "intents"
        if isinstance(self.case, CompiledCase):
            return "rules"
        if isinstance(self.case, GoalCase):
            return "planner"
        return "skill" if isinstance(self.case, SkillCase) else "conversation"


@dataclass
class RuleCoverage:
    origin: str
    rule_id: str
    seen_pass: bool = False
    seen_fail: bool = False


@dataclass
class Coverage:
    rules: dict[tuple[str, str], RuleCoverage] = field(default_factory=dict)

    def add_pack(self, pack: CompiledPack) -> None:
        for r in pack.rules:
            self.rules.setdefault((r.origin, r.id), RuleCoverage(r.origin, r.id))

    @property
    def percent(self) -> float:
        if not self.rules:
            return 100.0
        seen = sum(int(c.seen_pass) + int(c.seen_fail) for c in self.rules.values())
        return 100.0 * seen / (2 * len(self.rules))

    def missing(self) -> list[str]:
        out = []
        for (origin, rid), c in sorted(self.rules.items()):
            lacks = [
                w for w, seen in (("passing", c.seen_pass), ("failing", c.seen_fail)) if not seen
            ]
            if lacks:
                out.append(f"{origin}/{rid}: never seen {' or '.join(lacks)}")
        return out


def _quote(text: str | None) -> str:
    return "(none)" if text is None else repr(text)


def run_case(
    pack: CompiledPack, engine: Engine, case: CompiledCase, coverage: Coverage
) -> CaseResult:
    started = time.perf_counter()
    result = engine.check(case.output, case.input, case.context_dict())
    seconds = time.perf_counter() - started
    problems: list[str] = []
    origins = {r.id: r.origin for r in pack.rules}
    for rid in case.expect_fail:
        outcome = result.outcomes.get(rid)
        if outcome == "fail":
            coverage.rules[(origins[rid], rid)].seen_fail = True
        else:
            why = "its when-guard did not hold" if outcome == "skip" else "it passed"
            problems.append(f"expected rule '{rid}' to fail, but {why}")
    for rid in case.expect_pass:
        outcome = result.outcomes.get(rid)
        if outcome == "fail":
            finding = next(f for f in result.findings if f.rule_id == rid)
            found = f" (found {', '.join(map(repr, finding.evidence))})" if finding.evidence else ""
            problems.append(f"expected rule '{rid}' to pass, but it failed{found}")
        elif outcome == "skip":
            # a pass that was never checked would count a rule as tested when it was not
            problems.append(f"expected rule '{rid}' to pass, but its when-guard did not hold")
        else:
            coverage.rules[(origins[rid], rid)].seen_pass = True
    if case.verdict is not None and result.verdict != case.verdict:
        problems.append(f"expected verdict '{case.verdict}', got '{result.verdict}'")
    if case.fixed is not None and result.fixed_text != case.fixed:
        said = f"expected fixed text {_quote(case.fixed)}, got {_quote(result.fixed_text)}"
        if result.fixed_text is not None:  # the same notation as a conversation's reply
            said += f"\ndiff: (-expected +got) {char_diff(case.fixed, result.fixed_text)}"
        problems.append(said)
    return CaseResult(pack.name, case, result, tuple(problems), seconds)


PlanFn = Callable[[GoalCase], Mapping[str, Any]]


def run_goal_case(pack: CompiledPack, case: GoalCase, plan: PlanFn) -> CaseResult:
    """A planner case passes when the plan is exactly the one written (empty parts omitted)."""
    started = time.perf_counter()
    got = plan(case)
    seconds = time.perf_counter() - started
    want = case.plan
    problems = []
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            problems.append(
                f"plan {key}: expected {_json(want.get(key))}, got {_json(got.get(key))}"
            )
    return CaseResult(pack.name, case, got, tuple(problems), seconds)


SkillCallFn = Callable[[str, SkillCase], Any]  # (skill, case) -> SkillCaseCall or SkillOutcome


def run_skill_case(
    pack: CompiledPack, skill: str, case: SkillCase, call: SkillCallFn
) -> CaseResult:
    """A contract's test case passes when the call's status, and each of the message (the
    outcome's text: the result's summary, the contract's message, the fallback's text), the
    reply (what the agent tells: the contract's ``reply:`` over the result), result count,
    failure kind and fallback action it names, are as written. A failing case says why: the
    failure (a contract violation, the exception and where it was raised), the arguments and
    what the skill returned."""
    started = time.perf_counter()
    got = call(skill, case)
    seconds = time.perf_counter() - started
    # a SkillCaseCall (charter.skills.cases) carries the outcome and what the skill did
    outcome: Any = getattr(got, "outcome", got)
    action = outcome.fallback.action if outcome.fallback is not None else "none"
    count = None
    contract = pack.skills.contract(skill) if pack.skills is not None else None
    if isinstance(outcome.result, Mapping) and contract is not None:
        items = outcome.result.get(contract.results_key)
        count = len(items) if isinstance(items, list) else None
    seen = {
        "status": outcome.status,
        "message": outcome.text,
        "reply": getattr(got, "reply", None),
        "results": count,
        "failure": outcome.failure.kind if outcome.failure is not None else None,
        "action": action,
    }
    want = {
        "status": case.status,
        "message": case.message,
        "reply": case.reply,
        "results": case.results,
        "failure": case.failure,
        "action": case.action,
    }
    problems = []
    for key, value in want.items():
        if value is None or seen[key] == value:
            continue
        said = f"{key}: expected {_json(value)}, got {_json(seen[key])}"
        if isinstance(value, str) and isinstance(seen[key], str) and key in ("message", "reply"):
            said += f"\ndiff: (-expected +got) {char_diff(value, seen[key])}"
        if key == "message" and seen["reply"] == value:
            said += (
                "\nhint: message is the result's summary as the skill wrote it; this text is "
                "the reply told (the contract's reply:): expect it with reply:"
            )
        problems.append(said)
    call_doc = skill_call(case, got)
    details = skill_call_lines(call_doc) if problems else ()
    return CaseResult(
        f"{pack.name}/{skill}", case, {**seen, "call": call_doc}, tuple(problems), seconds, details
    )


def _json(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


Select = Callable[[str, str, str, str], bool]  # (pack, kind, name, path) -> run it


def run_pack(
    pack: CompiledPack,
    engine: Engine,
    coverage: Coverage,
    plan: PlanFn | None = None,
    skill_call: SkillCallFn | None = None,
    select: Select | None = None,
) -> list[CaseResult]:
    """Every rules case, then (given a planner) every planner case of goals.yaml, then (given
    a way to call skills) every case of the skill contracts; given ``select``, only the cases
    it keeps (``charter test -k``)."""

    def keep(owner: str, kind: str, name: str, where: Location) -> bool:
        return select is None or select(owner, kind, name, where.path)

    coverage.add_pack(pack)
    results = [
        run_case(pack, engine, case, coverage)
        for case in pack.cases
        if keep(pack.name, "rules", case.name, case.location)
    ]
    if plan is not None and pack.goals is not None:
        results += [
            run_goal_case(pack, case, plan)
            for case in pack.goals.cases
            if keep(pack.name, "planner", case.name, case.location)
        ]
    if skill_call is not None and pack.skills is not None:
        for contract in pack.skills.contracts:
            owner = f"{pack.name}/{contract.name}"
            results += [
                run_skill_case(pack, contract.name, c, skill_call)
                for c in contract.cases
                if keep(owner, "skill", c.name, c.location)
            ]
    return results


def junit_xml(
    results: Sequence[CaseResult],
    coverage: Coverage,
    properties: Mapping[str, str] | None = None,
    diagnostics: Sequence[Diagnostic] = (),
) -> bytes:
    """JUnit XML that CI systems render: one test suite per pack, one test case per case (a
    conversation's has one failure per expectation that did not hold); ``properties`` are
    added after the rule coverage. The packs' problems come first, in a suite of their own:
    a failing test case per error, a passing one carrying the text per warning, so a pack
    that did not compile shows as red in the report and not as a pack without tests."""
    suites = ET.Element("testsuites", name="charter test")
    errors = sum(1 for d in diagnostics if d.is_error)
    if diagnostics:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name="pack problems",
            tests=str(len(diagnostics)),
            failures=str(errors),
            errors="0",
            skipped="0",
            time="0.000000",
        )
        for d in diagnostics:
            loc = d.location
            tc = ET.SubElement(
                suite,
                "testcase",
                classname=loc.path,
                name=f"{d.code} {loc}",
                file=loc.path,
                line=str(loc.line),
                time="0.000000",
            )
            detail = d.headline() + (f"\nhint: {d.hint}" if d.hint else "")
            if d.is_error:
                failure = ET.SubElement(tc, "failure", message=d.message, type=d.code)
                failure.text = detail
            else:
                ET.SubElement(tc, "system-out").text = f"warning: {detail}"
    by_pack: dict[str, list[CaseResult]] = {}
    for r in results:
        by_pack.setdefault(r.pack, []).append(r)
    total_fail = 0
    for pack_name, rs in by_pack.items():
        failures = sum(1 for r in rs if not r.ok)
        total_fail += failures
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=pack_name,
            tests=str(len(rs)),
            failures=str(failures),
            errors="0",
            skipped="0",
            time=f"{sum(r.seconds for r in rs):.6f}",
        )
        for r in rs:
            loc = r.case.location
            tc = ET.SubElement(
                suite,
                "testcase",
                classname=pack_name,
                name=r.case.name,
                file=loc.path,
                line=str(loc.line),
                time=f"{r.seconds:.6f}",
            )
            if r.problems and r.kind == "conversation":
                for problem in r.problems:
                    failure = ET.SubElement(
                        tc, "failure", message=problem, type="ConversationFailed"
                    )
                    failure.text = problem
            elif r.problems:
                first = r.problems[0].splitlines()[0]
                if r.details and r.details[0].startswith("failure: "):
                    first += f" ({r.details[0]})"  # why: a contract violation, an exception
                failure = ET.SubElement(tc, "failure", message=first, type="CaseFailed")
                failure.text = "\n".join((*r.problems, *r.details))
    suites.set("tests", str(len(results) + len(diagnostics)))
    suites.set("failures", str(total_fail + errors))
    props = ET.SubElement(suites, "properties")
    ET.SubElement(props, "property", name="rule_coverage_percent", value=f"{coverage.percent:.1f}")
    for name, value in (properties or {}).items():
        ET.SubElement(props, "property", name=name, value=value)
    ET.indent(suites)
    return bytes(ET.tostring(suites, encoding="utf-8", xml_declaration=True))


def summarize(results: Iterable[CaseResult]) -> tuple[int, int]:
    rs = list(results)
    passed = sum(1 for r in rs if r.ok)
    return passed, len(rs) - passed
