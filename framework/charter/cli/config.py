"""``charter config show|check``: the runtime configuration in force here, and its problems.

``show`` prints the effective configuration (defaults < charter.toml or [tool.charter] <
environment) with secrets masked and each value's source; problems go to stderr and make the
exit status 1. ``check`` is silent when the configuration is valid (warnings are printed but
pass unless ``--strict``), and exits 1 with diagnostics otherwise; ``--serve`` also requires
what ``charter serve`` needs: tenants whose tokens are set.

Diagnostics in text form show the offending line of the file with its secrets masked.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated

import typer

from charter.cli.common import EXIT_OK, EXIT_USER, DiagFormat, emit_diagnostics
from charter.config import Config, load_config
from charter.config.show import render_json, render_toml
from charter.diagnostics import Diagnostic, SourceCache, render_text, sort_diagnostics

app = typer.Typer(
    help="The runtime configuration: show it with its sources, or check it.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class ShowFormat(StrEnum):
    toml = "toml"
    json = "json"


@app.command("show")
def show(
    format: Annotated[
        ShowFormat, typer.Option("--format", help="Output format.")
    ] = ShowFormat.toml,
) -> None:
    """Print the effective configuration, secrets masked, with where each value came from."""
    raise typer.Exit(run_show(format))


@app.command("check")
def check(
    strict: Annotated[bool, typer.Option(help="Fail on warnings too.")] = False,
    serve: Annotated[
        bool, typer.Option("--serve", help="Also check what charter serve needs.")
    ] = False,
    format: Annotated[
        DiagFormat, typer.Option("--format", help="Output format.")
    ] = DiagFormat.text,
) -> None:
    """Validate the configuration. Silent on success."""
    raise typer.Exit(run_check(strict=strict, serve=serve, fmt=format))


def render_diagnostics(config: Config, diags: Sequence[Diagnostic]) -> str:
    """Text diagnostics whose quoted source lines have the file's secrets masked."""
    return render_text(sort_diagnostics(diags), SourceCache(texts=config.redacted_sources(diags)))


def run_show(fmt: ShowFormat) -> int:
    config, diags = load_config()
    if diags:
        sys.stderr.write(render_diagnostics(config, diags))
    sys.stdout.write(render_json(config) if fmt is ShowFormat.json else render_toml(config))
    return EXIT_USER if any(d.is_error for d in diags) else EXIT_OK


def run_check(*, strict: bool, serve: bool, fmt: DiagFormat) -> int:
    config, diags = load_config()
    if serve:
        diags = [*diags, *config.check_serve()]
    if fmt is DiagFormat.text:
        sys.stdout.write(render_diagnostics(config, diags))
    elif diags or fmt in (DiagFormat.json, DiagFormat.sarif):
        emit_diagnostics(diags, fmt)
    failed = any(d.is_error or strict for d in diags)
    return EXIT_USER if failed else EXIT_OK
