"""Smoke test of ``benchmarks/bench_turn.py``: it runs, prints every figure and a verdict per
target, and writes its JSON. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.benchmarks.smoke import run_quick

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def test_quick_run(tmp_path: Path) -> None:
    stdout, figures = run_quick("bench_turn.py", tmp_path)
    lines = stdout.splitlines()
    assert lines[0].startswith(
        "Charter turn benchmark: ecommerce pack, scripted backend, 20 turns (4 per user)"
    )
    assert "  verdicts: ask 5, pass 15" in lines
    assert figures["turn"]["turns"] == 20
    assert 0 < figures["turn"]["p50_ms"] <= figures["turn"]["p90_ms"]
    verdicts = [t["target"].split(" ")[0] for t in figures["targets"]]
    if "generation" in figures:  # llama-cpp-python and the plugin are installed
        assert verdicts == ["framework", "generation"]
        assert figures["generation"]["ratio"] > 0
    else:
        pytest.skip("llama-cpp-python is not installed: generation speed was not measured")
    assert all(line.endswith((": OK", ": MISSED")) for line in lines[-len(verdicts) :])
