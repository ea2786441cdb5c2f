"""What ``charter test`` prints: the text report, the JSON document, the JUnit file.

Every output carries the packs' problems (diagnostics) next to the cases of the packs that
compiled: CI that reads JSON or JUnit must see a pack that did not compile as a failure, not
as a pack without tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.diagnostics import Diagnostic
from charter.reflect.testing import CaseResult, Coverage, summarize

if TYPE_CHECKING:
    from charter.conversations.coverage import ConversationCoverage
    from charter.conversations.understanding_report import UnderstandingReport


@dataclass
class Run:
    """Everything one ``charter test`` found."""

    results: list[CaseResult] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)
    talked: list[ConversationCoverage] = field(default_factory=list)
    understood: list[UnderstandingReport] = field(default_factory=list)  # tests/intents.yaml
    diagnostics: list[Diagnostic] = field(default_factory=list)
    deselected: int = 0

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> int:
        return len(self.diagnostics) - self.errors

    def summary(self) -> str:
        passed, failed = summarize(self.results)
        parts = [f"{passed} passed", f"{failed} failed"]
        if self.deselected:
            parts.append(f"{self.deselected} deselected")
        if self.errors:
            parts.append(f"{self.errors} error{'s' if self.errors != 1 else ''} in packs")
        if self.warnings:
            parts.append(f"{self.warnings} warning{'s' if self.warnings != 1 else ''}")
        return ", ".join(parts)


def text_report(run: Run, verbose: bool, show_coverage: bool) -> str:
    out: list[str] = []
    for r in run.results:
        if r.ok and not verbose:
            continue
        loc = r.case.location
        mark = "PASS" if r.ok else "FAIL"
        out.append(f"{mark} {r.pack}: {r.case.name} ({loc})")
        for p in (*r.problems, *(r.details if not r.ok else ())):
            first, *rest = p.splitlines()
            out.append(f"    {first}")
            out += [f"      {line}" for line in rest]
    coverage = run.coverage
    if show_coverage:
        out.append("rule coverage:")
        names = {key: f"{key[0]}/{key[1]}" for key in coverage.rules}
        width = max((len(n) for n in names.values()), default=0)
        for key, c in sorted(coverage.rules.items()):
            p = "pass ✓" if c.seen_pass else "pass ✗"
            f = "fail ✓" if c.seen_fail else "fail ✗"
            out.append(f"  {names[key]:<{width}}  {p}  {f}")
    else:
        for line in coverage.missing():
            out.append(f"not covered: {line}")
    for talk in run.talked:
        out.append(f"conversation coverage: {talk.pack}: {talk.summary()}")
        if verbose or show_coverage:  # what no conversation exercised: long, asked for
            out += [f"not covered: {talk.pack}: {line}" for line in talk.missing()]
    if run.understood:
        from charter.conversations.understanding_report import render

        out += [render(report).rstrip("\n") for report in run.understood]
    out.append(
        f"rule coverage: {coverage.percent:.1f}% of {len(coverage.rules)} rules "
        "(each seen passing and failing)"
    )
    out.append(run.summary())
    return "\n".join(out) + "\n"


def json_report(run: Run) -> dict[str, Any]:
    passed, failed = summarize(run.results)
    coverage = run.coverage
    return {
        "diagnostics": [d.as_dict() for d in run.diagnostics],
        "cases": [
            {
                "pack": r.pack,
                "kind": r.kind,
                "name": r.case.name,
                "ok": r.ok,
                "problems": list(r.problems),
                "location": str(r.case.location),
                **_turns(r),
                **_call(r),
            }
            for r in run.results
        ],
        "coverage": {
            "percent": round(coverage.percent, 2),
            "rules": [
                {
                    "origin": c.origin,
                    "rule": c.rule_id,
                    "seen_pass": c.seen_pass,
                    "seen_fail": c.seen_fail,
                }
                for _, c in sorted(coverage.rules.items())
            ],
        },
        "conversation_coverage": [c.as_dict() for c in run.talked],
        "understanding": [u.as_dict() for u in run.understood],
        "summary": {
            "passed": passed,
            "failed": failed,
            "deselected": run.deselected,
            "errors": run.errors,
            "warnings": run.warnings,
        },
    }


def _turns(r: CaseResult) -> dict[str, Any]:
    """A conversation's turns as they went (what the agent said, what the model was asked)."""
    if r.kind != "conversation" or not isinstance(r.result, Mapping):
        return {}
    return {"turns": r.result["turns"]}


def _call(r: CaseResult) -> dict[str, Any]:
    """A skill case's call as it went: arguments, failure, what the skill returned, the text
    and the reply (what to write under ``expect:``, and why it failed)."""
    if r.kind != "skill" or not isinstance(r.result, Mapping) or "call" not in r.result:
        return {}
    return {"call": r.result["call"]}


def threshold_problem(run: Run, threshold: float) -> str | None:
    """Why the rule coverage does not meet ``threshold``, or None when it does. No rule at all
    covers nothing: a threshold cannot be met by a pack whose rules were not read (rules.yml)
    or never written."""
    if threshold > 0 and not run.coverage.rules:
        return f"no rules to cover: the threshold {threshold:g}% cannot be met"
    if run.coverage.percent + 1e-9 < threshold:
        return f"rule coverage {run.coverage.percent:.1f}% is below the threshold {threshold:g}%"
    return None
