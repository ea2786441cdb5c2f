"""What does the guard around a skill cost? ``SkillRunner.call`` on the finance pack's
``policy_search`` contract against calling the same implementation directly, and FAQ lookup
latency over 1,000 entries.

The guarded side is everything a turn pays: the arguments against the input schema and the
constraint (``args.year_range[1] - args.year_range[0] <= 3``), the breaker, the hand-off to a
worker thread with the contract's timeout, the result against the output schema and
``max_results``, the post-check, and the call record. The direct side calls the registered
``policy_search`` object with the same arguments. Both take turns call by call over the same
seeded argument sets (which goes first alternates), each timed on its own with the garbage
collector off; before anything is reported it asserts both sides returned the same results.
Target: the guard's median overhead (guarded median − direct median) ≤ 100 µs.

    python benchmarks/bench_skills.py [--quick] [--check] [--json FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_faq import faq_lookup

from charter.compile.api import compile_path
from charter.plugins.host import default_registry
from charter.skills.runner import SkillRunner

ROOT = Path(__file__).resolve().parents[1]
TARGET_OVERHEAD_US = 100.0
SEED = 20240501
KEYWORDS = ("新能源", "补贴", "小微企业", "个人所得税", "稳岗", "税收优惠", "汽车", "社保")
REGIONS = (None, "national", "province_A", "province_B")


def arguments(n: int) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    out = []
    for _ in range(n):
        args: dict[str, Any] = {"keyword": rng.choice(KEYWORDS)}
        if rng.random() < 0.7:
            start = rng.randint(2020, 2022)
            args["year_range"] = [start, rng.randint(start, 2023)]
        region = rng.choice(REGIONS)
        if region is not None:
            args["region"] = region
        out.append(args)
    return out


def measure(calls: int) -> dict[str, Any]:
    registry, _ = default_registry()
    pack, diags = compile_path(ROOT / "domains" / "finance", registry, cache_dir=None)
    if pack is None or pack.skills is None:
        raise SystemExit("the finance pack does not compile:\n" + "\n".join(map(str, diags)))
    impl = registry.skills["policy_search"]
    runner = SkillRunner(pack.skills, registry, pack=pack.name, constants=pack.constants)
    sets = arguments(calls)
    for args in sets[:50]:  # warm: validators, worker thread, data
        runner.call("policy_search", args)
        impl(dict(args))
    guarded: list[int] = []
    direct: list[int] = []
    gc.disable()
    try:
        for n, args in enumerate(sets):
            order = ("guarded", "direct") if n % 2 == 0 else ("direct", "guarded")
            for side in order:
                t0 = time.perf_counter_ns()
                if side == "guarded":
                    outcome = runner.call("policy_search", args)
                    guarded.append(time.perf_counter_ns() - t0)
                else:
                    want = impl(dict(args))
                    direct.append(time.perf_counter_ns() - t0)
            assert outcome.status == "ok", (args, outcome.text)
            assert outcome.result == want, f"the sides disagree on {args}"
    finally:
        gc.enable()
        runner.close()
    g50, d50 = statistics.median(guarded) / 1000, statistics.median(direct) / 1000
    return {
        "calls": calls,
        "guarded_us": {"p50": round(g50, 2), "p99": round(_p99(guarded) / 1000, 2)},
        "direct_us": {"p50": round(d50, 2), "p99": round(_p99(direct) / 1000, 2)},
        "overhead_us": round(g50 - d50, 2),
    }


def _p99(ns: list[int]) -> float:
    return statistics.quantiles(ns, n=100)[98] if len(ns) > 1 else float(ns[0])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    m = measure(200 if args.quick else 20_000)
    faq_lines, faq = faq_lookup(args.quick)
    print(
        f"Charter skill guard benchmark: policy_search (finance), {m['calls']:,} calls, "
        f"Python {sys.version.split()[0]}"
    )
    print(f"  {'per call':<34}{'p50 µs':>9}{'p99 µs':>9}")
    for label, key in (
        ("SkillRunner.call (guarded)", "guarded_us"),
        ("the implementation, directly", "direct_us"),
    ):
        print(f"  {label:<34}{m[key]['p50']:>9.1f}{m[key]['p99']:>9.1f}")
    print(f"  {'guard overhead (median)':<34}{m['overhead_us']:>9.1f}")
    print(f"outcomes: both sides returned the same results for all {m['calls']:,} calls: OK")
    print()
    for line in faq_lines:
        print(line)
    targets = [
        (
            f"guard overhead {m['overhead_us']:.1f} µs <= {TARGET_OVERHEAD_US:g} µs",
            m["overhead_us"] <= TARGET_OVERHEAD_US,
        )
    ]
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    if args.json is not None:
        doc = {**m, "faq": faq, "targets": [{"target": t, "ok": ok} for t, ok in targets]}
        args.json.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
