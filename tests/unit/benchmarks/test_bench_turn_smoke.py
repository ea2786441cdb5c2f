"""Smoke test of ``benchmarks/bench_turn.py``: it runs, prints every figure and a verdict per
target, and writes its JSON. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def test_quick_run(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_turn.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "Charter turn benchmark: ecommerce pack, scripted backend, 20 turns (4 per user)"
    )
    assert "  verdicts: ask 5, pass 15" in lines
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["turn"]["turns"] == 20
    assert 0 < figures["turn"]["p50_ms"] <= figures["turn"]["p90_ms"]
    verdicts = [t["target"].split(" ")[0] for t in figures["targets"]]
    if "generation" in figures:  # llama-cpp-python and the plugin are installed
        assert verdicts == ["framework", "generation"]
        assert figures["generation"]["ratio"] > 0
    else:
        pytest.skip("llama-cpp-python is not installed: generation speed was not measured")
    assert all(line.endswith((": OK", ": MISSED")) for line in lines[-len(verdicts) :])
