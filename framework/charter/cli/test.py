"""``charter test``: run the packs' test cases with rule coverage, like ``opa test``.

Per pack: the rules cases, the planner cases of goals.yaml, the cases of the skill contracts,
then the conversation tests of ``tests/conversations/*.yaml`` (each through a fresh agent, see
``charter.conversations``) with their coverage of the pack's intents, event kinds and response
templates, then the intent table of ``tests/intents.yaml`` (understanding measured, keyword
triggers only beside keywords and examples: one case per pack, failing when a safety intent
misses a phrase or an intent is under ``--min-recall``/``--min-precision``). ``--threshold``
is about rule coverage only.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    OutFormat,
    compile_all,
    find_packs,
    registry,
    requested,
)
from charter.cli.select import SelectError, case_keywords, compile_selection
from charter.cli.test_report import Run, json_report, text_report, threshold_problem
from charter.compile.compiled import CompiledPack
from charter.compile.consequences import fold_failed_plugins
from charter.compile.specs.phrases import IntentTable
from charter.contracts.registry import Registry
from charter.diagnostics import SourceCache, error, render_text, sort_diagnostics, unfold
from charter.goals.planner import Planner, plan_case
from charter.reflect.engine import Engine
from charter.reflect.testing import CaseResult, Select, junit_xml, run_pack
from charter.skills.cases import SkillCaseRunner

if TYPE_CHECKING:
    from charter.compile.conversations import Conversation
    from charter.conversations.coverage import ConversationCoverage


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
    paths: Sequence[str | Path],
    *,
    threshold: float,
    junit: Path | None,
    fmt: OutFormat,
    verbose: bool,
    show_coverage: bool,
    all_installed: bool = False,
    keyword: str | None = None,
    min_recall: float = 0.0,
    min_precision: float = 0.0,
    all_consequences: bool = False,
) -> int:
    if junit is not None and (why := unwritable(junit)) is not None:
        typer.echo(f"charter test: --junit-xml {junit}: {why}", err=True)
        return EXIT_USAGE
    select = None
    if keyword is not None:
        try:
            select = _selector(keyword)
        except SelectError as exc:
            typer.echo(f"charter test: -k: {exc}\n{exc.render()}", err=True)
            return EXIT_USAGE
    reg, diags = registry()
    found, more = find_packs(requested(paths, reg, all_installed), reg.packs)
    diags += more
    # the packs that compile are tested even when another does not: one broken pack in a
    # repository must not hide the results of the others
    packs, more = compile_all(found, reg)
    diags = fold_failed_plugins([*diags, *more])
    run = Run(diagnostics=sort_diagnostics(unfold(diags) if all_consequences else diags))
    for pack in packs:
        _test_pack(pack, reg, run, select, (min_recall, min_precision))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        props = {f"conversation_coverage.{c.pack}": c.summary() for c in run.talked}
        props |= {f"understanding.{u.pack}": u.summary() for u in run.understood}
        junit.write_bytes(junit_xml(run.results, run.coverage, props, run.diagnostics))
    below = threshold_problem(run, threshold)
    if fmt is OutFormat.json:
        doc = json_report(run)
        doc["threshold"] = {"percent": threshold, "met": below is None, "problem": below}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(run.diagnostics, SourceCache()))
        sys.stdout.write(text_report(run, verbose, show_coverage))
        if below is not None:
            sys.stdout.write(below + "\n")
    failed = any(not r.ok for r in run.results)
    return EXIT_USER if failed or below is not None or run.errors else EXIT_OK


def _selector(expression: str) -> Select:
    selection = compile_selection(expression)

    def select(pack: str, kind: str, name: str, path: str) -> bool:
        return selection.selects(case_keywords(pack, kind, name, path))

    return select


def _test_pack(
    pack: CompiledPack,
    reg: Registry,
    run: Run,
    select: Select | None,
    minimums: tuple[float, float] = (0.0, 0.0),
) -> None:
    """Every case of ``pack`` (those ``select`` keeps) into ``run``; ``minimums``: the recall
    and precision (percent) every intent of its intent table must reach."""
    plan = None
    if pack.goals is not None:
        planner = Planner(pack.goals, reg, pack.constants)
        plan = functools.partial(plan_case, planner)
    before = len(run.results)
    if pack.skills is None:
        run.results += run_pack(pack, Engine(pack, reg), run.coverage, plan, None, select)
    else:
        with SkillCaseRunner(pack, reg) as skills:
            run.results += run_pack(
                pack, Engine(pack, reg), run.coverage, plan, skills.call, select
            )
    # getattr: a pack pickled in the cache before conversations existed has no such field
    conversations = getattr(pack, "conversations", ())
    only = None
    if select is not None:
        only = functools.partial(_keeps, select, pack.name)
    if conversations and (only is None or any(only(c) for c in conversations)):
        # imported here: the agent runtime is loaded only for packs that have conversations
        from charter.memory.crypto import MemoryKeyError

        try:
            run.talked.append(_converse(pack, reg, run.results, only))
        except MemoryKeyError as exc:
            # a pack that encrypts memory, on a machine without the memory extra: the pack's
            # problem to report like any other, not a crash that hides every other result
            chosen = [c for c in conversations if only is None or only(c)]
            before -= len(chosen)  # chosen, not deselected: they could not run
            run.diagnostics = sort_diagnostics(
                [
                    *run.diagnostics,
                    error(
                        "CH370",
                        f"the conversations of pack '{pack.name}' cannot run here: {exc}",
                        chosen[0].location,
                        "the other cases ran; leave the conversations out with "
                        "-k 'not conversation'",
                    ),
                ]
            )
    phrases = getattr(pack, "phrases", ())  # a pack cached before intent tables: none
    table = IntentTable("intents", phrases[0].location) if phrases else None
    if table is not None and (
        select is None or select(pack.name, "intents", table.name, table.location.path)
    ):
        run.results.append(_understand(pack, reg, run, table, minimums))
    run.deselected += _count(pack) - (len(run.results) - before)


def _understand(
    pack: CompiledPack,
    reg: Registry,
    run: Run,
    table: IntentTable,
    minimums: tuple[float, float],
) -> CaseResult:
    """The pack's intent table measured (its report added to ``run``), as one case."""
    # imported here: the planner and the embedder are loaded only for packs with a table
    from charter.agent.parts import understander_for
    from charter.conversations.understanding_report import report_for

    started = time.perf_counter()
    report = report_for(pack, reg, understander_for(pack, reg, None))
    problems = tuple(report.problems(*minimums))
    run.understood.append(report)
    seconds = time.perf_counter() - started
    return CaseResult(pack.name, table, {"understanding": report.as_dict()}, problems, seconds)


def _keeps(select: Select, pack: str, talk: Conversation) -> bool:
    return select(pack, "conversation", talk.name, talk.location.path)


def _count(pack: CompiledPack) -> int:
    """How many cases ``pack`` has in all (to count those ``-k`` left out)."""
    goals = len(pack.goals.cases) if pack.goals is not None else 0
    skills = sum(len(c.cases) for c in pack.skills.contracts) if pack.skills is not None else 0
    tables = 1 if getattr(pack, "phrases", ()) else 0
    return len(pack.cases) + goals + skills + len(getattr(pack, "conversations", ())) + tables


def _converse(
    pack: CompiledPack,
    reg: Registry,
    results: list[CaseResult],
    only: Callable[[Conversation], bool] | None = None,
) -> ConversationCoverage:
    """The pack's conversations as cases (appended to ``results``), and their coverage."""
    # imported here: the agent runtime is loaded only for packs that have conversations
    from charter.conversations.coverage import coverage_of
    from charter.conversations.runner import run_conversations

    played = run_conversations(pack, reg, only=only)
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
