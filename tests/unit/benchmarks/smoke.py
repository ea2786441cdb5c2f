"""What every benchmark smoke test does: run the script with ``--quick --json`` in a
subprocess, and check the printed lines and the per-target verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def run_quick(script: str, out_dir: Path, *args: str) -> tuple[str, dict[str, Any]]:
    """(stdout, figures) of ``benchmarks/<script> --quick --json FILE``; fails with its
    output when it exits non-zero."""
    out = out_dir / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick", "--json", str(out), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(out.read_text(encoding="utf-8"))


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
