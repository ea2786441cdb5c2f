"""Smoke test of ``benchmarks/bench_skills.py``: it runs, prints every figure and a verdict per
target, writes its JSON, and its outcome check holds (and would fire). No timing is asserted."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.unit.benchmarks.smoke import quick_once

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
EXPECTED_LINES = (
    "Charter skill guard benchmark: policy_search (finance), 200 calls, Python ",
    "  SkillRunner.call (guarded) ",
    "  the implementation, directly ",
    "  guard overhead (median) ",
    "outcomes: both sides returned the same results for all 200 calls: OK",
    "FAQ lookup, 200 generated Chinese entries (400 phrasings), 200 paraphrased queries, k=3:",
    "  FaqIndex.lookup ",
)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return quick_once(tmp_path_factory, "bench_skills.py")


def test_prints_every_line_and_a_verdict(quick_run: tuple[str, dict[str, Any]]) -> None:
    stdout, _ = quick_run
    lines = stdout.splitlines()
    for prefix in EXPECTED_LINES:
        assert any(line.startswith(prefix) for line in lines), f"missing: {prefix!r}\n{stdout}"
    assert lines[-1].startswith("guard overhead ")
    assert lines[-1].endswith(": OK") or lines[-1].endswith(": MISSED")


def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    assert figures["calls"] == 200
    for side in ("guarded_us", "direct_us"):
        assert set(figures[side]) == {"p50", "p99"}
        assert 0 < figures[side]["p50"] <= figures[side]["p99"]
    assert figures["overhead_us"] == pytest.approx(
        figures["guarded_us"]["p50"] - figures["direct_us"]["p50"], abs=0.02
    )
    assert [t["target"].split(" ")[:2] for t in figures["targets"]] == [["guard", "overhead"]]
    assert figures["faq"]["entries"] == 200


@pytest.fixture
def bench_skills(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("bench_skills")


def test_the_outcome_check_fires_when_the_sides_disagree(
    bench_skills: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = bench_skills.SkillRunner.call

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        return replace(out, result={**out.result, "summary": "another answer"})

    monkeypatch.setattr(bench_skills.SkillRunner, "call", call)
    with pytest.raises(AssertionError, match="the sides disagree on "):
        bench_skills.measure(60)
