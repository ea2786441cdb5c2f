"""What does Charter cost around the model, and how often does it need the model? One run
prints:

* framework overhead per turn: ``Agent.turn`` on the ecommerce pack with the scripted backend,
  on a SQLite file in WAL mode, a warm agent; the turns cycle through a realistic mix (a
  question that needs a slot, the slot, a logistics question, thanks) for many users. The pack
  is ``mode: strict``, so since issue 14 none of these turns asks the model: each reply is
  composed from templates, and the whole time is Charter's (planning and the goal store,
  recall, the order_lookup skill through its guard, composing, the rules, memory writes, goal
  transitions, the trace). The model calls are counted and printed to show it. Target: median
  ≤ 5 ms (unchanged: it was Charter's own time per turn before and still is).
* per pack (finance, ecommerce, medical), the share of the conversation tests' turns answered
  without generation, the tickets, and the median time of such a template-answered turn, today
  against the code before issue 14 in the same run (``bench_replies``; ``--baseline-ref``
  picks the commit). Targets: 100 % without generation for a strict pack (a model call of the
  fill step counts as a generation), median ≤ 20 ms.
* generation speed through the llama.cpp backend against bare llama-cpp-python on the same
  prompt and settings (``bench_llm.generation_speed``), when the plugin is installed. Target:
  ratio ≥ 0.9.

    python benchmarks/bench_turn.py [--quick] [--check] [--json FILE] [--baseline-ref REF]
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_replies import BASELINE_REF
from bench_replies import measure as measure_replies

from charter.agent import Agent
from charter.llm.scripted import ScriptedLLM

TARGET_TURN_MS = 5.0
TARGET_GENERATION_RATIO = 0.9
KEY = base64.b64encode(bytes(range(32))).decode()
CONVERSATION = (
    "帮我查一下订单",
    "订单号DD202405010001",
    "订单DD202405010001的快递到哪了？",
    "好的，谢谢",
)
# what the model would say, were it asked (a strict pack does not ask it)
ANSWER = "您的订单DD202405010001已发货，由顺丰速运配送，目前运输中。"


def turn_overhead(users: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="charter-bench-turn-") as tmp:
        db = Path(tmp) / "charter.db"
        db.touch()
        llm = ScriptedLLM(default=ANSWER)
        agent = Agent.from_pack(
            "ecommerce",
            llm=llm,
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
        )
        try:
            for text in CONVERSATION:  # warm: compiled pack, validators, statements
                agent.turn("warm", "w", text)
            times: list[int] = []
            verdicts: dict[str, int] = {}
            calls = len(llm.calls)
            gc.disable()
            try:
                for u in range(users):
                    for text in CONVERSATION:
                        t0 = time.perf_counter_ns()
                        reply = agent.turn(f"user-{u:04d}", f"s-{u:04d}", text)
                        times.append(time.perf_counter_ns() - t0)
                        verdicts[reply.verdict] = verdicts.get(reply.verdict, 0) + 1
            finally:
                gc.enable()
            calls = len(llm.calls) - calls
        finally:
            agent.close()
    ms = sorted(t / 1e6 for t in times)
    return {
        "turns": len(ms),
        "p50_ms": round(statistics.median(ms), 3),
        "p90_ms": round(statistics.quantiles(ms, n=10)[8], 3),
        "verdicts": dict(sorted(verdicts.items())),
        "model_calls": calls,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few turns (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    parser.add_argument(
        "--baseline-ref",
        default=BASELINE_REF,
        metavar="REF",
        help=f"the commit the replies are compared with (default {BASELINE_REF})",
    )
    args = parser.parse_args(argv)
    turn = turn_overhead(5 if args.quick else 100)
    print(
        f"Charter turn benchmark: ecommerce pack, scripted backend, {turn['turns']} turns "
        f"({len(CONVERSATION)} per user), SQLite file, Python {sys.version.split()[0]}"
    )
    print(f"  {'Agent.turn, framework only':<34}{'p50 ms':>9}{'p90 ms':>9}")
    print(f"  {'':<34}{turn['p50_ms']:>9.2f}{turn['p90_ms']:>9.2f}")
    print(f"  verdicts: {', '.join(f'{k} {v}' for k, v in turn['verdicts'].items())}")
    print(f"  model calls: {turn['model_calls']}")
    targets = [
        (
            f"framework overhead per turn {turn['p50_ms']:.2f} ms <= {TARGET_TURN_MS:g} ms",
            turn["p50_ms"] <= TARGET_TURN_MS,
        )
    ]
    figures: dict[str, Any] = {"turn": turn}
    replies = measure_replies(args.quick, args.baseline_ref)
    print()
    for line in replies.lines:
        print(line)
    targets += replies.targets
    figures["replies"] = replies.figures
    try:
        from bench_llm import generation_speed
    except ImportError:
        generation_speed = None
    if generation_speed is not None:
        lines, gen = generation_speed(args.quick)
        if "skipped" in gen:  # llama-cpp-python or the plugin is not installed
            print(f"\ngeneration speed: not measured ({gen['skipped']})")
        else:
            print()
            for line in lines:
                print(line)
            ratio = float(gen["ratio"])
            figures["generation"] = gen
            targets.append(
                (
                    f"generation through charter {ratio:.2f}x of bare llama-cpp-python "
                    f">= {TARGET_GENERATION_RATIO:g}",
                    ratio >= TARGET_GENERATION_RATIO,
                )
            )
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    if args.json is not None:
        figures["targets"] = [{"target": t, "ok": ok} for t, ok in targets]
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", "utf-8")
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
