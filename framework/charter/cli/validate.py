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
    wanted = list(paths)
    if all_installed:
        wanted += [reg.packs[name] for name in sorted(reg.packs)]
    elif not wanted:
        wanted = [Path(".")]
    packs, more = find_packs(wanted, reg.packs)
    diags += more
    _, more = compile_all(packs, reg, use_cache=use_cache)
    diags += more
    failed = any(d.is_error or strict for d in diags)
    if diags or fmt in (DiagFormat.json, DiagFormat.sarif):
        emit_diagnostics(diags, fmt, max_errors)
    return EXIT_USER if failed else EXIT_OK
