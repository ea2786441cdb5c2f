"""Generation speed through Charter's ``llamacpp`` backend against bare llama-cpp-python, for
``bench_turn.py`` (which prints it; nothing is printed here unless run as a script).

Both sides load the bundled Gemma 3 270M Q4_K_M with the same settings (``n_ctx``, ``n_batch``,
llama-cpp-python's default thread count) as two separate ``Llama`` objects, and format the
conversation with the same chat template (Gemma 3's; the GGUF carries none). Each round asks both
the same question (a system message and a user message; the questions change from round to
round, so every round evaluates a new prompt suffix) at temperature 0 with the same
``max_tokens`` and seed; which side goes first alternates. The bare side is
``Llama.create_chat_completion``; the Charter side is ``LlamaCppBackend().create(...).generate``
— its template rendering, stop handling, lock and timings included. Each call is timed on its own
with the garbage collector off; tokens/s is generated tokens over wall time, prompt included,
and the headline ratio is the median over rounds of the per-round ratio.
Before anything is reported it asserts that both sides produced the same text every round.
A third side, the Charter backend with ``logprobs`` on (a model of its own, so it does not find
the prompt the first side just evaluated), shows what token logprobs cost.
Target: Charter tokens/s ÷ bare tokens/s ≥ 0.9.

    python benchmarks/bench_llm.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import io
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

TARGET_RATIO = 0.9
SEED = 20240501
N_CTX = 2048
N_BATCH = 512
SYSTEM = "You are a helpful bank customer-service assistant. Answer briefly."
QUESTIONS = (
    "How do I apply for a credit card?",
    "What is the interest rate on a one-year deposit?",
    "How long does a transfer to another bank take?",
    "Can I raise my card's limit?",
    "Where can I see my account balance?",
    "How do I report a lost card?",
    "What documents do I need to open an account?",
    "Is there a fee for early repayment of a loan?",
)


def _timed(call: Callable[[], tuple[str, int]]) -> tuple[str, int, float]:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        text, tokens = call()
        return text, tokens, time.perf_counter() - t0
    finally:
        gc.enable()


def _rate(tokens: Sequence[int], seconds: Sequence[float]) -> float:
    return sum(tokens) / sum(seconds) if sum(seconds) > 0 else 0.0


def generation_speed(quick: bool) -> tuple[list[str], dict[str, Any]]:
    try:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from charter.contracts.models import Message
        from charter_llamacpp.llm import LlamaCppLLM, LoadedModel
        from charter_llamacpp.model_cache import ensure_default_model
        from charter_llamacpp.options import parse_options
        from charter_llamacpp.plugin import LlamaCppBackend
    except ImportError as e:
        reason = (
            f"skipped: {e.name or e} is not installed (pip install -e plugins/charter-llamacpp)"
        )
        return [f"LLM generation speed: {reason}"], {"skipped": reason}

    rounds = 3 if quick else len(QUESTIONS)
    max_tokens = 32 if quick else 96
    t0 = time.perf_counter()
    path = ensure_default_model().path
    verify_ms = (time.perf_counter() - t0) * 1000.0
    options = {"n_ctx": N_CTX, "n_batch": N_BATCH, "seed": SEED}

    t0 = time.perf_counter()
    charter = LlamaCppBackend().create(options)
    charter_load_ms = (time.perf_counter() - t0) * 1000.0
    # a model of its own: sharing the backend's would find each prompt already evaluated
    lp_options = parse_options({**options, "logprobs": True})
    with_logprobs = LlamaCppLLM(LoadedModel(path, lp_options), lp_options)
    # the bundled GGUF carries no chat template: left alone, llama-cpp-python would format the
    # conversation as Llama 2; the bare side gets the backend's template so the prompts match
    handler = Jinja2ChatFormatter(
        template=charter.formatter.template,
        eos_token="<eos>",
        bos_token="<bos>",
        stop_token_ids=[charter.model.eos],
    ).to_chat_handler()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):  # llama.cpp's load chatter
        bare = Llama(
            model_path=str(path),
            n_ctx=N_CTX,
            n_batch=N_BATCH,
            chat_handler=handler,
            verbose=False,
        )
    bare_load_ms = (time.perf_counter() - t0) * 1000.0

    def run_bare(question: str) -> tuple[str, int]:
        out: Any = bare.create_chat_completion(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
            temperature=0.0,
            max_tokens=max_tokens,
            seed=SEED,
        )
        return out["choices"][0]["message"]["content"] or "", out["usage"]["completion_tokens"]

    def run_charter(llm: Any, question: str) -> tuple[str, int]:
        got = llm.generate(
            [Message("system", SYSTEM), Message("user", question)],
            max_tokens=max_tokens,
            temperature=0.0,
        )
        return got.text, got.tokens

    sides = ("charter", "bare", "charter+logprobs")
    tokens: dict[str, list[int]] = {s: [] for s in sides}
    seconds: dict[str, list[float]] = {s: [] for s in sides}
    texts: dict[str, list[str]] = {s: [] for s in sides}
    calls: dict[str, Callable[[str], tuple[str, int]]] = {
        "charter": lambda q: run_charter(charter, q),
        "bare": run_bare,
        "charter+logprobs": lambda q: run_charter(with_logprobs, q),
    }
    for warm in calls.values():  # first-call allocations are not generation speed
        warm("Hello")
    for i in range(rounds):
        question = QUESTIONS[i % len(QUESTIONS)]
        order = sides if i % 2 == 0 else (sides[1], sides[0], sides[2])
        for side in order:
            text, n, dt = _timed(functools.partial(calls[side], question))
            texts[side].append(text)
            tokens[side].append(n)
            seconds[side].append(dt)

    for side in ("charter", "charter+logprobs"):
        if texts[side] != texts["bare"] or tokens[side] != tokens["bare"]:
            raise AssertionError(
                f"{side} and bare llama-cpp-python generated different answers: "
                f"{texts[side]!r} != {texts['bare']!r}"
            )

    rate = {s: _rate(tokens[s], seconds[s]) for s in sides}
    # per round, both sides generated the same tokens: the time ratio is the tokens/s ratio.
    # The median over rounds is the headline: one round slowed by a neighbour moves it least
    per_round = {
        s: [b / c for c, b in zip(seconds[s], seconds["bare"], strict=True)]
        for s in ("charter", "charter+logprobs")
    }
    ratio = statistics.median(per_round["charter"])
    logprobs_ratio = statistics.median(per_round["charter+logprobs"])
    pooled = rate["charter"] / rate["bare"] if rate["bare"] else 0.0
    ok = ratio >= TARGET_RATIO
    lines = [
        f"LLM generation speed: Gemma 3 270M Q4_K_M, {rounds} round(s) x max_tokens "
        f"{max_tokens}, temperature 0, n_ctx {N_CTX}, {sum(tokens['bare'])} tokens per side",
        f"  default model ready (assembled or sha256-verified) in {verify_ms:.0f} ms; "
        f"load: charter backend {charter_load_ms:.0f} ms, bare Llama {bare_load_ms:.0f} ms",
        f"  {'tokens/s (prompt included)':<40}{'':>10}",
        f"  {'charter llamacpp backend':<40}{rate['charter']:>10.1f}",
        f"  {'bare Llama.create_chat_completion':<40}{rate['bare']:>10.1f}",
        f"  {'charter backend with logprobs':<40}{rate['charter+logprobs']:>10.1f}",
        f"  charter / bare tokens/s, median over rounds: {ratio:.3f} (all tokens pooled "
        f"{pooled:.3f}), target >= {TARGET_RATIO}: {'OK' if ok else 'MISSED'}",
        f"  with logprobs / bare, median over rounds: {logprobs_ratio:.3f} "
        "(reported, not a target)",
        f"outcomes: both sides generated the same text in all {rounds} rounds: OK",
    ]
    figures: dict[str, Any] = {
        "rounds": rounds,
        "max_tokens": max_tokens,
        "tokens": sum(tokens["bare"]),
        "verify_ms": round(verify_ms, 1),
        "load_ms": {"charter": round(charter_load_ms, 1), "bare": round(bare_load_ms, 1)},
        "tokens_per_s": {s: round(r, 2) for s, r in rate.items()},
        "ratio": round(ratio, 4),
        "pooled_ratio": round(pooled, 4),
        "logprobs_ratio": round(logprobs_ratio, 4),
        "target_ratio": TARGET_RATIO,
        "ok": ok,
    }
    return lines, figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 short rounds")
    args = parser.parse_args(argv)
    lines, figures = generation_speed(args.quick)
    print("\n".join(lines))
    return 0 if figures.get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
