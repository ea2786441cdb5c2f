"""How does ``charter validate`` grow with the number of rules?

Run by ``make bench-validate``. Two generated packs (``gen_pack.py``) at 300, 1,000 and 3,000
rules each: the finance kinds in turn (``generate``: bans, required phrases under guards, money
formats, twins, dates, counts), and one made-up word banned per rule (``one_word``). Each
``charter validate --no-cache PACK`` runs as a whole process, cold: a fresh, empty
``CHARTER_CACHE_DIR`` per run, so imports, loading, parsing, checking and analysis are all in
the figure. ``python -c pass`` runs in the same rounds, interleaved with the packs, as the
baseline: the cost of starting any Python process on this machine, under this load.

It prints, per pack, the median wall time, that time over the baseline's, the time per rule
after the baseline, and the cost of each further rule between two sizes: when validation grows
linearly the cost per further rule stays flat from one step to the next; a cost per pair of
rules makes it grow with the pack.

Then, in this process, the conflict analysis alone (``charter.compile.analyze``) on the same
rules, against the pairwise search it replaced (kept as the reference oracle in
``tests/unit/compile/test_analyze.py``): ``clash`` calls (counted without slowing the pairwise
search: those within each rule plus one per ordered pair of rules under equal guards), and up
to 1,000 rules the time of each and the check that both report the same diagnostics. ``before
s (est.)`` is this run's validate time with the indexed analysis swapped for the pairwise one
(an estimate: the rest of the process did not change).

Target: 3,000 rules validate in ≤ 3 s (2 cores).

    python benchmarks/bench_validate.py [--quick] [--check] [--json FILE]

``--check`` exits 1 when a target is missed (otherwise the exit status is 0: it is a report);
``--quick`` runs each process once and times the pairwise analysis only on the smallest packs
(a smoke run: the figures are rough); ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import gen_pack
from bench_samples import SAMPLES
from bench_support import REPO, compile_path, load_registry
from processes import bytecode_env, charter_command

from charter.compile import analyze as analyze_mod
from charter.compile import stages
from charter.compile.analyze import RuleView
from charter.diagnostics import Diagnostic

SIZES = (300, 1_000, 3_000)
KINDS: dict[str, Callable[[int, list[str]], list[gen_pack.GenRule]]] = {
    "finance kinds": gen_pack.generate,
    "one word each": gen_pack.one_word,
}
TARGET_S = 3.0
PAIRWISE_UP_TO = 1_000  # the pairwise search takes 10-20 s at 3,000 rules: its calls are counted
ORACLE = REPO / "tests" / "unit" / "compile" / "test_analyze.py"


def write_packs(directory: Path) -> dict[tuple[str, int], Path]:
    texts = [s.output for s in SAMPLES]
    return {
        (kind, n): gen_pack.write_pack(make(n, texts), directory / f"{kind.split()[0]}-{n}")
        for kind, make in KINDS.items()
        for n in SIZES
    }


def _run(cmd: Sequence[str], base: dict[str, str]) -> float:
    """Wall seconds of one cold process, with its own empty compile cache."""
    with tempfile.TemporaryDirectory(prefix="charter-bench-validate-") as cache:
        env = {**base, "CHARTER_CACHE_DIR": cache}
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return elapsed


def time_processes(packs: dict[tuple[str, int], Path], runs: int) -> tuple[float, dict[Any, float]]:
    """Median wall seconds of ``python -c pass`` and of validating each pack, ``runs`` rounds,
    every round running the baseline and all packs in turn."""
    charter = charter_command()
    baseline: list[float] = []
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in packs}
    with tempfile.TemporaryDirectory(prefix="charter-bench-validate-pyc-") as pycache:
        # Python's bytecode cached, as for an installed package (see bench_startup)
        base = bytecode_env(Path(pycache))
        _run([*charter, "validate", "--no-cache", str(next(iter(packs.values())))], base)
        for _ in range(runs):
            baseline.append(_run([sys.executable, "-c", "pass"], base))
            for key, path in packs.items():
                samples[key].append(_run([*charter, "validate", "--no-cache", str(path)], base))
    return statistics.median(baseline), {k: statistics.median(v) for k, v in samples.items()}


def _pairwise() -> Callable[[Sequence[RuleView]], list[Diagnostic]]:
    """The pairwise analysis this replaced, from the test that keeps it as the oracle."""
    spec = importlib.util.spec_from_file_location("analyze_oracle", ORACLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.pairwise_analyze  # type: ignore[no-any-return]


def pairwise_calls(views: Sequence[RuleView]) -> int:
    """``clash`` calls of the pairwise search, without slowing it down by counting: those
    within each rule, then one per ordered pair of rules under equal guards."""
    calls = [0]
    within = [(r, analyze_mod.facts(r.when), analyze_mod.facts(r.check)) for r in views]
    with _counting(calls):
        for view in within:
            analyze_mod._within_rule(view)
    groups = Counter(r.when for r in views)
    return calls[0] + sum(k * (k - 1) for k in groups.values())


def rule_views(path: Path, registry: Any) -> list[RuleView]:
    """The views the compiler hands to the analysis, caught on their way in."""
    caught: list[RuleView] = []
    real = analyze_mod.analyze  # what stages calls

    def catch(views: Sequence[RuleView]) -> list[Diagnostic]:
        caught.extend(views)
        return real(views)

    with mock.patch.object(stages, "analyze", catch):
        pack, diagnostics = compile_path(path, registry, None)
    if pack is None:
        raise SystemExit(f"{path} does not compile:\n" + "\n".join(map(str, diagnostics)))
    return caught


@contextmanager
def _counting(calls: list[int]) -> Iterator[None]:
    real = analyze_mod.clash

    def clash(*args: Any) -> Any:
        calls[0] += 1
        return real(*args)

    with mock.patch.object(analyze_mod, "clash", clash):
        yield


def _timed(
    fn: Callable[[Sequence[RuleView]], list[Diagnostic]], views: Sequence[RuleView]
) -> tuple[float, list[Diagnostic]]:
    t0 = time.perf_counter()
    found = fn(views)
    return time.perf_counter() - t0, found


def time_analysis(packs: dict[tuple[str, int], Path], quick: bool) -> dict[Any, dict[str, Any]]:
    registry = load_registry()
    pairwise = _pairwise()
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for key, path in packs.items():
        views = rule_views(path, registry)
        calls = [0]
        with _counting(calls):
            found = analyze_mod.analyze(views)
        row: dict[str, Any] = {
            "indexed_s": min(_timed(analyze_mod.analyze, views)[0] for _ in range(3)),
            "indexed_clash_calls": calls[0],
            "diagnostics": len(found),
        }
        row["pairwise_clash_calls"] = pairwise_calls(views)
        if key[1] <= (SIZES[0] if quick else PAIRWISE_UP_TO):
            row["pairwise_s"], old = _timed(pairwise, views)
            if old != found:
                raise SystemExit(f"{path}: the indexed analysis reports other diagnostics")
        out[key] = row
    return out


def report(
    baseline: float, wall: dict[Any, float], analysis: dict[Any, dict[str, Any]], runs: int
) -> tuple[list[str], list[tuple[str, bool]]]:
    lines = [
        f"Charter validate benchmark: `charter validate --no-cache PACK`, cold processes, "
        f"median of {runs}, Python {sys.version.split()[0]}",
        f"  baseline `python -c pass`: {baseline:.3f} s",
    ]
    targets: list[tuple[str, bool]] = []
    for kind in KINDS:
        lines.append(f"  {kind}:")
        lines.append(
            f"    {'rules':>6}{'validate s':>12}{'x baseline':>12}{'ms/rule':>10}"
            f"{'ms/further rule':>17}{'before s (est.)':>17}"
        )
        previous: tuple[int, float] | None = None
        for n in SIZES:
            t, row = wall[(kind, n)], analysis[(kind, n)]
            further = ""
            if previous is not None:
                further = f"{(t - previous[1]) / (n - previous[0]) * 1000:.3f}"
            before = ""
            if "pairwise_s" in row:
                before = f"{t - row['indexed_s'] + row['pairwise_s']:.2f}"
            lines.append(
                f"    {n:>6,}{t:>12.2f}{t / baseline:>12.1f}{(t - baseline) / n * 1000:>10.3f}"
                f"{further:>17}{before:>17}"
            )
            previous = (n, t)
        t3 = wall[(kind, SIZES[-1])]
        targets.append(
            (f"{kind}: {SIZES[-1]:,} rules {t3:.2f} s <= {TARGET_S:g} s", t3 <= TARGET_S)
        )
    lines.append(
        "  the conflict analysis alone, in process (where both ran: same diagnostics, checked):"
    )
    lines.append(
        f"    {'pack':<22}{'indexed ms':>11}{'clash calls':>13}{'pairwise ms':>13}"
        f"{'clash calls':>13}{'findings':>10}"
    )
    for (kind, n), row in analysis.items():
        old_ms = f"{row['pairwise_s'] * 1000:.0f}" if "pairwise_s" in row else "-"
        old_calls = f"{row['pairwise_clash_calls']:,}"
        lines.append(
            f"    {f'{kind}, {n:,}':<22}{row['indexed_s'] * 1000:>11.1f}"
            f"{row['indexed_clash_calls']:>13,}{old_ms:>13}{old_calls:>13}{row['diagnostics']:>10}"
        )
    return lines, targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run each (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else 5
    with tempfile.TemporaryDirectory(prefix="charter-bench-packs-") as tmp:
        packs = write_packs(Path(tmp))
        baseline, wall = time_processes(packs, runs)
        analysis = time_analysis(packs, args.quick)
    lines, targets = report(baseline, wall, analysis, runs)
    print("\n".join(lines))
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    if args.json is not None:
        doc = {
            "baseline_s": baseline,
            "packs": [
                {"kind": kind, "rules": n, "validate_s": wall[(kind, n)], **analysis[(kind, n)]}
                for kind, n in wall
            ],
            "targets": [{"target": t, "ok": ok} for t, ok in targets],
        }
        args.json.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
