"""``charter validate``: load, schema-check and compile packs; silent on success."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
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
    same_names,
)
from charter.compile.api import compile_path
from charter.compile.consequences import fold_failed_plugins
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, count, sort_diagnostics, unfold


def run(
    paths: Sequence[str | Path],
    *,
    strict: bool,
    fmt: DiagFormat,
    max_errors: int,
    use_cache: bool,
    all_installed: bool = False,
    all_consequences: bool = False,
) -> int:
    reg, diags = registry()
    packs, more = find_packs(requested(paths, reg, all_installed), reg.packs)
    diags += more
    compiled, more = compile_each(packs, reg, use_cache=use_cache)
    diags = fold_failed_plugins(diags + more)
    if all_consequences:
        diags = unfold(diags)
    failed = any(d.is_error or strict for d in diags)
    if diags or fmt in (DiagFormat.json, DiagFormat.sarif):
        emit_diagnostics(diags, fmt, max_errors)
    if diags and fmt is DiagFormat.text:
        sys.stdout.write(summary(diags, len(packs), len(packs) - compiled, strict) + "\n")
    return EXIT_USER if failed else EXIT_OK


@dataclass(frozen=True)
class _Compiled:
    """What validate keeps of a compiled pack (a child process sends it back)."""

    name: str
    root: str


# the registry and the cache setting of the run, for the forked workers: set before the pool
# forks, so that they inherit it instead of receiving the registry pickled with each task
_RUN: tuple[Registry, bool] | None = None


def compile_each(
    packs: Sequence[Path], reg: Registry, *, use_cache: bool
) -> tuple[int, list[Diagnostic]]:
    """How many of ``packs`` compiled, and every problem, in the order of ``packs``.

    Packs compile independently, so on a machine with more than one core they compile in
    forked worker processes, one pack at a time each: validating a repository of packs (the
    pre-commit hook) takes the time of its slowest share, not of the sum. Nothing else runs
    there: the diagnostics and names come back, and are reported as a serial run would."""
    global _RUN
    jobs = min(len(packs), os.cpu_count() or 1, _MAX_JOBS)
    if jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        compiled, diags = compile_all(packs, reg, use_cache=use_cache)
        return len(compiled), diags
    _RUN = (reg, use_cache)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_compile_one, packs, chunksize=1)
    finally:
        _RUN = None
    kept = [pack for pack, _ in results if pack is not None]
    return len(kept), [d for _, more in results for d in more] + same_names(kept)


_MAX_JOBS = 4


def _compile_one(path: Path) -> tuple[_Compiled | None, list[Diagnostic]]:
    assert _RUN is not None, "set by compile_each before the pool forks"
    reg, use_cache = _RUN
    pack, diags = compile_path(path, reg, **({} if use_cache else {"cache_dir": None}))
    return (_Compiled(pack.name, pack.root) if pack is not None else None), diags


def summary(diags: Sequence[Diagnostic], checked: int, broken: int, strict: bool) -> str:
    """The line after the problems, as ruff and mypy end theirs: how many, and of how many
    packs, so a long scroll of diagnostics ends with its count. A problem reached twice (two
    packs sharing a file) is printed once, and counted once; what is folded under a problem
    is counted apart."""
    diags = sort_diagnostics(diags)
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    parts = []
    if errors:
        parts.append(_count(errors, "error"))
    if warnings:
        parts.append(_count(warnings, "warning") + (" (errors under --strict)" if strict else ""))
    if folded := count(diags):
        parts.append(f"{_count(folded, 'consequence')} not shown")
    line = f"{', '.join(parts)}; {_count(checked, 'pack')} checked"
    if broken:
        line += f", {broken} did not compile"
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
