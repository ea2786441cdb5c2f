"""``charter validate|check|test|schema|plugins``: the options and help of the commands that work
on packs and plugins. Each command imports the module that runs it when it is invoked, so
loading this module for ``validate`` does not load what ``test`` needs (the skill runner and
its stores).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from charter.cli.common import DiagFormat, OutFormat


def validate(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Packs (directories or names) or directories of packs."),
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
    all_consequences: Annotated[
        bool,
        typer.Option(
            "--all-consequences",
            help="Also list the problems that only follow from another (folded under it).",
        ),
    ] = False,
) -> None:
    """Load, schema-check and compile packs. Silent on success."""
    from charter.cli import validate as validate_cmd

    raise typer.Exit(
        validate_cmd.run(
            paths or [],
            strict=strict,
            fmt=format,
            max_errors=max_errors,
            use_cache=cache,
            all_installed=all_installed,
            all_consequences=all_consequences,
        )
    )


def check(
    text: Annotated[str | None, typer.Argument(help="The text to check (default: stdin).")] = None,
    domain: Annotated[str, typer.Option(help="Pack directory or name.")] = ...,  # type: ignore[assignment]
    file: Annotated[Path | None, typer.Option(help="Read the text from a file.")] = None,
    input: Annotated[str, typer.Option("--input", help="The user's input for this turn.")] = "",
    context: Annotated[str | None, typer.Option(help="Turn context as a JSON object.")] = None,
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Show every rule: why it fired, was skipped or passed, with spans."
        ),
    ] = False,
) -> None:
    """Check one output: findings, verdict and the repaired text."""
    from charter.cli import check as check_cmd

    raise typer.Exit(
        check_cmd.run(
            domain,
            text,
            file=file,
            input=input,
            context=context,
            fmt=format,
            explain_rules=explain,
        )
    )


def test(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Packs (directories or names) or directories of packs."),
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
    keyword: Annotated[
        str | None,
        typer.Option(
            "-k",
            help="Only run cases matching the expression, as pytest -k: "
            "'transfer and not refusal' (names, kinds, packs, file names).",
        ),
    ] = None,
    min_recall: Annotated[
        float,
        typer.Option(
            "--min-recall",
            min=0,
            max=100,
            metavar="N",
            help="Fail when an intent's recall on tests/intents.yaml is below N percent.",
        ),
    ] = 0.0,
    min_precision: Annotated[
        float,
        typer.Option(
            "--min-precision",
            min=0,
            max=100,
            metavar="N",
            help="Fail when an intent's precision on tests/intents.yaml is below N percent.",
        ),
    ] = 0.0,
    all_consequences: Annotated[
        bool,
        typer.Option(
            "--all-consequences",
            help="Also list the problems that only follow from another (folded under it).",
        ),
    ] = False,
) -> None:
    """Run the packs' test cases and report rule coverage."""
    from charter.cli import test as test_cmd

    raise typer.Exit(
        test_cmd.run(
            paths or [],
            threshold=threshold,
            junit=junit_xml,
            fmt=format,
            verbose=verbose,
            show_coverage=coverage,
            all_installed=all_installed,
            keyword=keyword,
            min_recall=min_recall,
            min_precision=min_precision,
            all_consequences=all_consequences,
        )
    )


def schema(
    kind: Annotated[str | None, typer.Argument(help="pack, rules, ... (none: list kinds)")] = None,
) -> None:
    """Print the JSON Schema of a pack file kind."""
    from charter.cli import schema as schema_cmd

    raise typer.Exit(schema_cmd.run(kind))


def plugins(
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
) -> None:
    """List plugins: distribution, version, status, and what each hook registered."""
    from charter.cli import plugins as plugins_cmd

    raise typer.Exit(plugins_cmd.run(format))


def register(app: typer.Typer) -> None:
    """Add the five commands to the ``charter`` command."""
    for command in (validate, check, test, schema, plugins):
        app.command()(command)
