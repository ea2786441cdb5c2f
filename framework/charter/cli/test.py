"""``charter test``: run the packs' test cases with rule coverage, like ``opa test``."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from charter.cli.common import (
    EXIT_OK,
    EXIT_USER,
    DiagFormat,
    OutFormat,
    compile_all,
    emit_diagnostics,
    find_packs,
    registry,
    requested,
)
from charter.goals.planner import Planner, plan_case
from charter.reflect.engine import Engine
from charter.reflect.testing import CaseResult, Coverage, junit_xml, run_pack, summarize
from charter.skills.cases import SkillCaseRunner


def _text_report(
    results: Sequence[CaseResult], coverage: Coverage, verbose: bool, show_coverage: bool
) -> str:
    out: list[str] = []
    for r in results:
        if r.ok and not verbose:
            continue
        loc = r.case.location
        mark = "PASS" if r.ok else "FAIL"
        out.append(f"{mark} {r.pack}: {r.case.name} ({loc})")
        for p in r.problems:
            out.append(f"    {p}")
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
    passed, failed = summarize(results)
    out.append(
        f"rule coverage: {coverage.percent:.1f}% of {len(coverage.rules)} rules "
        "(each seen passing and failing)"
    )
    out.append(f"{passed} passed, {failed} failed")
    return "\n".join(out) + "\n"


def run(
    paths: Sequence[Path],
    *,
    threshold: float,
    junit: Path | None,
    fmt: OutFormat,
    verbose: bool,
    show_coverage: bool,
    all_installed: bool = False,
) -> int:
    reg, diags = registry()
    found, more = find_packs(requested(paths, reg, all_installed), reg.packs)
    diags += more
    packs, more = compile_all(found, reg)
    diags += more
    if any(d.is_error for d in diags):
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    coverage = Coverage()
    results: list[CaseResult] = []
    for pack in packs:
        plan = None
        if pack.goals is not None:
            planner = Planner(pack.goals, reg, pack.constants)
            plan = functools.partial(plan_case, planner)
        if pack.skills is None:
            results += run_pack(pack, Engine(pack, reg), coverage, plan)
            continue
        with SkillCaseRunner(pack, reg) as skills:
            results += run_pack(pack, Engine(pack, reg), coverage, plan, skills.call)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_bytes(junit_xml(results, coverage))
    if fmt is OutFormat.json:
        doc = {
            "cases": [
                {
                    "pack": r.pack,
                    "name": r.case.name,
                    "ok": r.ok,
                    "problems": list(r.problems),
                    "location": str(r.case.location),
                }
                for r in results
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
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(_text_report(results, coverage, verbose, show_coverage))
    failed = any(not r.ok for r in results)
    below = coverage.percent + 1e-9 < threshold
    if below and fmt is OutFormat.text:
        sys.stdout.write(
            f"rule coverage {coverage.percent:.1f}% is below the threshold {threshold:g}%\n"
        )
    return EXIT_USER if failed or below else EXIT_OK
