"""Measurements for ``bench_check.py``: check-time medians, a breakdown, and compile times."""

from __future__ import annotations

import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_samples import Sample
from bench_support import compile_path, first_party_packs

from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.dsl import ast as A

CheckFn = Callable[[str, dict[str, Any]], object]


@contextmanager
def no_gc() -> Iterator[None]:
    """Collect, then keep the garbage collector off while timing."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def round_medians(
    fns: Sequence[CheckFn], samples: Sequence[Sample], rounds: int, warmup: int = 5
) -> list[list[float]]:
    """Median µs of each function on each sample, ``[fn][sample]``, in steady state.

    Every call is timed on its own with ``perf_counter_ns``. Within a round each function checks
    every sample in turn (a new text each call, as a service checking answers back to back), then
    the next function does; the order of the functions rotates from round to round. A burst of
    load on the machine still hits all of them alike, and each runs with its own code warm.
    """
    for _ in range(warmup):
        for fn in fns:
            for s in samples:
                fn(s.output, s.context)
    times = [[[0] * rounds for _ in samples] for _ in fns]
    clock = time.perf_counter_ns
    order = list(range(len(fns)))
    with no_gc():
        for r in range(rounds):
            for fi in order[r % len(fns) :] + order[: r % len(fns)]:
                fn, per_sample = fns[fi], times[fi]
                for si, s in enumerate(samples):
                    t0 = clock()
                    fn(s.output, s.context)
                    per_sample[si][r] = clock() - t0
    return [[statistics.median(per_sample) / 1000 for per_sample in per_fn] for per_fn in times]


def interleaved_medians(
    fns: Sequence[CheckFn], samples: Sequence[Sample], rounds: int, warmup: int = 5
) -> list[list[float]]:
    """Median µs of each function on each sample, ``[fn][sample]``, with cold caches.

    The functions take turns call by call (on one sample, then the next), so every call runs
    right after the other functions' calls evicted its code and data from the CPU caches: a
    pessimistic figure, printed next to the steady-state one of ``round_medians``.
    """
    for _ in range(warmup):
        for s in samples:
            for fn in fns:
                fn(s.output, s.context)
    times = [[[0] * rounds for _ in samples] for _ in fns]
    clock = time.perf_counter_ns
    with no_gc():
        for r in range(rounds):
            for si, s in enumerate(samples):
                for fi, fn in enumerate(fns):
                    t0 = clock()
                    fn(s.output, s.context)
                    times[fi][si][r] = clock() - t0
    return [[statistics.median(per_sample) / 1000 for per_sample in per_fn] for per_fn in times]


def extractors_used(pack: CompiledPack) -> list[str]:
    """Extractor names the pack's rules refer to (quantifiers, mentions, count, twin, near)."""
    names: set[str] = set()
    for rule in pack.rules:
        for expr in (rule.when, rule.check):
            if expr is None:
                continue
            for node in A.walk(expr):
                for attr in ("extractor", "target"):
                    value = getattr(node, attr, None)
                    if isinstance(value, A.Name):
                        names.add(value.text)
    return sorted(names)


def shared_steps(
    pack: CompiledPack, registry: Registry, scan: Callable[[str], object]
) -> dict[str, CheckFn]:
    """What ``Env`` computes once per text for every rule: each extractor the pack uses, and the
    literal scan. Timing them next to ``Engine.evaluate`` shows what is left for the rules."""
    steps = {n: _extract_fn(registry, n) for n in extractors_used(pack) if n in registry.extractors}
    steps["literal scan"] = lambda text, ctx: scan(text)
    return steps


def _extract_fn(registry: Registry, name: str) -> CheckFn:
    extractor = registry.extractors[name]
    return lambda text, ctx: extractor.extract(text)


# ---- compile times ----------------------------------------------------------------------------

_COLD = """
import json, pathlib, sys, time
sys.path.insert(0, {bench!r})
t_start = time.perf_counter()
import bench_support
registry = bench_support.load_registry()
t0 = time.perf_counter()
failed = []
for path in bench_support.first_party_packs():
    pack, _ = bench_support.compile_path(path, registry, pathlib.Path(sys.argv[1]))
    if pack is None:
        failed.append(path.name)
t1 = time.perf_counter()
print(json.dumps({{"registry_ms": (t0 - t_start) * 1000, "compile_ms": (t1 - t0) * 1000,
                  "failed": failed}}))
"""


def compile_cold_subprocess(runs: int, registry: Registry) -> dict[str, Any]:
    """Fresh interpreters: the registry is loaded first (not counted), then the clock runs from
    before ``charter.compile`` is imported to the end of compiling every pack, uncached. Each
    run gets a cache directory of its own holding only the examples' vectors
    (``charter.compile.vectors``, made first): once a pack's examples were embedded, a compile
    reads them back; their first embedding is bench_understand's figure."""
    code = _COLD.format(bench=str(Path(__file__).resolve().parent))
    results = []
    with tempfile.TemporaryDirectory(prefix="charter-bench-vectors-") as tmp:
        kept = Path(tmp) / "vectors"
        _compile_all(registry, kept)
        for n in range(runs):
            fresh = Path(tmp) / f"run-{n}"
            fresh.mkdir()
            shutil.copy(kept / "vectors.sqlite", fresh / "vectors.sqlite")
            done = subprocess.run(
                [sys.executable, "-c", code, str(fresh)], capture_output=True, text=True, check=True
            )
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "compile_ms": statistics.median(r["compile_ms"] for r in results),
        "registry_ms": statistics.median(r["registry_ms"] for r in results),
        "failed": results[-1]["failed"],
        "runs": runs,
    }


def _compile_all(registry: Registry, cache_dir: Path | None) -> list[str]:
    failed = []
    for path in first_party_packs():
        pack, _ = compile_path(path, registry, cache_dir)
        if pack is None:
            failed.append(path.name)
    return failed


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    with no_gc():
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            fn()
            times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e6


def compile_in_process(registry: Registry, runs: int) -> float:
    """Median ms to compile every pack uncached, with the grammar and the imports warm."""
    _compile_all(registry, None)
    return _median_ms(lambda: _compile_all(registry, None), runs)


def compile_from_cache(registry: Registry, runs: int) -> float:
    """Median ms to load every pack from a warm on-disk cache (a fresh temporary one)."""
    with tempfile.TemporaryDirectory(prefix="charter-bench-cache-") as tmp:
        cache = Path(tmp)
        _compile_all(registry, cache)  # warm-up: fills the cache
        return _median_ms(lambda: _compile_all(registry, cache), runs)
