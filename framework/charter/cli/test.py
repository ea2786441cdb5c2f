"""``charter test``: run the packs' test cases with rule coverage, like ``opa test``.

Per pack: the rules cases, the planner cases of goals.yaml, the cases of the skill contracts,
then the conversation tests of ``tests/conversations/*.yaml`` (each through a fresh agent, see
``charter.conversations``) with their coverage of the pack's intents, event kinds and response
templates. ``--threshold`` is about rule coverage only.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    DiagFormat,
    OutFormat,
    compile_all,
    emit_diagnostics,
    find_packs,
    registry,
    requested,
)
from charter.compile.compiled import CompiledPack
from charter.diagnostics import Diagnostic, SourceCache, render_text
from charter.goals.planner import Planner, plan_case
from charter.reflect.engine import Engine
from charter.reflect.testing import CaseResult, Coverage, junit_xml, run_pack, summarize
from charter.registry import Registry
from charter.skills.cases import SkillCaseRunner

if TYPE_CHECKING:
    from charter.conversations.coverage import ConversationCoverage


def _text_report(
    results: Sequence[CaseResult],
    coverage: Coverage,
    verbose: bool,
    show_coverage: bool,
    talked: Sequence[ConversationCoverage] = (),
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
    for talk in talked:
        out.append(f"conversation coverage: {talk.pack}: {talk.summary()}")
        if verbose or show_coverage:  # what no conversation exercised: long, asked for
            out += [f"not covered: {talk.pack}: {line}" for line in talk.missing()]
    passed, failed = summarize(results)
    out.append(
        f"rule coverage: {coverage.percent:.1f}% of {len(coverage.rules)} rules "
        "(each seen passing and failing)"
    )
    out.append(f"{passed} passed, {failed} failed")
    return "\n".join(out) + "\n"


def unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be written, found before the tests run (minutes of tests must not
    end in a crash on a typo in the report's path); None when it can be."""
    if path.is_dir():
        return "is a directory"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    if not existed:
        path.unlink()
    return None


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
    if junit is not None and (why := unwritable(junit)) is not None:
        typer.echo(f"charter test: --junit-xml {junit}: {why}", err=True)
        return EXIT_USAGE
    reg, diags = registry()
    found, more = find_packs(requested(paths, reg, all_installed), reg.packs)
    diags += more
    packs, more = compile_all(found, reg)
    diags += more
    if any(d.is_error for d in diags):
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    _warn_conversations(diags)
    coverage = Coverage()
    results: list[CaseResult] = []
    talked: list[ConversationCoverage] = []
    for pack in packs:
        plan = None
        if pack.goals is not None:
            planner = Planner(pack.goals, reg, pack.constants)
            plan = functools.partial(plan_case, planner)
        if pack.skills is None:
            results += run_pack(pack, Engine(pack, reg), coverage, plan)
        else:
            with SkillCaseRunner(pack, reg) as skills:
                results += run_pack(pack, Engine(pack, reg), coverage, plan, skills.call)
        # getattr: a pack pickled in the cache before conversations existed has no such field
        if getattr(pack, "conversations", ()):
            talked.append(_converse(pack, reg, results))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        props = {f"conversation_coverage.{c.pack}": c.summary() for c in talked}
        junit.write_bytes(junit_xml(results, coverage, props))
    if fmt is OutFormat.json:
        doc: dict[str, Any] = {
            "cases": [
                {
                    "pack": r.pack,
                    "kind": r.kind,
                    "name": r.case.name,
                    "ok": r.ok,
                    "problems": list(r.problems),
                    "location": str(r.case.location),
                    **_turns(r),
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
            "conversation_coverage": [c.as_dict() for c in talked],
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(_text_report(results, coverage, verbose, show_coverage, talked))
    failed = any(not r.ok for r in results)
    # no rule at all covers nothing: a threshold cannot be met by a pack whose rules were not
    # read (rules.yml) or never written
    empty = threshold > 0 and not coverage.rules
    below = empty or coverage.percent + 1e-9 < threshold
    if below and fmt is OutFormat.text:
        sys.stdout.write(
            f"no rules to cover: the threshold {threshold:g}% cannot be met\n"
            if empty
            else f"rule coverage {coverage.percent:.1f}% is below the threshold {threshold:g}%\n"
        )
    return EXIT_USER if failed or below else EXIT_OK


def _converse(pack: CompiledPack, reg: Registry, results: list[CaseResult]) -> ConversationCoverage:
    """The pack's conversations as cases (appended to ``results``), and their coverage."""
    # imported here: the agent runtime is loaded only for packs that have conversations
    from charter.conversations.coverage import coverage_of
    from charter.conversations.runner import run_conversations

    played = run_conversations(pack, reg)
    for r in played:
        turns = [
            {
                "turn": t.number,
                "user": t.turn.text,
                "reply": t.reply.text if t.reply is not None else None,
                "verdict": t.reply.verdict if t.reply is not None else None,
                "answered_by": t.reply.answered_by if t.reply is not None else None,
                "responses": list(t.reply.responses) if t.reply is not None else [],
                "events": [e.get("kind") for e in t.reply.events] if t.reply is not None else [],
                "model_calls": t.model_calls,
            }
            for t in r.turns
        ]
        results.append(CaseResult(r.pack, r.conversation, {"turns": turns}, r.problems, r.seconds))
    return coverage_of(pack, played)


def _turns(r: CaseResult) -> dict[str, Any]:
    """A conversation's turns as they went (what the agent said, what the model was asked)."""
    if r.kind != "conversation" or not isinstance(r.result, Mapping):
        return {}
    return {"turns": r.result["turns"]}


def _warn_conversations(diags: Sequence[Diagnostic]) -> None:
    """Warnings about conversation files go to stderr: an expectation under a misspelt key
    (CH012) is checked by nobody, and the run must not look as if it were."""
    shown = [
        d
        for d in diags
        if not d.is_error and Path(d.location.path).parent.parts[-2:] == ("tests", "conversations")
    ]
    if shown:
        sys.stderr.write(render_text(shown, SourceCache()))
