"""What every benchmark smoke test does: run the script with ``--quick --json`` in a
subprocess, and check the printed lines and the per-target verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.once import once_per_run

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def run_quick(script: str, out_dir: Path, *args: str) -> tuple[str, dict[str, Any]]:
    """(stdout, figures) of ``benchmarks/<script> --quick --json FILE``; fails with its
    output when it exits non-zero. Its temporary files (a baseline's git worktree) go to
    ``out_dir/tmp``: another benchmark running beside it keeps its own."""
    out = out_dir / "figures.json"
    tmp = out_dir / "tmp"
    tmp.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick", "--json", str(out), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(out.read_text(encoding="utf-8"))


def quick_once(
    tmp_path_factory: pytest.TempPathFactory,
    script: str,
    *args: str,
    check: Callable[[Path], object] | None = None,
) -> tuple[str, dict[str, Any]]:
    """``run_quick`` once per test run, whatever the number of workers
    (``tests/support/once.py``): a module whose tests the scheduler splits over two workers
    still runs its benchmark once. ``check(tmp)`` is called before and after the run with the
    run's own temporary directory; the two values must be equal (what the benchmark must leave
    as it found it)."""

    def make(directory: Path) -> list[Any]:
        before = check(directory / "tmp") if check is not None else None
        stdout, figures = run_quick(script, directory, *args)
        assert (check(directory / "tmp") if check is not None else None) == before
        return [stdout, figures]

    stdout, figures = once_per_run(tmp_path_factory, "-".join((script, *args)), make)
    return stdout, figures


def worktrees_in(tmp: Path) -> set[str]:
    """The repository's git worktrees under ``tmp`` (a benchmark's baseline, while it runs)."""
    done = subprocess.run(
        ["git", "-C", str(BENCH.parent), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
    )
    paths = {line.removeprefix("worktree ") for line in done.stdout.splitlines()}
    root = str(tmp.resolve())
    return {p for p in paths if p.startswith(root)}


def check_lines(stdout: str, expected: Sequence[str], targets: Sequence[str]) -> None:
    """Every expected line starts some printed line; the last lines are one verdict per
    target, in order, each OK or MISSED."""
    lines = stdout.splitlines()
    for prefix in expected:
        assert any(line.startswith(prefix) for line in lines), f"missing: {prefix!r}\n{stdout}"
    verdicts = lines[-len(targets) :]
    for prefix, line in zip(targets, verdicts, strict=True):
        assert line.startswith(prefix), line
        assert line.endswith(": OK") or line.endswith(": MISSED"), line
