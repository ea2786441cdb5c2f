"""CH308 and CH309 (issue 16): a slot's regex tried on the PII recognizers' examples warns when
it would take personal data the slot does not declare (``personal:``); an unknown kind there is
an error. What the runtime does with such a value is tested in tests/unit/goals/test_slots.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.contracts.registry import Registry

PACK = "name: pii\nversion: 0.1.0\n"


def goals(slot: str) -> str:
    return f"""\
intents:
  - id: refund
    describe: 退款
    trigger: input contains "退款"
    slots:
      - name: order_id
{slot}
    description: 退款
"""


def diagnostics(tmp_path: Path, registry: Registry, slot: str) -> list[tuple[str, str, str]]:
    (tmp_path / "pack.yaml").write_text(PACK, encoding="utf-8")
    (tmp_path / "goals.yaml").write_text(goals(slot), encoding="utf-8")
    _, diags = compile_path(tmp_path, registry, cache_dir=None)
    return [(d.code, d.message, f"{d.location.line}:{d.location.col}") for d in diags]


@pytest.mark.parametrize(
    ("slot", "expected"),
    [
        (
            "        regex: (?P<value>[0-9]{12,20})",
            [
                (
                    "CH308",
                    "the regex of slot 'order_id' of intent 'refund' captures personal data: "
                    "id_card (11010519491231002), bank_card (6222026815398387), phone "
                    "(8613812345678); such a value is passed over at run time",
                    "7:16",
                )
            ],
        ),
        (
            "        regex: (?<![0-9A-Za-z+])(?P<value>(?:DD)?[0-9]{12,15})(?![0-9])",
            [],
        ),
        (
            "        regex: (?P<value>[0-9]{12,20})\n        personal: [id_card, bank_card, phone]",
            [],
        ),
        (
            "        regex: (?P<value>[0-9]{12,20})\n        personal: [bank_card]",
            [
                (
                    "CH308",
                    "the regex of slot 'order_id' of intent 'refund' captures personal data: "
                    "id_card (11010519491231002), phone (8613812345678); such a value is "
                    "passed over at run time",
                    "7:16",
                )
            ],
        ),
        (
            # a city is coarser than any address the policy would keep: no personal data
            "        regex: (?P<value>北京|上海|杭州)",
            [],
        ),
        (
            "        regex: 寄到(?P<value>\\p{Han}+?[0-9]+号)",
            [
                (
                    "CH308",
                    "the regex of slot 'order_id' of intent 'refund' captures personal data: "
                    "address (浙江省杭州市西湖区文三路90号); such a value is passed over at run time",
                    "7:16",
                )
            ],
        ),
        (
            "        regex: (?<![0-9])(?P<value>[0-9]{17}[0-9X])(?![0-9])\n"
            "        personal: [id_card, passport]",
            [
                (
                    "CH309",
                    "unknown kind of personal data 'passport' in slot 'order_id' of intent "
                    "'refund'",
                    "8:29",
                )
            ],
        ),
    ],
)
def test_slot_regexes_taking_personal_data(
    tmp_path: Path, registry: Registry, slot: str, expected: list[tuple[str, str, str]]
) -> None:
    assert diagnostics(tmp_path, registry, slot) == expected
