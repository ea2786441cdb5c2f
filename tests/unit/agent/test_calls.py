"""The small pieces of a turn's skill calls: a result field by path (``keep:``), and a skill's
arguments from a goal's slots with formatters (an argument a formatter cannot write is left
out, so the contract asks for it instead of receiving a wrong value)."""

from __future__ import annotations

from typing import Any

import pytest

from charter.agent.calls import at
from charter.agent.parts import slot_args
from charter.contracts.registry import Registry

RESULT = {
    "status": "booked",
    "results": [{"price": "199.00", "promotion": None}],
    "departments": [{"department": "神经内科"}, {"department": "全科医学科"}],
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("status", "booked"),
        ("departments.0.department", "神经内科"),
        ("departments.1.department", "全科医学科"),
        ("departments.2.department", None),
        ("results.0.promotion.price", None),  # the promotion is null
        ("results.0.promotion.price|results.0.price", "199.00"),  # the first that has one
        ("departments", None),  # a list is no slot value
        ("missing.path", None),
    ],
)
def test_a_result_field_by_path(path: str, value: Any) -> None:
    assert at(RESULT, path) == value


@pytest.mark.parametrize(
    ("slots", "expected"),
    [
        (
            {"department": "眼科", "date": "2025-07-02T06:00/2025-07-02T12:00", "period": "上午"},
            {"department": "眼科", "date": "2025-07-02", "period": "上午"},
        ),
        # no date yet: the argument is left out for the contract to ask
        ({"department": "眼科", "period": "上午"}, {"department": "眼科", "period": "上午"}),
        # a value the formatter cannot read is left out too, not passed as it is
        (
            {"department": "眼科", "date": "下周", "period": "上午"},
            {"department": "眼科", "period": "上午"},
        ),
    ],
)
def test_arguments_with_formatters(
    registry: Registry, slots: dict[str, Any], expected: dict[str, Any]
) -> None:
    binding = {"department": "{department}", "date": "{date|date}", "period": "{period}"}
    assert slot_args(binding, slots, registry.formatters) == expected
