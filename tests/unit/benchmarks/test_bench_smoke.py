"""Smoke test of ``benchmarks/bench_check.py``: it runs, prints every figure, and its
outcome-equality assertion holds (and would fire). No timing is asserted."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.benchmarks.smoke import quick_once

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
EXPECTED_LINES = (
    "Charter check benchmark: 8 sample answers",
    "  finance pack ",
    "  generated pack ",
    "  finance Engine.check ",
    "  finance, cold caches ",
    "  growth 9 -> 200 rules",
    "where the engine's time goes",
    "  finance    extractors ",
    "  generated  extractors ",
    "  cold, fresh process (import charter.compile + grammar + compile): ",
    "  cold, in process (imports and grammar warm): ",
    "  from the cache: ",
    "outcomes: baseline == Engine.evaluate for every rule on every sample (",
)
TARGETS = (
    "finance median ",
    "finance ",  # the ratio line
    "generated (200 rules) ",
    "compile all packs cold ",
    "compile all packs from the cache ",
)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, object]]:
    return quick_once(tmp_path_factory, "bench_check.py")


def test_prints_every_expected_line(quick_run: tuple[str, dict[str, object]]) -> None:
    stdout, _ = quick_run
    lines = stdout.splitlines()
    for prefix in EXPECTED_LINES:
        assert any(line.startswith(prefix) for line in lines), f"missing: {prefix!r}\n{stdout}"
    verdicts = lines[-len(TARGETS) :]
    for prefix, line in zip(TARGETS, verdicts, strict=True):
        assert line.startswith(prefix), line
        assert line.endswith(": OK") or line.endswith(": MISSED"), line


def test_outcome_equality_held_and_figures_written(
    quick_run: tuple[str, dict[str, object]],
) -> None:
    stdout, figures = quick_run
    # 8 samples x (8 finance rules + 200 generated rules)
    assert "(1672 comparisons): OK" in stdout
    assert figures["outcome_comparisons"] == 1672
    sizes = figures["sizes"]
    assert isinstance(sizes, dict)
    assert sizes["finance"]["rules"] == 9
    assert sizes["generated"]["rules"] == 200
    for size in sizes.values():
        assert size["engine_evaluate_us"] > 0 and size["baseline_us"] > 0
    assert len(figures["targets"]) == len(TARGETS)  # type: ignore[arg-type]


@pytest.fixture
def bench_modules(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_check
    import naive_baseline

    return {"bench_check": bench_check, "naive_baseline": naive_baseline}


def test_the_equality_assertion_fires_on_a_wrong_baseline(
    bench_modules: dict[str, ModuleType],
) -> None:
    bc, nb = bench_modules["bench_check"], bench_modules["naive_baseline"]
    from charter.reflect.engine import Engine

    registry = bc.load_registry()
    engine = Engine(bc._compile(bc.FINANCE, registry), registry)
    assert bc.assert_same_outcomes("finance", engine, nb.FINANCE_RULES, bc.SAMPLES) == 72
    wrong = dict(nb.FINANCE_RULES, **{"date-format": lambda output, context: "pass"})
    with pytest.raises(AssertionError, match="date-format: engine fail, baseline pass"):
        bc.assert_same_outcomes("finance", engine, wrong, bc.SAMPLES)
