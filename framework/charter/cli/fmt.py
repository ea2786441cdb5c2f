"""``charter fmt [PATHS]``: rewrite pack YAML files in one layout; ``--check`` for CI.

Like ``black`` and ``ruff format``: each file rewritten is named (``reformatted PATH``), then a
summary; ``--check`` writes nothing, names each file that would change (``would reformat
PATH``) and exits 1 when there is one; ``--diff`` writes nothing and prints a unified diff on
stdout (names and summary go to stderr then, so that the diff can be piped to ``git apply``).
A file that does not parse is reported as the loader reports it (CH001-CH004) and makes the
exit code 1; the other files are formatted all the same. A path that names nothing to format
is a usage error (2), reported before anything is written, and so is a pack name that two
different packs answer to (CH009). A pack is named as every command names it
(``charter.pack.resolve``): ``charter fmt telecom`` formats the pack ``charter validate telecom``
checks.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, TextIO

import typer

from charter.diagnostics import (
    Diagnostic,
    Location,
    SourceCache,
    error,
    render_text,
    sort_diagnostics,
)
from charter.pack.fmt import Outcome, find_files, format_file
from charter.pack.loader import display_path

# charter.cli.common's exit codes (a test keeps them equal), without importing the compiler
# it brings in: charter fmt only reads YAML
EXIT_OK, EXIT_USER, EXIT_USAGE = 0, 1, 2
PROG = "charter fmt"


def run(paths: Sequence[str | Path], *, check: bool, diff: bool) -> int:
    """Format the pack files of ``paths`` (the working directory when empty): YAML files,
    packs, directories of packs and pack names, resolved as every command resolves them."""
    targets, ambiguous = resolve(paths or [Path(".")])
    if ambiguous:
        sys.stderr.write(render_text(ambiguous, SourceCache()))
        return EXIT_USAGE
    files, nothing = find_files(targets)
    if nothing:
        for path, why in nothing:
            typer.echo(f"{PROG}: {why}: {path}", err=True)
        return EXIT_USAGE
    outcomes = [format_file(path, display_path(path)) for path in files]
    # with --diff stdout is the patch, and everything else goes to stderr
    notes: TextIO = sys.stderr if diff else sys.stdout
    diagnostics = sort_diagnostics([d for o in outcomes for d in o.diagnostics])
    if diagnostics:
        notes.write(render_text(diagnostics, SourceCache()))
    dry = check or diff
    for outcome in outcomes:
        if not outcome.changed:
            continue
        if diff:
            sys.stdout.write(unified_diff(outcome))
        elif check:
            notes.write(f"would reformat {outcome.shown}\n")
        else:
            outcome.path.write_text(outcome.after, encoding="utf-8", newline="")
            notes.write(f"reformatted {outcome.shown}\n")
    notes.write(summary(outcomes, dry=dry) + "\n")
    changed = any(o.changed for o in outcomes)
    return EXIT_USER if diagnostics or (check and changed) else EXIT_OK


def resolve(arguments: Sequence[str | Path]) -> tuple[list[Path], list[Diagnostic]]:
    """Each argument as ``find_files`` takes it: a file as given; the pack directories a
    directory or a pack name stands for (``charter.pack.resolve``, as ``validate`` and ``test``
    find them). An argument that names nothing is passed on as it is (``find_files`` says
    why); one that names different packs in different places is CH009."""
    from charter.pack.resolve import AmbiguousPack, is_name, resolve_packs

    targets: list[Path] = []
    problems: list[Diagnostic] = []
    installed: Mapping[str, Path] | None = None
    for given in arguments:
        argument = str(given)
        if Path(argument).is_file():
            targets.append(Path(argument))
            continue
        if installed is None and is_name(argument):
            installed = _installed()
        try:
            packs = resolve_packs(argument, installed)
        except AmbiguousPack as exc:
            problems.append(error("CH009", exc.message, Location(exc.argument), exc.hint))
            continue
        targets += packs or [Path(argument)]
    return targets, problems


def _installed() -> Mapping[str, Path]:
    """The packs plugins install (loading the plugins only when a pack is given by name)."""
    from charter.cli.common import host

    return host().registry.packs


def unified_diff(outcome: Outcome) -> str:
    """The change to one file, as ``diff -u`` and ``git apply`` read it."""
    lines = difflib.unified_diff(
        outcome.before.splitlines(keepends=True),
        outcome.after.splitlines(keepends=True),
        f"a/{outcome.shown}",
        f"b/{outcome.shown}",
    )
    end = "\n\\ No newline at end of file\n"
    return "".join(line if line.endswith("\n") else line + end for line in lines)


def _count(n: int, what: str) -> str:
    return f"{n} file{'' if n == 1 else 's'} {what}"


def summary(outcomes: Sequence[Outcome], *, dry: bool) -> str:
    """``2 files reformatted, 9 files left unchanged`` (parts that count nothing left out)."""
    changed = sum(o.changed for o in outcomes)
    failed = sum(bool(o.diagnostics) for o in outcomes)
    same = len(outcomes) - changed - failed
    parts = [
        (changed, "would be reformatted" if dry else "reformatted"),
        (same, "would be left unchanged" if dry else "left unchanged"),
        (failed, "would fail to reformat" if dry else "failed to reformat"),
    ]
    shown = [_count(n, what) for n, what in parts if n]
    return ", ".join(shown) if shown else "no files"


def fmt(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Packs (directories or names), directories of packs, or pack files (default: .)."
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; list the files that would change and exit 1 if there are any.",
        ),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Write nothing; print the changes as a unified diff.")
    ] = False,
) -> None:
    """Rewrite pack YAML files in one layout, keeping comments, key order and quoting."""
    raise typer.Exit(run(paths or [], check=check, diff=diff))


def register(app: typer.Typer) -> None:
    app.command("fmt")(fmt)
