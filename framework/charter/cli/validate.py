"""``charter validate``: load, schema-check and compile packs; silent on success."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from charter.cli.common import (
    EXIT_OK,
    EXIT_USER,
    DiagFormat,
    compile_all,
    emit_diagnostics,
    find_packs,
    registry,
    requested,
)


def run(
    paths: Sequence[Path],
    *,
    strict: bool,
    fmt: DiagFormat,
    max_errors: int,
    use_cache: bool,
    all_installed: bool = False,
) -> int:
    reg, diags = registry()
    packs, more = find_packs(requested(paths, reg, all_installed), reg.packs)
    diags += more
    _, more = compile_all(packs, reg, use_cache=use_cache)
    diags += more
    failed = any(d.is_error or strict for d in diags)
    if diags or fmt in (DiagFormat.json, DiagFormat.sarif):
        emit_diagnostics(diags, fmt, max_errors)
    return EXIT_USER if failed else EXIT_OK
