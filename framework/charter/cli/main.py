"""The ``charter`` command. Each subcommand lives in its own module and returns an exit code.

Exit codes: 0 ok, 1 user error (with diagnostics), 2 usage error, 3 internal error (the
traceback goes to a log file whose path is printed, never to the user's terminal).
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Annotated

import typer

from charter._version import __version__
from charter.cli import chat as chat_cmd
from charter.cli import check as check_cmd
from charter.cli import config as config_cmd
from charter.cli import demo as demo_cmd
from charter.cli import goals as goals_cmd
from charter.cli import health as health_cmd
from charter.cli import learn as learn_cmd
from charter.cli import memory as memory_cmd
from charter.cli import new as new_cmd
from charter.cli import plugins as plugins_cmd
from charter.cli import schema as schema_cmd
from charter.cli import serve as serve_cmd
from charter.cli import skills as skills_cmd
from charter.cli import test as test_cmd
from charter.cli import tickets as tickets_cmd
from charter.cli import trace as trace_cmd
from charter.cli import validate as validate_cmd
from charter.cli.common import EXIT_INTERNAL, EXIT_USAGE, STATE, DiagFormat, OutFormat

app = typer.Typer(
    name="charter",
    help="Compile YAML domain packs into deterministic checkers and run them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
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
    STATE.no_plugins = no_plugins


@app.command()
def validate(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Packs or directories of packs.")
    ] = None,
    strict: Annotated[bool, typer.Option(help="Fail on warnings too.")] = False,
    format: Annotated[
        DiagFormat, typer.Option("--format", help="Output format.")
    ] = DiagFormat.text,
    max_errors: Annotated[int, typer.Option(min=0, help="Show at most N problems (0: all).")] = 0,
    cache: Annotated[bool, typer.Option(help="Use the compile cache.")] = True,
    all_installed: Annotated[
        bool, typer.Option("--all-installed", help="Also validate every pack plugins install.")
    ] = False,
) -> None:
    """Load, schema-check and compile packs. Silent on success."""
    raise typer.Exit(
        validate_cmd.run(
            paths or [],
            strict=strict,
            fmt=format,
            max_errors=max_errors,
            use_cache=cache,
            all_installed=all_installed,
        )
    )


@app.command()
def check(
    text: Annotated[str | None, typer.Argument(help="The text to check (default: stdin).")] = None,
    domain: Annotated[str, typer.Option(help="Pack directory or name.")] = ...,  # type: ignore[assignment]
    file: Annotated[Path | None, typer.Option(help="Read the text from a file.")] = None,
    input: Annotated[str, typer.Option("--input", help="The user's input for this turn.")] = "",
    context: Annotated[str | None, typer.Option(help="Turn context as a JSON object.")] = None,
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
) -> None:
    """Check one output: findings, verdict and the repaired text."""
    raise typer.Exit(
        check_cmd.run(domain, text, file=file, input=input, context=context, fmt=format)
    )


@app.command()
def test(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Packs or directories of packs.")
    ] = None,
    threshold: Annotated[
        float, typer.Option(min=0, max=100, help="Fail below this rule coverage (percent).")
    ] = 0.0,
    junit_xml: Annotated[Path | None, typer.Option("--junit-xml", help="Write JUnit XML.")] = None,
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List passing cases too.")
    ] = False,
    coverage: Annotated[bool, typer.Option("--coverage", help="Show coverage per rule.")] = False,
    all_installed: Annotated[
        bool, typer.Option("--all-installed", help="Also test every pack plugins install.")
    ] = False,
) -> None:
    """Run the packs' test cases and report rule coverage."""
    raise typer.Exit(
        test_cmd.run(
            paths or [],
            threshold=threshold,
            junit=junit_xml,
            fmt=format,
            verbose=verbose,
            show_coverage=coverage,
            all_installed=all_installed,
        )
    )


@app.command()
def schema(
    kind: Annotated[str | None, typer.Argument(help="pack, rules, ... (none: list kinds)")] = None,
) -> None:
    """Print the JSON Schema of a pack file kind."""
    raise typer.Exit(schema_cmd.run(kind))


@app.command()
def plugins(
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
) -> None:
    """List plugins: distribution, version, status, and what each hook registered."""
    raise typer.Exit(plugins_cmd.run(format))


app.add_typer(new_cmd.app, name="new")
app.add_typer(goals_cmd.app, name="goals")
app.add_typer(memory_cmd.app, name="memory")
app.add_typer(tickets_cmd.app, name="tickets")
app.add_typer(skills_cmd.app, name="skills")
app.add_typer(config_cmd.app, name="config")
trace_cmd.register(app)
serve_cmd.register(app)
chat_cmd.register(app)
demo_cmd.register(app)
learn_cmd.register(app)
health_cmd.register(app)


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
    STATE.no_plugins = False
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
    sys.exit(main())
