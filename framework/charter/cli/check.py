"""``charter check``: run a pack's checkers on one text and show findings, verdict, fixed text.

Exit status: 0 when the verdict is pass or fixed, 1 when it is retry, escalate or block (or the
pack does not compile), 2 on a usage error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    DiagFormat,
    OutFormat,
    compile_all,
    emit_diagnostics,
    one_pack,
    runtime_registry,
)
from charter.compile.compiled import CompiledPack
from charter.diagnostics import Diagnostic, sort_diagnostics
from charter.reflect.engine import CheckResult, Engine
from charter.reflect.explain import RuleExplanation, Seen, explain


class TextUnreadable(Exception):
    """``--file`` names something that is not a readable UTF-8 text file (a user mistake,
    reported as a usage error, not as a crash)."""


def read_file(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TextUnreadable(f"--file {file}: no such file") from None
    except IsADirectoryError:
        raise TextUnreadable(f"--file {file}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise TextUnreadable(
            f"--file {file}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})"
        ) from None
    except OSError as exc:
        raise TextUnreadable(f"--file {file}: {exc.strerror or exc}") from None


def _read_text(text: str | None, file: Path | None) -> str | None:
    if text is not None and file is not None:
        return None
    if file is not None:
        return read_file(file).rstrip("\n")
    if text is not None:
        return text
    if sys.stdin.isatty():
        return None
    return sys.stdin.read().rstrip("\n")


def render(result: CheckResult, pack_name: str) -> str:
    lines = [f"{pack_name}: {result.verdict}"]
    for f in result.findings:
        state = " [fixed]" if f.fixed else " [introduced by a repair]" if f.introduced else ""
        found = f" — found {', '.join(repr(e) for e in f.evidence)}" if f.evidence else ""
        lines.append(f"  ✗ {f.rule_id} ({f.action}){state}: {f.message}{found}")
    if result.fixed_text is not None:
        lines.append("fixed text:")
        lines.extend(f"  {line}" for line in result.fixed_text.splitlines())
    if result.verdict == "block":
        lines.append("sent instead:")
        lines.extend(f"  {line}" for line in result.final_text.splitlines())
    return "\n".join(lines) + "\n"


def render_explained(rules: Sequence[RuleExplanation], text: str) -> str:
    """Per rule, the outcome, the reason and the spans: what ``--explain`` adds to the report."""
    marks = {"fail": "✗ fail", "skip": "- skip", "pass": "✓ pass"}
    lines = [f"explain ({len(rules)} rules, spans are character offsets in the text):"]
    for r in rules:
        lines.append(f"  {marks[r.outcome]}  {r.rule} ({r.action}, {r.location})")
        lines.append(f"      {r.reason}")
        if r.blamed:
            shown = ", ".join(f"{text[s:e]!r} at {s}-{e}" for s, e in r.blamed)
            lines.append(f"      blamed: {shown}")
        if r.seen:
            shown = ", ".join(f"{s.text!r} at {s.start}-{s.end} ({_seen(s)})" for s in r.seen)
            lines.append(f"      saw: {shown}")
    return "\n".join(lines) + "\n"


FAQ_SHOWN = 3  # FAQ entries --explain shows


def faq_for(pack: CompiledPack, input: str) -> dict[str, Any] | None:
    """The FAQ's best entries for the turn's ``input`` whatever their score, with its two
    thresholds (what ``charter chat --trace`` shows): None without an FAQ or an input."""
    faq = pack.skills.faq if pack.skills is not None else None
    if faq is None or not input.strip():
        return None
    return faq.candidates(input, k=FAQ_SHOWN)


def render_faq(found: Mapping[str, Any]) -> str:
    lines = [
        f"faq for the input (answers from {found['min_score']:.2f}, before the intents from "
        f"{found['direct_score']:.2f}):"
    ]
    for c in found["candidates"]:
        lines.append(f"  {c['score']:.3f}  {c['id']}: {c['question']}")
    if not found["candidates"]:
        lines.append("  no entry shares a word with the input")
    return "\n".join(lines) + "\n"


def _seen(s: Seen) -> str:
    # the phrase as the rule writes it: 100% and 100％ both find １００％
    return f"extractor {s.what}" if s.kind == "extractor" else f"phrase {s.what!r}"


def _fail(diags: list[Diagnostic], fmt: OutFormat, domain: str) -> int:
    """The pack's problems, in the output's format: a JSON reader gets JSON, never text."""
    if fmt is OutFormat.json:
        doc = {"pack": domain, "verdict": None, "diagnostics": [d.as_dict() for d in diags]}
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        emit_diagnostics(diags, DiagFormat.text)
    return EXIT_USER


def run(
    domain: str,
    text: str | None,
    *,
    file: Path | None,
    input: str,
    context: str | None,
    fmt: OutFormat,
    explain_rules: bool = False,
) -> int:
    try:
        output = _read_text(text, file)
    except TextUnreadable as exc:
        typer.echo(f"charter check: {exc}", err=True)
        return EXIT_USAGE
    if output is None:
        typer.echo(
            "charter check: give the text as an argument, with --file, or on stdin "
            "(not both an argument and --file)",
            err=True,
        )
        return EXIT_USAGE
    ctx: dict[str, Any] = {}
    if context is not None:
        try:
            loaded = json.loads(context)
        except json.JSONDecodeError as exc:
            typer.echo(f"charter check: --context is not valid JSON: {exc}", err=True)
            return EXIT_USAGE
        if not isinstance(loaded, dict):
            typer.echo("charter check: --context must be a JSON object", err=True)
            return EXIT_USAGE
        ctx = loaded
    reg, diags = runtime_registry(quiet=fmt is OutFormat.json)
    if reg is None:
        return _fail(diags, fmt, domain)
    root, problem = one_pack(domain, reg.packs, "domain")
    if root is None:
        return _fail([*diags, *filter(None, [problem])], fmt, domain)
    packs, more = compile_all([root], reg)
    diags = sort_diagnostics([*diags, *more])
    if not packs:
        return _fail(diags, fmt, domain)
    pack = packs[0]
    engine = Engine(pack, reg)
    result = engine.check(output, input, ctx)
    rules = explain(engine, output, input, ctx) if explain_rules else ()
    if fmt is OutFormat.json:
        doc: dict[str, Any] = {
            "pack": pack.name,
            **result.as_dict(),
            "diagnostics": [d.as_dict() for d in diags],
        }
        if explain_rules:
            doc["explain"] = [r.as_dict() for r in rules]
            found = faq_for(pack, input)
            if found is not None:
                doc["faq"] = found
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        if diags:  # warnings only: a pack with errors did not compile
            # said once, not the whole list on every call: charter validate lists them
            n = len(diags)
            sys.stderr.write(
                f"charter check: {n} warning{'s' if n > 1 else ''} in the pack "
                "(charter validate lists them)\n"
            )
        sys.stdout.write(render(result, pack.name))
        if explain_rules:
            sys.stdout.write(render_explained(rules, output))
            found = faq_for(pack, input)
            if found is not None:
                sys.stdout.write(render_faq(found))
    return EXIT_OK if result.verdict in ("pass", "fixed") else EXIT_USER
