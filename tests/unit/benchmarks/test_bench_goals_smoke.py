"""Smoke test of ``benchmarks/bench_goals.py``: it runs, prints every figure and a verdict per
target, writes its JSON, and its outcome-equality check holds (and would fire). No timing is
asserted."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.plugins.host import default_host
from tests.unit.benchmarks.smoke import check_lines, quick_once

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks"
EXPECTED_LINES = (
    "Charter goal store benchmark: 100 goals x 2 transitions (pending -> active -> completed), "
    "1 round(s), SQLite ",
    "  median over rounds ",
    "  GoalStore.transition ",
    "  raw sqlite3, same statements ",
    "  store time / raw time ",
    "outcomes: both sides made the same 200 transitions and wrote the same history: OK",
    "planner latency, ecommerce pack (8 intents), median µs per input over its ",
    "  Planner.plan ",
    "  seed-style keyword split ",
    "  planner / seed-style ",
)
TARGETS = (
    "store within 3x of raw sqlite3 (",
    "store >= 5,000 transitions/s (",
    "planner median ",
)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return quick_once(tmp_path_factory, "bench_goals.py")


def test_prints_every_expected_line_and_a_verdict_per_target(
    quick_run: tuple[str, dict[str, Any]],
) -> None:
    stdout, _ = quick_run
    check_lines(stdout, EXPECTED_LINES, TARGETS)


def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    assert figures["settings"] == {"goals": 100, "rounds": 1}
    assert figures["transitions"] == 200
    assert set(figures["planner"]) == {"planner_us", "seed_style_us", "inputs"}
    pack, _ = compile_path(ROOT / "domains" / "ecommerce", default_host().registry, cache_dir=None)
    assert pack is not None and pack.goals is not None
    assert figures["planner"]["inputs"] == len(pack.goals.cases)  # every planner test input
    for key in ("store_tps", "raw_sqlite3_tps", "ratio"):
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert [t["target"].split(" (")[0] for t in figures["targets"]][:2] == [
        "store within 3x of raw sqlite3",
        "store >= 5,000 transitions/s",
    ]
    assert figures["targets"][2]["target"].startswith("planner median ")


@pytest.fixture
def bench_goals(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("bench_goals")


def test_the_outcome_check_fires_when_the_sides_disagree(
    bench_goals: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def skips_the_history(path: Path, ids: list[str]) -> float:
        import sqlite3

        conn = sqlite3.connect(path, isolation_level=None)
        for goal_id in ids:
            conn.execute("UPDATE goal_tree SET status = 'completed' WHERE id = ?", (goal_id,))
        conn.close()
        return 1.0

    monkeypatch.setattr(bench_goals, "raw_side", skips_the_history)
    with pytest.raises(AssertionError, match="the two sides disagree"):
        bench_goals.measure(bench_goals.Settings(goals=5, rounds=1))
