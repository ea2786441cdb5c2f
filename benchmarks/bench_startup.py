"""How long does the ``charter`` command take to start, as pre-commit runs it on every commit?

Run by ``make bench-startup``. Whole processes, as a user starts them, interleaved round by
round so that load from other processes hits them alike:

* ``python -c pass``: the baseline, the cost of starting any Python process on this machine;
* ``charter --version``: start-up alone (nothing but the ``charter`` group is imported);
* ``charter validate domains rulesets --no-cache``, each run with a fresh, empty
  ``CHARTER_CACHE_DIR``: cold, every first-party pack loaded, compiled and checked;
* ``charter validate domains rulesets``, with a cache warmed once before the rounds: the
  pre-commit case, where nothing changed since the last commit.

Python's bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``, filled by one untimed run
of each case), as it is for an installed package, whatever ``PYTHONDONTWRITEBYTECODE`` says.

It prints each command's median wall time over the rounds, that time over the baseline's, and
one line per target, ``OK`` or ``MISSED``. Targets (2 cores, quiet): ``--version`` ≤ 0.3 s,
cold ``validate`` ≤ 1 s.

    python benchmarks/bench_startup.py [--runs N] [--quick] [--check] [--json FILE]
        [--charter CMD]

``--check`` exits 1 when a target is missed (otherwise the exit status is 0: it is a report);
``--quick`` runs each process twice (for a smoke run); ``--json`` writes the figures;
``--charter`` times another command line in place of the installed ``charter`` script (another
checkout or version, for a before/after comparison in one run).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_support import REPO
from processes import bytecode_env, charter_command

TARGET_VERSION_S = 0.3
TARGET_VALIDATE_S = 1.0
PACKS = ("domains", "rulesets")


@dataclass(frozen=True)
class Case:
    label: str
    args: tuple[str, ...]  # after the charter command; empty: the python -c pass baseline
    cache: str  # "none": not used, "fresh": an empty cache per run, "warm": the shared one


CASES = (
    Case("python -c pass", (), "none"),
    Case("charter --version", ("--version",), "none"),
    Case("charter validate (cold)", ("validate", "--no-cache", *PACKS), "fresh"),
    Case("charter validate (warm cache)", ("validate", *PACKS), "warm"),
)
TARGETS = {"charter --version": TARGET_VERSION_S, "charter validate (cold)": TARGET_VALIDATE_S}


def _run(cmd: Sequence[str], env: Mapping[str, str]) -> float:
    """Wall seconds of one process, run in the repository (where ``domains/`` is)."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=dict(env), cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return elapsed


def time_cases(charter: Sequence[str], runs: int, warm_cache: Path) -> dict[str, float]:
    """Median wall seconds of each case over ``runs`` rounds, every round running all cases."""
    samples: dict[str, list[float]] = {c.label: [] for c in CASES}
    base = bytecode_env(warm_cache / "pycache")
    warm_env = {**base, "CHARTER_CACHE_DIR": str(warm_cache / "packs")}
    _run([*charter, "validate", *PACKS], warm_env)  # fills the warm cache and the bytecode
    _run([*charter, "--version"], warm_env)
    _run([sys.executable, "-c", "pass"], warm_env)
    for _ in range(runs):
        for case in CASES:
            cmd = [*charter, *case.args] if case.args else [sys.executable, "-c", "pass"]
            if case.cache == "fresh":
                with tempfile.TemporaryDirectory(prefix="charter-bench-startup-") as cache:
                    samples[case.label].append(_run(cmd, {**base, "CHARTER_CACHE_DIR": cache}))
            else:
                samples[case.label].append(_run(cmd, warm_env))
    return {label: statistics.median(values) for label, values in samples.items()}


def report(
    medians: Mapping[str, float], runs: int, charter: Sequence[str]
) -> list[tuple[str, bool]]:
    base = medians[CASES[0].label]
    print(f"charter start-up: whole processes, median of {runs} rounds ({shlex.join(charter)})")
    print(f"  {'command':<32} {'seconds':>8} {'× python -c pass':>17}")
    for case in CASES:
        s = medians[case.label]
        print(f"  {case.label:<32} {s:>8.3f} {s / base:>16.1f}×")
    targets = [
        (f"{label} ≤ {limit:g} s (median {medians[label]:.3f} s)", medians[label] <= limit)
        for label, limit in TARGETS.items()
    ]
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--quick", action="store_true", help="two rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--charter", help="the command line to time instead of charter")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    charter = shlex.split(args.charter) if args.charter else charter_command()
    with tempfile.TemporaryDirectory(prefix="charter-bench-startup-warm-") as warm:
        medians = time_cases(charter, runs, Path(warm))
    targets = report(medians, runs, charter)
    if args.json is not None:
        base = medians[CASES[0].label]
        figures = {
            "runs": runs,
            "seconds": dict(medians),
            "ratio": {label: s / base for label, s in medians.items()},
            "targets": {text: ok for text, ok in targets},
        }
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    return 1 if args.check and not all(ok for _, ok in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
