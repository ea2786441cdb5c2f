"""``charter understand "TEXT" --domain X``: how one input is understood, layer by layer — the
keyword triggers that fire, the dialogue act, the examples' ranking (top 5: intent, score,
nearest example, veto), each intent's bands and the margin, and the decision the planner takes
on an empty session with the layer that took it. ``--bands`` prints the fitted bands alone.

Exit status: 0 ok, 1 when the pack does not compile, 2 for neither a text nor ``--bands``.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    DiagFormat,
    compile_all,
    emit_diagnostics,
    one_pack,
    runtime_registry,
)
from charter.diagnostics import sort_diagnostics


def understand(
    text: Annotated[
        str | None, typer.Argument(metavar="TEXT", help="What a customer says.")
    ] = None,
    domain: Annotated[
        str, typer.Option("--domain", metavar="PACK", help="Pack directory or name.")
    ] = ...,  # type: ignore[assignment]
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    bands: Annotated[
        bool,
        typer.Option("--bands", help="Print each intent's examples count, bands and margin."),
    ] = False,
) -> None:
    """How one input is understood: triggers, dialogue act, examples, bands, decision."""
    raise typer.Exit(run(text, domain, as_json=as_json, bands=bands))


def register(app: typer.Typer) -> None:
    app.command("understand")(understand)


def run(text: str | None, domain: str, *, as_json: bool, bands: bool) -> int:
    if text is None and not bands:
        typer.echo("charter understand: give a TEXT, or --bands", err=True)
        return EXIT_USAGE
    reg, diags = runtime_registry(quiet=as_json)
    if reg is None:
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    root, problem = one_pack(domain, reg.packs, "domain")
    if root is None:
        emit_diagnostics([*diags, *filter(None, [problem])], DiagFormat.text)
        return EXIT_USER
    packs, more = compile_all([root], reg)
    diags = sort_diagnostics([*diags, *more])
    if not packs:
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    pack = packs[0]
    # imported here: the planner and the embedder load only when the command runs
    from charter.agent.parts import understander_for
    from charter.conversations import understanding_explain as U

    understander = understander_for(pack, reg, None)
    if text is None:
        rows = U.bands_of(pack, understander)
        margin = understander.spec.margin if understander is not None else None
        if as_json:
            doc = {
                "pack": pack.name,
                "bands": [r.as_dict() for r in rows],
                "margin": round(margin, 4) if margin is not None else None,
            }
            typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        else:
            sys.stdout.write("\n".join([f"{pack.name}: bands", *U.render_bands(rows, margin)]))
            sys.stdout.write("\n")
        return EXIT_OK
    explained = U.explain(pack, reg, understander, text)
    if as_json:
        typer.echo(json.dumps(explained.as_dict(), ensure_ascii=False, indent=2))
    else:
        if diags:  # warnings only: a pack with errors did not compile
            # said once, not the whole list on every call: charter validate lists them
            n = len(diags)
            sys.stderr.write(
                f"charter understand: {n} warning{'s' if n > 1 else ''} in the pack "
                "(charter validate lists them)\n"
            )
        sys.stdout.write(U.render(explained))
    return EXIT_OK
