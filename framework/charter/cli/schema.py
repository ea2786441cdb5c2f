"""``charter schema [KIND]``: print the JSON Schema of a pack file kind, for editors."""

from __future__ import annotations

import json

import typer

from charter.cli.common import EXIT_OK, EXIT_USAGE
from charter.pack.schema import KINDS, schema_for


def run(kind: str | None) -> int:
    if kind is None:
        width = max(len(k.name) for k in KINDS.values())
        for k in KINDS.values():
            typer.echo(f"{k.name:<{width}}  {k.pattern}")
        return EXIT_OK
    if kind not in KINDS:
        typer.echo(f"charter schema: unknown kind '{kind}' (kinds: {', '.join(KINDS)})", err=True)
        return EXIT_USAGE
    typer.echo(json.dumps(schema_for(kind), ensure_ascii=False, indent=2))
    return EXIT_OK
