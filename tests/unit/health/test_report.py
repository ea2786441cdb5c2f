"""``charter.health.report``: the thresholds and marks of seed 001 §5 (exact fractions, no
rounding decides a pass), n/a, the values JSON gives, and the table."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from charter.health.report import (
    BY_ID,
    DEFINITIONS,
    Day,
    HealthReport,
    Metric,
    render_json,
    render_table,
)

NOW = datetime(2024, 5, 6, tzinfo=UTC)


@pytest.mark.parametrize(
    ("metric", "numerator", "denominator", "mark"),
    [
        # a denominator of 0: nothing to measure, neither pass nor warn
        *[(d.id, 0, 0, "n/a") for d in DEFINITIONS],
        # ≥ 65 %
        ("memory_utilisation", 13, 20, "pass"),  # 65 % exactly
        ("memory_utilisation", 649, 1000, "warn"),  # shown as 64.9 %
        ("memory_utilisation", 0, 4, "warn"),
        # ≥ 40 %, ≥ 70 %, ≥ 50 %, ≥ 85 %, ≥ 80 %
        ("cross_session_rate", 2, 5, "pass"),
        ("cross_session_rate", 399, 1000, "warn"),
        ("reflection_conversion", 7, 10, "pass"),
        ("reflection_conversion", 2, 3, "warn"),
        ("rule_reuse", 1, 2, "pass"),
        ("rule_reuse", 0, 1, "warn"),
        ("failure_interception", 17, 20, "pass"),
        ("failure_interception", 5, 6, "warn"),
        ("chain_success", 4, 5, "pass"),
        ("chain_success", 79, 100, "warn"),
        # = 100 %
        ("decay_compliance", 3, 3, "pass"),
        ("decay_compliance", 999, 1000, "warn"),  # shown as 99.9 %
        ("contract_compliance", 1, 1, "pass"),
        ("contract_compliance", 0, 1, "warn"),
        # 5 % – 15 %, both ends in
        ("fallback_activation", 1, 20, "pass"),  # 5 %
        ("fallback_activation", 1, 10, "pass"),
        ("fallback_activation", 3, 20, "pass"),  # 15 %
        ("fallback_activation", 4, 25, "warn"),  # 16 %
        ("fallback_activation", 1, 25, "warn"),  # 4 %
        ("fallback_activation", 151, 1000, "warn"),
        ("fallback_activation", 0, 9, "warn"),  # no fallback at all is too conservative
        ("fallback_activation", 9, 9, "warn"),
    ],
)
def test_marks(metric: str, numerator: int, denominator: int, mark: str) -> None:
    assert Metric(metric, numerator, denominator).mark == mark


@pytest.mark.parametrize(
    ("numerator", "denominator", "value", "shown"),
    [
        (0, 0, None, "n/a"),
        (2, 3, 0.6667, "66.7%"),
        (1, 3, 0.3333, "33.3%"),
        (1, 1, 1.0, "100.0%"),
        (0, 7, 0.0, "0.0%"),
        (1, 8, 0.125, "12.5%"),
    ],
)
def test_values(numerator: int, denominator: int, value: float | None, shown: str) -> None:
    m = Metric("rule_reuse", numerator, denominator)
    assert (m.value, m.shown) == (value, shown)


def test_a_note_makes_a_metric_n_a() -> None:
    m = Metric("reflection_conversion", 0, 4, "needs --pack (its deployed patches)")
    assert (m.value, m.mark, m.shown) == (None, "n/a", "n/a")


@pytest.mark.parametrize(
    ("metric", "text", "limits"),
    [
        ("memory_utilisation", "≥ 65%", {"min": 0.65, "max": None}),
        ("cross_session_rate", "≥ 40%", {"min": 0.4, "max": None}),
        ("decay_compliance", "= 100%", {"min": 1.0, "max": None}),
        ("reflection_conversion", "≥ 70%", {"min": 0.7, "max": None}),
        ("rule_reuse", "≥ 50%", {"min": 0.5, "max": None}),
        ("failure_interception", "≥ 85%", {"min": 0.85, "max": None}),
        ("contract_compliance", "= 100%", {"min": 1.0, "max": None}),
        ("fallback_activation", "5%–15%", {"min": 0.05, "max": 0.15}),
        ("chain_success", "≥ 80%", {"min": 0.8, "max": None}),
    ],
)
def test_thresholds(metric: str, text: str, limits: dict[str, float | None]) -> None:
    threshold = BY_ID[metric].threshold
    assert (threshold.text, threshold.as_dict()) == (text, limits)


def test_dimensions_and_trend_metrics() -> None:
    assert [(d.dimension, d.id, d.from_traces) for d in DEFINITIONS] == [
        ("MH", "memory_utilisation", False),
        ("MH", "cross_session_rate", True),
        ("MH", "decay_compliance", False),
        ("RH", "reflection_conversion", False),
        ("RH", "rule_reuse", False),
        ("RH", "failure_interception", False),
        ("SH", "contract_compliance", True),
        ("SH", "fallback_activation", True),
        ("SH", "chain_success", True),
    ]


def report(**more: object) -> HealthReport:
    values = {
        "memory_utilisation": (2, 3),
        "cross_session_rate": (0, 0),
        "decay_compliance": (1, 1),
        "reflection_conversion": (0, 4),
        "rule_reuse": (0, 0),
        "failure_interception": (0, 0),
        "contract_compliance": (9, 10),
        "fallback_activation": (1, 10),
        "chain_success": (1, 1),
    }
    notes = {"reflection_conversion": "needs --pack (its deployed patches)"}
    metrics = tuple(Metric(k, n, d, notes.get(k, "")) for k, (n, d) in values.items())
    days = (Day("2024-05-01", 3, 1, {"contract_compliance": (9, 10)}),)
    return HealthReport(NOW, metrics, days, **more)  # type: ignore[arg-type]


def test_json() -> None:
    doc = json.loads(render_json(report(pack="商城", since=datetime(2024, 5, 1, tzinfo=UTC))))
    assert (doc["pack"], doc["since"], doc["now"], doc["marks"]) == (
        "商城",
        "2024-05-01T00:00:00Z",
        "2024-05-06T00:00:00Z",
        {"pass": 4, "warn": 1, "n/a": 4},
    )
    assert doc["dimensions"][1]["metrics"][0] == {
        "id": "reflection_conversion",
        "name": "reflection conversion",
        "numerator": 0,
        "denominator": 4,
        "value": None,
        "healthy": "≥ 70%",
        "threshold": {"min": 0.7, "max": None},
        "mark": "n/a",
        "note": "needs --pack (its deployed patches)",
    }
    assert doc["trend"] == [
        {
            "day": "2024-05-01",
            "turns": 3,
            "reflections": 1,
            "cross_session_rate": None,
            "contract_compliance": 0.9,
            "fallback_activation": None,
            "chain_success": None,
        }
    ]


def test_the_table() -> None:
    # markup-like text in a note or a pack name is printed as it is
    out = render_table(report(pack="[bold]x"))
    assert out == (
        "Cognitive health · pack [bold]x · now 2024-05-06T00:00:00Z\n"
        "\n"
        "    metric                  value  count  healthy  mark  note\n" + "─" * 92 + "\n"
        "MH  memory utilisation      66.7%    2/3  ≥ 65%    pass\n"
        "    cross-session recall      n/a    0/0  ≥ 40%    n/a\n"
        "    decay compliance       100.0%    1/1  = 100%   pass\n"
        "\n"
        "RH  reflection conversion     n/a    0/4  ≥ 70%    n/a   needs --pack (its deployed "
        "patches)\n"
        "    rule reuse                n/a    0/0  ≥ 50%    n/a\n"
        "    failure interception      n/a    0/0  ≥ 85%    n/a\n"
        "\n"
        "SH  contract compliance     90.0%   9/10  = 100%   warn\n"
        "    fallback activation     10.0%   1/10  5%–15%   pass\n"
        "    chain success          100.0%    1/1  ≥ 80%    pass\n"
        "\n"
        "4 pass, 1 warn, 4 n/a\n"
    )
    assert "every pack" in render_table(report())
