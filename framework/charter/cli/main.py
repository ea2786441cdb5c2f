"""The ``charter`` command. Each subcommand lives in its own module and returns an exit code.

Exit codes: 0 ok, 1 user error (with diagnostics), 2 usage error, 3 internal error (the
traceback goes to a log file whose path is printed, never to the user's terminal).

Subcommands load lazily: ``COMMANDS`` names each one, the module that defines it and the first
paragraph of its help, so ``charter --help`` lists them all and ``charter --version`` answers
without importing any of them, and ``charter X`` imports X's module alone. Importing every
module up front cost more than a second on each run (SQLAlchemy, the compiler, the skill
runner), and pre-commit runs ``charter validate`` on every commit.

To add a command: write ``charter/cli/NAME.py`` with ``register(app: typer.Typer)`` that adds
the command (``app.command("NAME")(function)``), or with a ``typer.Typer`` named ``app`` for a
group of subcommands (``charter NAME sub ...``); then add ``Command("NAME",
"charter.cli.NAME", "<first paragraph of its help>")`` to ``COMMANDS``, where it should be
listed. ``tests/unit/cli/test_startup.py`` checks the table against the modules.
"""

from __future__ import annotations

import datetime as dt
import gc
import importlib
import sys
import tempfile
import traceback
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from charter._version import __version__
from charter.cli import EXIT_INTERNAL, EXIT_USAGE


@dataclass(frozen=True)
class Command:
    """A subcommand, known without importing its module."""

    name: str
    module: str  # defines register(app), or a typer.Typer named app (a group of subcommands)
    help: str  # the first paragraph of its help: charter --help shortens it as click would


COMMANDS: tuple[Command, ...] = (
    Command(
        "validate", "charter.cli.core", "Load, schema-check and compile packs. Silent on success."
    ),
    Command(
        "check", "charter.cli.core", "Check one output: findings, verdict and the repaired text."
    ),
    Command("test", "charter.cli.core", "Run the packs' test cases and report rule coverage."),
    Command("schema", "charter.cli.core", "Print the JSON Schema of a pack file kind."),
    Command(
        "plugins",
        "charter.cli.core",
        "List plugins: distribution, version, status, and what each hook registered.",
    ),
    Command(
        "fmt",
        "charter.cli.fmt",
        "Rewrite pack YAML files in one layout, keeping comments, key order and quoting.",
    ),
    Command(
        "trace",
        "charter.cli.trace",
        "Show one turn's trace: every step with its inputs, outputs, timing and decision.",
    ),
    Command(
        "traces",
        "charter.cli.trace",
        "List traces, newest first: id, when, how long, who, where, verdict, steps.",
    ),
    Command(
        "serve",
        "charter.cli.serve",
        "Serve the agent over HTTP: turns, memory, goals, traces, health.",
    ),
    Command(
        "chat",
        "charter.cli.chat",
        "Talk to the configured agent: one turn per line, /help for the chat's commands.",
    ),
    Command(
        "demo",
        "charter.cli.demo",
        "Scripted conversations with the three domains, against the local model.",
    ),
    Command(
        "learn",
        "charter.cli.learn",
        "Compile the pack's reflection log into patch files (patches/learned.yaml).",
    ),
    Command(
        "health",
        "charter.cli.health",
        "The Cognitive Health Index: memory, reflection and skill health with their thresholds.",
    ),
    Command(
        "new",
        "charter.cli.new",
        "Scaffold a pack (with its skills, as one project) or a plugin distribution.",
    ),
    Command(
        "goals",
        "charter.cli.goals",
        "Goal trees: show them and their history, abort goals that timed out.",
    ),
    Command(
        "memory",
        "charter.cli.memory",
        "Long-term memory: list, show, export, audit, forget a user; maintain every user's.",
    ),
    Command(
        "tickets",
        "charter.cli.tickets",
        "Handoff tickets left for human agents: list them, show one.",
    ),
    Command(
        "skills",
        "charter.cli.skills",
        "Skill contracts: list, show, call through their guards, breaker status.",
    ),
    Command(
        "config",
        "charter.cli.config",
        "The runtime configuration: show it with its sources, or check it.",
    ),
    Command(
        "understand",
        "charter.cli.understand",
        "How one input is understood: triggers, dialogue act, examples, bands, decision.",
    ),
)
_BY_NAME = {c.name: c for c in COMMANDS}

# what the root and every subcommand share; a subcommand is built under a root made alike
_SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "no_args_is_help": True,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}

_LOADED: dict[str, Any] = {}  # command name -> its click command, once its module is imported


def _holder_root() -> None:
    """A root for building one module's commands: with a callback, a lone command is still a
    subcommand, as it is under ``charter``."""


def load(command: Command) -> Any:
    """The click command of ``command``, importing its module (once per process)."""
    if command.name not in _LOADED:
        module = importlib.import_module(command.module)
        holder = typer.Typer(**_SETTINGS)
        holder.callback()(_holder_root)
        register = getattr(module, "register", None)
        if register is not None:
            register(holder)
        else:
            holder.add_typer(module.app, name=command.name)
        built = typer.main.get_group(holder).commands
        if command.name not in built:
            raise LookupError(f"{command.module} does not define the command {command.name!r}")
        _LOADED.update(built)
    return _LOADED[command.name]


class _Commands(MutableMapping[str, Any]):
    """The root's ``commands``: every name in ``COMMANDS``, a module imported on first access.
    click and typer look commands up (and suggest names for a typo) through this mapping."""

    def __getitem__(self, name: str) -> Any:
        return load(_BY_NAME[name])

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("add a command to charter.cli.main.COMMANDS")

    def __delitem__(self, name: str) -> None:
        raise TypeError("charter's commands are fixed by charter.cli.main.COMMANDS")

    def __iter__(self) -> Iterator[str]:
        return iter(_BY_NAME)

    def __len__(self) -> int:
        return len(_BY_NAME)

    def __contains__(self, name: object) -> bool:
        return name in _BY_NAME


class LazyGroup(TyperGroup):
    """The ``charter`` group: subcommands from ``COMMANDS``, each imported when invoked."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands()

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        # not Mapping.get: it would turn a KeyError raised by importing the module into
        # "No such command"
        command = _BY_NAME.get(cmd_name)
        return None if command is None else load(command)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_BY_NAME)  # typer's would load each command to list the names

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # click would load every command for its short help; the table has it
        limit = formatter.width - 6 - max(len(c.name) for c in COMMANDS)
        rows = [
            (c.name, TyperCommand(c.name, help=c.help).get_short_help_str(limit)) for c in COMMANDS
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    cls=LazyGroup,
    name="charter",
    help="Compile YAML domain packs into deterministic checkers and run them.",
    **_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"charter {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    no_plugins: Annotated[
        bool,
        typer.Option(
            "--no-plugins",
            help="Load no third-party plugins (built-ins only); like "
            "CHARTER_DISABLE_PLUGIN_AUTOLOAD=1.",
        ),
    ] = False,
) -> None:
    """Charter: rules, goals, memory and skills around a small local LLM."""
    from charter.cli.common import STATE  # here: it imports the compiler

    STATE.no_plugins = no_plugins


# typer ships its own copy of click; its usage error is the base class of typer.BadParameter
_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]


def _crash_log() -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    fd, name = tempfile.mkstemp(prefix=f"charter-crash-{stamp}-", suffix=".log")
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(f"charter {__version__}\nargv: {sys.argv}\n\n")
        fh.write(traceback.format_exc())
    return Path(name)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns (and with ``sys.exit`` in the console script, exits with) a code."""
    common = sys.modules.get("charter.cli.common")
    if common is not None:  # not imported yet: its STATE still has the defaults
        common.STATE.no_plugins = False
    try:
        rv = app(args=argv, prog_name="charter", standalone_mode=False)
    except _USAGE_ERROR as exc:
        exc.show()  # type: ignore[attr-defined]
        return EXIT_USAGE
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 130
    except Exception as exc:  # the last line of defence: a log, not a traceback
        log = _crash_log()
        typer.echo(
            f"charter: internal error: {type(exc).__name__}: {exc}\n"
            f"the full traceback is in {log}; please report it",
            err=True,
        )
        return EXIT_INTERNAL
    return rv if isinstance(rv, int) else 0


def console() -> None:
    # A run allocates a few hundred thousand objects that live to its end (modules, packs): at
    # the default threshold of 700 the collector scans them some 400 times in one cold
    # ``charter validate``, for cycles that are not there (mypy does the same).
    gc.set_threshold(50_000)
    code = main()
    # Python's shutdown would collect every object once more before the OS frees them anyway
    gc.freeze()
    sys.exit(code)
