"""``charter learn PACK [--database URL] [--diff] [--since DATE]``: compile the reflection log
into patch files next to the pack (seed 001 §3.3; docs/learning.md).

The pack's entries of the reflection log (``charter.learn.log``) are generalised
(``charter.learn.generalise``) into parameter mappings and calibrations, merged into the files
of the pack's ``patches_dir`` (``charter.learn.patchfile``: new ids go to ``learned.yaml``,
patches already there only learn from more entries), and the pack is compiled again: when the
new files would not validate, they are put back as they were and the problems printed.
``--diff`` prints what would change as a unified diff and writes nothing; the summary goes to
stderr then, so the diff can be saved or applied as it is.

The database is ``--database URL``, else the one of the runtime configuration (``[database]
url`` of charter.toml, ``$CHARTER_DATABASE_URL``; ``charter config show`` prints it), the one
the agent logs its reflections in. A SQLite file that does not exist is an error.

Exit status: 0 ok (also when nothing was learned), 1 when the pack is unknown or does not
compile, the configuration has errors, the database cannot be opened, a patch file cannot be
read, or the new patches would not validate; 2 for a malformed ``--since``.
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC, datetime
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
from charter.pack.loader import display_path

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack
    from charter.contracts.registry import Registry
    from charter.diagnostics import Diagnostic
    from charter.learn.generalise import Learned
    from charter.learn.patchfile import Change

PROG = "charter learn"
ENV_URL = "CHARTER_DATABASE_URL"


def learn(
    pack: Annotated[str, typer.Argument(metavar="PACK", help="Pack directory or name.")],
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            "--db",
            metavar="URL",
            help="The database holding the reflection log (default: the runtime "
            f"configuration's [database] url, ${ENV_URL}).",
        ),
    ] = None,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print what would change as a diff; write nothing.")
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Only entries logged from then on (ISO 8601 date or time, UTC unless an "
            "offset is given).",
        ),
    ] = None,
) -> None:
    """Compile the pack's reflection log into patch files (patches/learned.yaml)."""
    raise typer.Exit(run(pack, database=database, show_diff=diff, since=since))


def register(app: typer.Typer) -> None:
    app.command("learn")(learn)


def _fail(message: str) -> None:
    typer.echo(f"{PROG}: {message}", err=True)


def parse_since(text: str) -> datetime:
    """``2026-11-01`` (midnight UTC) or an ISO 8601 time; raises ValueError."""
    at = datetime.fromisoformat(text)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def run(
    pack: str,
    *,
    database: str | None = None,
    show_diff: bool = False,
    since: str | None = None,
) -> int:
    from charter.compile.specs.learn import LearningSpec
    from charter.learn import patchfile
    from charter.learn.generalise import generalise
    from charter.learn.log import ReflectionLog

    start: datetime | None = None
    if since is not None:
        try:
            start = parse_since(since)
        except ValueError:
            _fail(f"--since: not an ISO 8601 date or time: {since!r} (e.g. 2026-11-01)")
            return EXIT_USAGE
    url = database or configured_url()
    if url is None:
        return EXIT_USER
    found = _compile(pack)
    if found is None:
        return EXIT_USER
    compiled, reg, root = found
    log = open_database(PROG, url, ENV_URL, ReflectionLog)
    if log is None:
        return EXIT_USER
    with log:
        entries = log.entries(compiled.name, since=start)
    learning = compiled.learning or LearningSpec()
    directory = root / learning.patches_dir
    target = directory / patchfile.LEARNED_FILE
    learned = generalise(
        entries,
        goals=compiled.goals,
        learning=learning,
        extractors=reg.extractors,
        patches_file=display_path(target),
    )
    try:
        changes = patchfile.plan(directory, learned.mappings, learned.calibrations)
    except (OSError, UnicodeDecodeError, patchfile.PatchFileError) as exc:
        _fail(str(exc))
        return EXIT_USER
    when = f" since {since}" if since is not None else ""
    summary = _summary(compiled.name, when, learned)
    if show_diff:
        sys.stderr.write(summary + ("" if changes else "no changes\n"))
        sys.stdout.write(patchfile.diff(changes, display_path))
        return EXIT_OK
    sys.stdout.write(summary)
    if not changes:
        if len(learned.mappings) + len(learned.calibrations):
            typer.echo(f"the patches in {display_path(directory)} are up to date")
        return EXIT_OK
    patchfile.apply(changes)
    problems = _still_valid(root, reg)
    if problems is not None:
        patchfile.undo(changes)
        emit_diagnostics(problems, DiagFormat.text)
        _fail("the pack would not validate with these patches: nothing written")
        return EXIT_USER
    typer.echo("\n".join(_written(c) for c in changes))
    return EXIT_OK


def configured_url() -> str | None:
    """The runtime configuration's database, or None after printing its errors."""
    from charter.cli.config import render_diagnostics
    from charter.config import load_config

    config, diags = load_config()
    if any(d.is_error for d in diags):
        sys.stderr.write(render_diagnostics(config, diags))
        _fail("the configuration has errors (charter config check); or give --database URL")
        return None
    return config.database.url


def _compile(name: str) -> tuple[CompiledPack, Registry, Path] | None:
    reg, diags = runtime_registry()
    root, problem = (None, None) if reg is None else one_pack(name, reg.packs)
    if reg is None or root is None:
        if problem is not None and problem.code == "CH004":
            _fail(f"unknown pack {name!r} (a pack directory or a name under domains/)")
        elif problem is not None:  # CH009: the name is ambiguous
            diags.append(problem)
        emit_diagnostics(diags, DiagFormat.text)
        return None
    packs, more = compile_all([root], reg)
    if not packs:
        emit_diagnostics(more, DiagFormat.text)
        _fail(f"pack {name} does not compile (charter validate {name})")
        return None
    return packs[0], reg, root


def _still_valid(root: Path, reg: Registry) -> list[Diagnostic] | None:
    """None when the pack compiles with the new files, else its errors."""
    packs, diags = compile_all([root], reg)
    errors = [d for d in diags if d.is_error]
    return errors if errors or not packs else None


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def _summary(pack: str, when: str, learned: Learned) -> str:
    if not learned.entries:
        return f"no reflection log entries of pack {pack}{when}: nothing to learn\n"
    read = _plural(learned.entries, "reflection log entry", "reflection log entries")
    lines = [f"read {read} of pack {pack}{when}"]
    m, c = len(learned.mappings), len(learned.calibrations)
    if m or c:
        parts = [_plural(m, "parameter mapping")] if m else []
        parts += [_plural(c, "calibration")] if c else []
        lines.append(
            f"learned {' and '.join(parts)} from {_plural(learned.converted, 'entry', 'entries')}"
        )
        for mapping in learned.mappings:
            sets = ", ".join(f"{name} = {expr.source()}" for name, expr in mapping.values)
            lines.append(f"  {mapping.id}: {sets} ({', '.join(mapping.learned_from)})")
        for cal in learned.calibrations:
            taken, meant = cal.confused_pair
            lines.append(f"  {cal.id}: {meant}, not {taken} ({', '.join(cal.learned_from)})")
    else:
        lines.append("learned nothing")
    if learned.skipped:
        lines.append(f"not converted: {_plural(len(learned.skipped), 'entry', 'entries')}")
        for s in learned.skipped:
            if s.warning:
                lines += [f"  {s.entry}: {s.reason}", f"    fix: {s.hint}"]
        groups = Counter((s.trigger, s.reason) for s in learned.skipped if not s.warning)
        for (trigger, reason), n in groups.items():
            lines.append(f"  {_plural(n, f'{trigger} entry', f'{trigger} entries')}: {reason}")
    return "\n".join(lines) + "\n"


def _written(change: Change) -> str:
    parts = [_plural(len(change.added), "patch", "patches") + " added"] if change.added else []
    if change.updated:
        parts.append(f"learned_from of {_plural(len(change.updated), 'patch', 'patches')} grew")
    return f"wrote {display_path(change.path)}: {', '.join(parts)}"
