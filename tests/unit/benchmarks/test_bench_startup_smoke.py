"""Smoke test of ``benchmarks/bench_startup.py``: it runs every command as a whole process,
prints each figure and a verdict per target, and writes its JSON. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.benchmarks.smoke import check_lines, run_quick

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

EXPECTED_LINES = (
    "charter start-up: whole processes, median of 2 rounds (",
    "  command                           seconds  × python -c pass",
    "  python -c pass ",
    "  charter --version ",
    "  charter validate (cold) ",
    "  charter validate (warm cache) ",
)
TARGETS = ("charter --version ≤ 0.3 s (median ", "charter validate (cold) ≤ 1 s (median ")


def test_bench_startup_runs(tmp_path: Path) -> None:
    stdout, figures = run_quick("bench_startup.py", tmp_path)
    check_lines(stdout, EXPECTED_LINES, TARGETS)
    labels = ["python -c pass", *(t.split(" ≤")[0] for t in TARGETS)]
    assert set(labels) <= set(figures["seconds"])
    assert figures["ratio"]["python -c pass"] == 1.0
    assert len(figures["targets"]) == len(TARGETS)
