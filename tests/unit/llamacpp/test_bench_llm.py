"""Smoke test of ``benchmarks/bench_llm.py``'s ``generation_speed``: it runs both sides, checks
that they generated the same text, and reports every figure. No timing is asserted."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

# slow: benchmark smoke: generates with the bundled model (about 25 s)
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
EXPECTED_LINES = (
    "LLM generation speed: Gemma 3 270M Q4_K_M, 3 round(s) x max_tokens 32, temperature 0, "
    "n_ctx 2048, ",
    "  default model ready (assembled or sha256-verified) in ",
    "  tokens/s (prompt included)",
    "  charter llamacpp backend ",
    "  bare Llama.create_chat_completion ",
    "  charter backend with logprobs ",
    "  charter / bare tokens/s, median over rounds: ",
    "  with logprobs / bare, median over rounds: ",
    "outcomes: both sides generated the same text in all 3 rounds: OK",
)


@pytest.mark.usefixtures("model_cache")
def test_generation_speed_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    bench = importlib.import_module("bench_llm")
    try:
        lines, figures = bench.generation_speed(quick=True)
    finally:
        sys.modules.pop("bench_llm", None)
    assert len(lines) == len(EXPECTED_LINES)
    for line, prefix in zip(lines, EXPECTED_LINES, strict=True):
        assert line.startswith(prefix), (line, prefix)
    assert sorted(figures) == [
        "load_ms",
        "logprobs_ratio",
        "max_tokens",
        "ok",
        "pooled_ratio",
        "ratio",
        "rounds",
        "target_ratio",
        "tokens",
        "tokens_per_s",
        "verify_ms",
    ]
    assert (figures["rounds"], figures["max_tokens"], figures["target_ratio"]) == (3, 32, 0.9)
    assert figures["ok"] == (figures["ratio"] >= 0.9)
    assert sorted(figures["tokens_per_s"]) == ["bare", "charter", "charter+logprobs"]


def test_skips_without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    bench = importlib.import_module("bench_llm")
    try:
        lines, figures = bench.generation_speed(quick=True)
    finally:
        sys.modules.pop("bench_llm", None)
    reason = "skipped: llama_cpp is not installed (pip install -e plugins/charter-llamacpp)"
    assert (lines, figures) == ([f"LLM generation speed: {reason}"], {"skipped": reason})
