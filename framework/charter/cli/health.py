"""``charter health``: the Cognitive Health Index (seed 001 §5) of a database an agent wrote —
memory, reflection and skill health, each metric with its count, its healthy threshold and a
pass/warn (or n/a) mark — as a table, JSON, or a self-contained HTML page with the trend over
days and each metric against its threshold.

The database is ``--database URL`` (``--db`` like the other commands), else
``$CHARTER_DATABASE_URL``, else ``sqlite:///charter.db`` here; a SQLite file that does not exist
is an error. ``--pack`` names the pack (a directory or a name, as ``--domain`` elsewhere): its
turns, reflections and patch uses are counted, and its compiled ``learning.patches`` are the
deployed patches the reflection metrics need (without ``--pack`` those are n/a).

``--ablation CASES`` runs the ablation instead (the cognitive-coordination index CC of §5.4:
the cases with memory, reflection and skills switched off one at a time) and prints it as a
table or JSON.

Exit status: 0 when the report is written (whatever the marks), 1 when the database or the
pack cannot be used, 2 for a usage error (a malformed ``--since`` or ``--now``, ``--ablation``
with ``--format html``).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    DiagFormat,
    compile_all,
    emit_diagnostics,
    one_pack,
    open_database,
    runtime_registry,
)
from charter.cli.goals import DEFAULT_URL, ENV_URL
from charter.cli.learn import configured_url

if TYPE_CHECKING:
    from charter.compile.specs.learn import PatchSet

PROG = "charter health"


class HealthFormat(StrEnum):
    table = "table"
    json = "json"
    html = "html"


def health(
    pack: Annotated[
        str | None,
        typer.Option(
            "--pack", metavar="NAME", help="The pack: a directory or a name (default: every pack)."
        ),
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            "--db",
            metavar="URL",
            help=f"Database URL (default: ${ENV_URL}, else {DEFAULT_URL} here).",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Count from this day or time on (ISO 8601, UTC unless it says otherwise).",
        ),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="TIME",
            help="The report's present (default: now): validity that ended before it counts.",
        ),
    ] = None,
    format: Annotated[
        HealthFormat, typer.Option("--format", help="table, json or html.")
    ] = HealthFormat.table,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write the report to FILE."),
    ] = None,
    ablation: Annotated[
        list[Path] | None,
        typer.Option(
            "--ablation",
            metavar="CASES",
            help="Run the ablation on these cases instead and print the CC index.",
        ),
    ] = None,
) -> None:
    """The Cognitive Health Index: memory, reflection and skill health with their thresholds."""
    raise typer.Exit(run(pack, database, since, now, format, output, ablation))


def register(app: typer.Typer) -> None:
    app.command("health")(health)


def _fail(message: str, code: int = EXIT_USER) -> int:
    typer.echo(f"{PROG}: {message}", err=True)
    return code


def _time(option: str, text: str) -> datetime:
    """An ISO 8601 day or time; naive means UTC. Raises ValueError with the message to show."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{option}: not an ISO 8601 day or time: {text!r} (e.g. 2024-05-01 or "
            "2024-05-01T10:30:00Z)"
        ) from None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _patches(name: str) -> tuple[str, PatchSet] | None:
    """The pack's name and its deployed patches (empty when it has none), or None after
    saying why the pack cannot be used."""
    from charter.compile.specs.learn import PatchSet

    reg, diags = runtime_registry()
    if reg is None:
        emit_diagnostics(diags, DiagFormat.text)
        return None
    root, problem = one_pack(name, reg.packs)
    if root is None:
        diags += filter(None, [problem])
        emit_diagnostics(diags, DiagFormat.text)
        return None
    packs, more = compile_all([root], reg)
    if not packs:
        emit_diagnostics([*diags, *more], DiagFormat.text)
        return None
    learning = getattr(packs[0], "learning", None)
    patches = getattr(learning, "patches", None)
    return packs[0].name, patches if isinstance(patches, PatchSet) else PatchSet()


def _write(text: str, output: Path | None) -> int:
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        return _fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"wrote {output}")
    return EXIT_OK


def _ablation(cases: list[Path], fmt: HealthFormat, output: Path | None) -> int:
    if fmt is HealthFormat.html:
        return _fail("--ablation prints a table or JSON, not html", EXIT_USAGE)
    from charter.diagnostics import DiagnosticError
    from charter.health.ablation import run_ablation
    from charter.health.ablation_render import render_ablation

    reg, diags = runtime_registry()
    if reg is None:
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    try:
        report = run_ablation(cases, registry=reg)
    except DiagnosticError as exc:  # case files or their packs that cannot be played
        emit_diagnostics(exc.diagnostics, DiagFormat.text)
        return EXIT_USER
    tty = output is None and sys.stdout.isatty()
    return _write(render_ablation(report, fmt.value, tty=tty), output)


def run(
    pack: str | None,
    database: str | None,
    since: str | None,
    now: str | None,
    fmt: HealthFormat,
    output: Path | None,
    ablation: list[Path] | None = None,
) -> int:
    if ablation:
        return _ablation(ablation, fmt, output)
    try:
        start = _time("--since", since) if since is not None else None
        at = _time("--now", now) if now is not None else datetime.now(UTC)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
    patches: PatchSet | None = None
    name: str | None = None
    if pack is not None:
        found = _patches(pack)
        if found is None:
            return EXIT_USER
        name, patches = found

    from charter.health.metrics import compute, open_engine
    from charter.health.report import render_json, render_table

    # the agent's database: --database, else charter.toml's [database] url and its
    # environment override, as `charter learn` and the runtime read it
    url = database or configured_url()
    if url is None:
        return EXIT_USER
    engine = open_database(PROG, url, ENV_URL, open_engine)
    if engine is None:
        return EXIT_USER
    try:
        report = compute(engine, now=at, pack=name, patches=patches, since=start)
    finally:
        engine.dispose()
    if fmt is HealthFormat.json:
        text = render_json(report)
    elif fmt is HealthFormat.html:
        from charter.health.html import render_html

        text = render_html(report)
    else:
        text = render_table(report, tty=output is None and sys.stdout.isatty())
    return _write(text, output)
