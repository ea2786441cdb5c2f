"""``charter new pack|plugin NAME``: scaffolds that validate and pass their own tests as written.

``charter new pack NAME --with-skills`` writes a pack and the Python of its skills as one
project: NAME/ with the pack in pack/, the plugin package beside it and its unit tests, one
``pip install -e .``.

A NAME another pack already answers to (a directory here, one under domains/ or rulesets/, a
pack a plugin installed) is refused: the two would collide in every run that sees both (CH007)
and the name would be ambiguous in every command (CH009).

Exit status: 0 when the files were written, 1 when the target exists and is not empty, cannot be
written, or the name is taken (nothing is written), 2 when NAME is not a valid name.
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
    project_scaffold,
    write,
)

app = typer.Typer(
    help="Scaffold a pack (with its skills, as one project) or a plugin distribution.",
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
WithSkillsOption = Annotated[
    bool,
    typer.Option(
        "--with-skills",
        help="Write the pack with the Python of its skills as one project: NAME/pack/, the "
        "plugin package, its tests and a pyproject.toml (pip install -e NAME).",
    ),
]

# an answer each scaffold's rules repair, to try `charter check` on straight away
_PACK_EXAMPLE = "退款将在3个工作日内原路退回。"
_PLUGIN_EXAMPLE = "您的订单{name}20240001已发货。"


@app.command("pack")
def pack(
    name: NameArg,
    directory: DirOption = Path("."),
    force: ForceOption = False,
    with_skills: WithSkillsOption = False,
) -> None:
    """Write DIR/NAME/: pack.yaml and rules.yaml with three tested rules; with --with-skills,
    the project NAME/: the pack in pack/ with a skill, its Python and their tests."""
    raise typer.Exit(run("project" if with_skills else "pack", name, directory, force=force))


@app.command("plugin")
def plugin(name: NameArg, directory: DirOption = Path("."), force: ForceOption = False) -> None:
    """Write DIR/charter-NAME/: a plugin distribution with an extractor, a skill and a pack."""
    raise typer.Exit(run("plugin", name, directory, force=force))


def _next_steps(scaffold: Scaffold, target: Path) -> list[str]:
    where = shlex.quote(str(target))
    name = scaffold.name
    if scaffold.kind == "pack":
        return [
            f"charter validate {where}",
            f"charter test {where} --threshold 100",
            f'charter check --domain {where} "{_PACK_EXAMPLE}"',
        ]
    if scaffold.kind == "project":
        return [
            f"cd {where}",
            "pip install -e .",
            f"charter validate {name}",
            f"charter test {name} --threshold 100",
            "python -m pytest",
            f"charter chat --domain {name} --user u1  # CHARTER_MEMORY_KEY: see README.md",
        ]
    return [
        f"pip install -e {where}",
        "charter plugins",
        f"charter validate {name}",
        f"charter test {name} --threshold 100",
        f'charter check --domain {name} "{_PLUGIN_EXAMPLE.format(name=name)}"',
        f"python -m pytest {where}",
    ]


_WHAT = {
    "pack": "pack {root!r}",
    "project": "pack {root!r} with its skills",
    "plugin": "plugin distribution {root!r}",
}


def _scaffold(kind: Kind, name: str) -> Scaffold:
    if kind == "pack":
        return pack_scaffold(name)
    if kind == "project":
        return project_scaffold(name)
    return plugin_scaffold(name)


def taken(name: str, target: Path) -> str | None:
    """Where another pack already answers to ``name`` as every command resolves names (a
    directory here, under domains/ or rulesets/, installed), or a pack in the directory
    ``./name`` declares that name; None when no pack does. Packs inside ``target`` are the
    scaffold's own (``--force`` over an earlier run, the project installed with ``pip
    install -e``)."""
    from charter.cli.common import host
    from charter.pack.loader import display_path
    from charter.pack.resolve import candidates

    inside = target.resolve()
    shown = []
    for c in candidates(name, host().registry.packs):
        for pack in c.packs:
            if pack.resolve().is_relative_to(inside):
                continue
            if len(c.packs) == 1 and c.packs[0] == c.path:
                shown.append(c.shown())
            elif _declared_name(pack) == name:  # a pack in a directory of packs
                shown.append(f"{display_path(pack)} (a directory)")
    return ", ".join(shown) or None


def _declared_name(pack: Path) -> object:
    import yaml

    try:
        data = yaml.safe_load((pack / "pack.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data.get("name") if isinstance(data, dict) else None


def run(kind: Kind, name: str, directory: Path, *, force: bool) -> int:
    prog = f"charter new {'plugin' if kind == 'plugin' else 'pack'}"
    try:
        scaffold = _scaffold(kind, name)
    except InvalidName as exc:
        typer.echo(f"{prog}: {exc}", err=True)
        return EXIT_USAGE
    target = directory / scaffold.root
    other = taken(name, target)
    if other is not None:
        advice = "choose another name"
        if kind == "plugin":
            advice += (
                "; for a pack with skills of its own, `charter new pack NAME --with-skills` "
                "writes the pack and its plugin as one project"
            )
        typer.echo(
            f"{prog}: a pack named {name!r} exists already: {other}; a second one would make "
            f"the name ambiguous (CH009) and collide with it (CH007), so nothing was written "
            f"({advice})",
            err=True,
        )
        return EXIT_USER
    try:
        written = write(scaffold, directory, force=force)
    except ScaffoldError as exc:
        typer.echo(f"{prog}: {exc}", err=True)
        return EXIT_USER
    except OSError as exc:
        typer.echo(f"{prog}: cannot write {exc.filename or target}: {exc.strerror}", err=True)
        return EXIT_USER
    lines = [f"created {_WHAT[kind].format(root=scaffold.root)} in {target}"]
    lines += [f"  {path}" for path in written]
    lines.append("next steps:")
    lines += [f"  {step}" for step in _next_steps(scaffold, target)]
    typer.echo("\n".join(lines))
    return EXIT_OK
