"""``charter new pack|plugin NAME``: scaffolds that validate and pass their own tests as written.

Exit status: 0 when the files were written, 1 when the target exists and is not empty (or cannot
be written; nothing is written), 2 when NAME is not a valid name.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from charter.cli.common import EXIT_OK, EXIT_USAGE, EXIT_USER
from charter.scaffold import (
    InvalidName,
    Kind,
    Scaffold,
    ScaffoldError,
    pack_scaffold,
    plugin_scaffold,
    write,
)

app = typer.Typer(
    help="Scaffold a pack or a plugin distribution.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

NameArg = Annotated[
    str,
    typer.Argument(metavar="NAME", help="Lowercase letters, digits and '-', e.g. acme-insurance."),
]
DirOption = Annotated[
    Path, typer.Option("--dir", metavar="DIR", help="The directory to create the scaffold in.")
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force", help="Write into a non-empty target, overwriting the scaffold's files."
    ),
]

# an answer each scaffold's rules repair, to try `charter check` on straight away
_PACK_EXAMPLE = "退款将在3个工作日内原路退回。"
_PLUGIN_EXAMPLE = "您的订单{name}20240001已发货。"


@app.command("pack")
def pack(name: NameArg, directory: DirOption = Path("."), force: ForceOption = False) -> None:
    """Write DIR/NAME/: pack.yaml and rules.yaml with three tested rules."""
    raise typer.Exit(run("pack", name, directory, force=force))


@app.command("plugin")
def plugin(name: NameArg, directory: DirOption = Path("."), force: ForceOption = False) -> None:
    """Write DIR/charter-NAME/: a plugin distribution with an extractor, a skill and a pack."""
    raise typer.Exit(run("plugin", name, directory, force=force))


def _next_steps(scaffold: Scaffold, target: Path) -> list[str]:
    where = shlex.quote(str(target))
    if scaffold.kind == "pack":
        return [
            f"charter validate {where}",
            f"charter test {where} --threshold 100",
            f'charter check --domain {where} "{_PACK_EXAMPLE}"',
        ]
    name = scaffold.name
    return [
        f"pip install -e {where}",
        "charter plugins",
        f"charter validate {name}",
        f"charter test {name} --threshold 100",
        f'charter check --domain {name} "{_PLUGIN_EXAMPLE.format(name=name)}"',
        f"python -m pytest {where}",
    ]


def run(kind: Kind, name: str, directory: Path, *, force: bool) -> int:
    prog = f"charter new {kind}"
    try:
        scaffold = pack_scaffold(name) if kind == "pack" else plugin_scaffold(name)
    except InvalidName as exc:
        typer.echo(f"{prog}: {exc}", err=True)
        return EXIT_USAGE
    target = directory / scaffold.root
    try:
        written = write(scaffold, directory, force=force)
    except ScaffoldError as exc:
        typer.echo(f"{prog}: {exc}", err=True)
        return EXIT_USER
    except OSError as exc:
        typer.echo(f"{prog}: cannot write {exc.filename or target}: {exc.strerror}", err=True)
        return EXIT_USER
    what = "pack" if kind == "pack" else "plugin distribution"
    lines = [f"created {what} {scaffold.root!r} in {target}"]
    lines += [f"  {path}" for path in written]
    lines.append("next steps:")
    lines += [f"  {step}" for step in _next_steps(scaffold, target)]
    typer.echo("\n".join(lines))
    return EXIT_OK
