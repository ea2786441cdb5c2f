"""How fast is a compiled pack, against the seed's way of writing the same rules by hand?

Run by ``make bench``. In one run it prints, for the finance pack (with its two rulesets) and for
a generated pack of 200 rules of the same kinds, the median time to check one ~500-character
answer with ``Engine.evaluate`` and with the naive baseline (``naive_baseline.py``,
``gen_pack.py``), their ratio, where the engine's time goes, and the time to compile every
first-party pack cold and from the cache; then one line per target, ``OK`` or ``MISSED``.

Before timing anything it asserts that the baseline gives every rule the same pass/fail/skip as
``Engine.evaluate`` on every sample, so both sides do the same work.

The medians the targets are judged on are steady-state ones (``bench_timing.round_medians``:
round by round, each side checks all samples in turn). For the finance pack it also prints the
pessimistic figure with engine and baseline alternating call by call, each call after the other
side has evicted its code from the CPU caches (``bench_timing.interleaved_medians``).

    python benchmarks/bench_check.py [--quick] [--check] [--json FILE]

``--check`` exits 1 when a target is missed (otherwise the exit status is 0: it is a report);
``--quick`` runs few iterations (for the smoke test); ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_timing as bt
import gen_pack
import naive_baseline as nb
from bench_samples import SAMPLES, Sample
from bench_support import FINANCE, compile_path, first_party_packs, load_registry

from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.reflect.engine import Engine

GENERATED_RULES = 200
TARGET_FINANCE_US = 60.0
TARGET_FINANCE_RATIO = 2.0
TARGET_GENERATED_RATIO = 5.0
TARGET_COLD_MS = 300.0
TARGET_CACHE_MS = 30.0


@dataclass(frozen=True)
class Settings:
    finance_rounds: int
    generated_rounds: int
    cold_runs: int
    compile_runs: int


FULL = Settings(finance_rounds=1500, generated_rounds=300, cold_runs=3, compile_runs=15)
QUICK = Settings(finance_rounds=20, generated_rounds=4, cold_runs=1, compile_runs=2)


@dataclass(frozen=True)
class SizeResult:
    label: str
    rules: int
    engine_us: float
    baseline_us: float
    engine_per_text: list[float]
    baseline_per_text: list[float]
    breakdown: dict[str, float]
    check_us: float | None = None
    cold_engine_us: float | None = None
    cold_baseline_us: float | None = None

    @property
    def ratio(self) -> float:
        return self.baseline_us / self.engine_us

    def as_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "engine_evaluate_us": round(self.engine_us, 2),
            "engine_check_us": None if self.check_us is None else round(self.check_us, 2),
            "cold_engine_us": _round(self.cold_engine_us),
            "cold_baseline_us": _round(self.cold_baseline_us),
            "baseline_us": round(self.baseline_us, 2),
            "ratio": round(self.ratio, 2),
            "engine_per_text_us": [round(x, 2) for x in self.engine_per_text],
            "baseline_per_text_us": [round(x, 2) for x in self.baseline_per_text],
            "breakdown_us": {k: round(v, 2) for k, v in self.breakdown.items()},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def assert_same_outcomes(
    label: str, engine: Engine, rules: Mapping[str, nb.RuleFn], samples: Sequence[Sample]
) -> int:
    """Raise AssertionError unless the baseline agrees with ``Engine.evaluate`` everywhere."""
    compared = 0
    problems = []
    for s in samples:
        expected = engine.evaluate(s.output, context=s.context)
        got = nb.evaluate(rules, s.output, s.context)
        if set(expected) != set(got):
            problems.append(f"{s.name}: rule ids differ: {sorted(set(expected) ^ set(got))}")
            continue
        for rid, outcome in expected.items():
            compared += 1
            if got[rid] != outcome:
                problems.append(f"{s.name}: {rid}: engine {outcome}, baseline {got[rid]}")
    if problems:
        raise AssertionError(
            f"{label}: baseline disagrees with Engine.evaluate:\n  " + "\n  ".join(problems)
        )
    return compared


def _compile(path: Path, registry: Registry) -> CompiledPack:
    pack, diagnostics = compile_path(path, registry, None)
    if pack is None:
        raise SystemExit(f"{path} does not compile:\n" + "\n".join(map(str, diagnostics)))
    return pack


def measure_size(
    label: str,
    pack: CompiledPack,
    registry: Registry,
    rules: Mapping[str, nb.RuleFn],
    rounds: int,
    with_check: bool,
) -> SizeResult:
    """Engine, baseline, (``Engine.check``) and each shared step, timed round by round; with
    ``with_check``, engine and baseline also call by call (cold caches)."""
    engine = Engine(pack, registry)
    fns: list[bt.CheckFn] = [
        lambda text, ctx: engine.evaluate(text, context=ctx),
        lambda text, ctx: nb.evaluate(rules, text, ctx),
    ]
    if with_check:
        fns.append(lambda text, ctx: engine.check(text, context=ctx))
    steps = bt.shared_steps(pack, registry, engine.literals.scan)
    medians = bt.round_medians(fns + list(steps.values()), SAMPLES, rounds)
    n = len(fns)
    cold = bt.interleaved_medians(fns[:2], SAMPLES, rounds) if with_check else None
    return SizeResult(
        label=label,
        rules=len(pack.rules),
        engine_us=statistics.median(medians[0]),
        baseline_us=statistics.median(medians[1]),
        engine_per_text=medians[0],
        baseline_per_text=medians[1],
        breakdown={k: statistics.median(m) for k, m in zip(steps, medians[n:], strict=True)},
        check_us=statistics.median(medians[2]) if with_check else None,
        cold_engine_us=statistics.median(cold[0]) if cold else None,
        cold_baseline_us=statistics.median(cold[1]) if cold else None,
    )


def _targets(sizes: dict[str, SizeResult], compile_ms: dict[str, Any]) -> list[tuple[str, bool]]:
    fin, gen = sizes["finance"], sizes["generated"]
    cold, cache = compile_ms["cold_subprocess_ms"], compile_ms["from_cache_ms"]
    return [
        (
            f"finance median {fin.engine_us:.1f} µs <= {TARGET_FINANCE_US:g} µs",
            fin.engine_us <= TARGET_FINANCE_US,
        ),
        (
            f"finance {fin.ratio:.2f}x faster than the baseline >= {TARGET_FINANCE_RATIO:g}x",
            fin.ratio >= TARGET_FINANCE_RATIO,
        ),
        (
            f"generated ({gen.rules} rules) {gen.ratio:.2f}x faster than the baseline "
            f">= {TARGET_GENERATED_RATIO:g}x",
            gen.ratio >= TARGET_GENERATED_RATIO,
        ),
        (f"compile all packs cold {cold:.1f} ms <= {TARGET_COLD_MS:g} ms", cold <= TARGET_COLD_MS),
        (
            f"compile all packs from the cache {cache:.1f} ms <= {TARGET_CACHE_MS:g} ms",
            cache <= TARGET_CACHE_MS,
        ),
    ]


def _range(values: Sequence[float]) -> str:
    return f"{min(values):.0f}–{max(values):.0f}"


def _breakdown_line(r: SizeResult) -> str:
    extractors = {k: v for k, v in r.breakdown.items() if k != "literal scan"}
    shared = sum(r.breakdown.values())
    inner = ", ".join(f"{k} {v:.1f}" for k, v in sorted(extractors.items(), key=lambda kv: -kv[1]))
    return (
        f"  {r.label:<10} extractors {sum(extractors.values()):.1f} ({inner}); "
        f"literal scan {r.breakdown['literal scan']:.1f}; "
        f"rules' own logic ≈ {max(r.engine_us - shared, 0.0):.1f}"
    )


def report(
    settings: Settings,
    sizes: dict[str, SizeResult],
    compared: int,
    compile_ms: dict[str, Any],
) -> list[tuple[str, bool]]:
    fin, gen = sizes["finance"], sizes["generated"]
    chars = statistics.mean(len(s.output) for s in SAMPLES)
    print(
        f"Charter check benchmark: {len(SAMPLES)} sample answers ({chars:.0f} chars on average), "
        f"{settings.finance_rounds}/{settings.generated_rounds} rounds (finance/generated), "
        f"Python {sys.version.split()[0]}"
    )
    print()
    print(
        f"  {'median µs per check':<24}{'rules':>6}{'engine':>10}{'baseline':>10}{'ratio':>8}"
        f"   per-text range engine / baseline"
    )
    for r in (fin, gen):
        print(
            f"  {r.label + ' pack':<24}{r.rules:>6}{r.engine_us:>10.1f}{r.baseline_us:>10.1f}"
            f"{r.ratio:>7.2f}x   {_range(r.engine_per_text)} / {_range(r.baseline_per_text)}"
        )
    assert fin.check_us is not None
    assert fin.cold_engine_us is not None and fin.cold_baseline_us is not None
    print(f"  {'finance Engine.check':<24}{fin.rules:>6}{fin.check_us:>10.1f}")
    print(
        f"  {'finance, cold caches':<24}{fin.rules:>6}{fin.cold_engine_us:>10.1f}"
        f"{fin.cold_baseline_us:>10.1f}{fin.cold_baseline_us / fin.cold_engine_us:>7.2f}x"
        "   (engine and baseline alternate call by call)"
    )
    grow = gen.rules / fin.rules
    print(
        f"  growth {fin.rules} -> {gen.rules} rules (x{grow:.0f}): engine "
        f"x{gen.engine_us / fin.engine_us:.1f}, baseline x{gen.baseline_us / fin.baseline_us:.1f}"
    )
    print()
    print("where the engine's time goes (µs per check, median over the samples):")
    print(_breakdown_line(fin))
    print(_breakdown_line(gen))
    print()
    packs = len(first_party_packs())
    print(f"compile all {packs} first-party packs (ms):")
    print(
        f"  cold, fresh process (import charter.compile + grammar + compile): "
        f"{compile_ms['cold_subprocess_ms']:.1f}  "
        f"[plugin registry load before it, not counted: {compile_ms['registry_ms']:.1f}]"
    )
    print("    (the examples' vectors read back as kept; their first embedding: bench_understand)")
    print(
        f"  cold, in process (imports and grammar warm):                     "
        f"{compile_ms['cold_in_process_ms']:.1f}"
    )
    print(
        f"  from the cache:                                                   "
        f"{compile_ms['from_cache_ms']:.1f}"
    )
    if compile_ms["failed"]:
        print(f"  note: did not compile: {', '.join(compile_ms['failed'])}")
    print()
    print(
        f"outcomes: baseline == Engine.evaluate for every rule on every sample "
        f"({compared} comparisons): OK"
    )
    print()
    targets = _targets(sizes, compile_ms)
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL

    registry = load_registry()
    finance = _compile(FINANCE, registry)
    generated = gen_pack.generate(GENERATED_RULES, [s.output for s in SAMPLES])
    with tempfile.TemporaryDirectory(prefix="charter-bench-pack-") as tmp:
        gen_compiled = _compile(gen_pack.write_pack(generated, Path(tmp) / "generated"), registry)
    gen_rules = gen_pack.baseline_rules(generated)

    compared = assert_same_outcomes("finance", Engine(finance, registry), nb.FINANCE_RULES, SAMPLES)
    compared += assert_same_outcomes(
        "generated", Engine(gen_compiled, registry), gen_rules, SAMPLES
    )

    sizes = {
        "finance": measure_size(
            "finance", finance, registry, nb.FINANCE_RULES, settings.finance_rounds, True
        ),
        "generated": measure_size(
            "generated", gen_compiled, registry, gen_rules, settings.generated_rounds, False
        ),
    }
    cold = bt.compile_cold_subprocess(settings.cold_runs, registry)
    compile_ms = {
        "cold_subprocess_ms": cold["compile_ms"],
        "registry_ms": cold["registry_ms"],
        "cold_in_process_ms": bt.compile_in_process(registry, settings.compile_runs),
        "from_cache_ms": bt.compile_from_cache(registry, settings.compile_runs),
        "failed": cold["failed"],
    }
    targets = report(settings, sizes, compared, compile_ms)

    if args.json is not None:
        figures = {
            "settings": settings.__dict__,
            "samples": len(SAMPLES),
            "outcome_comparisons": compared,
            "sizes": {k: v.as_dict() for k, v in sizes.items()},
            "compile_ms": {
                k: (round(v, 2) if isinstance(v, float) else v) for k, v in compile_ms.items()
            },
            "targets": [{"target": t, "ok": ok} for t, ok in targets],
        }
        args.json.write_text(
            json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
