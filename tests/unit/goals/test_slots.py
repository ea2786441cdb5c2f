"""A regex slot never takes personal data it does not declare (issue 16): a value overlapping
what a PII recognizer finds is passed over, unless the slot lists its kind (``personal:``) or
the value is as coarse as a policy keeps anyway (a city out of a street address)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from charter.compile.specs import goals as S
from charter.compile.specs.slots import SlotReader
from charter.contracts.registry import Registry
from charter.diagnostics import Location

NOW = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
ORDER = r"(?<![0-9A-Za-z])(?P<value>(?:DD)?[0-9]{12,20})(?![0-9])"
CITY = r"(?P<value>北京|上海|杭州)"
PLACE = r"寄到(?P<value>\p{Han}+?[0-9]+号)"


def read(registry: Registry, pattern: str, text: str, personal: tuple[str, ...] = ()) -> Any:
    slot = S.SlotSpec(name="v", regex=pattern, personal=personal)
    # the reader looks at slots only: no trigger, no location needed
    none: Any = None
    intent = S.IntentSpec("i", "", none, (), Location("goals.yaml"), slots=(slot,))
    spec = S.GoalsSpec((intent,), none, none, ())
    reader = SlotReader(spec, registry.extractors, registry.pii_recognizers.values())
    return reader.values(intent, text, NOW).get("v")


@pytest.mark.parametrize(
    ("pattern", "text", "personal", "expected"),
    [
        (ORDER, "退款请打到我的银行卡6222026815398387。", (), None),
        (ORDER, "退款请打到我的银行卡６２２２０２６８１５３９８３８７。", (), None),
        (ORDER, "身份证11010519491231002X", (), None),
        (ORDER, "订单DD202405070007，卡6222026815398387", (), "DD202405070007"),
        (ORDER, "订单202405070007要退款", (), "202405070007"),
        (ORDER, "卡号6222026815398387", ("bank_card",), "6222026815398387"),
        (CITY, "寄到浙江省杭州市西湖区文三路90号", (), "杭州"),
        (PLACE, "寄到浙江省杭州市西湖区文三路90号", (), None),
        (PLACE, "寄到浙江省杭州市西湖区文三路90号", ("address",), "浙江省杭州市西湖区文三路90号"),
    ],
)
def test_regex_slots_and_personal_data(
    registry: Registry, pattern: str, text: str, personal: tuple[str, ...], expected: Any
) -> None:
    assert read(registry, pattern, text, personal) == expected
