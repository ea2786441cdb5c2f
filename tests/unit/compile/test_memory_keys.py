"""goals.yaml's fact keys: a slot's value is remembered under ``<intent>.<slot>``, or the
``memory_key`` the slot declares; a slot carried from memory reads its own key, and one slot
name carried from memory under two keys is refused (CH317)."""

from __future__ import annotations

from pathlib import Path

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]


def _goals(second_key: str) -> str:
    return f"""\
intents:
  - id: order-query
    describe: 订单查询
    trigger: input contains "订单"
    slots:
      - name: order_id
        regex: (?P<value>DD[0-9]{{12}})
        carry: memory
        memory_key: order_id
  - id: logistics
    describe: 物流查询
    trigger: input contains "物流"
    slots:
      - name: order_id
        regex: (?P<value>DD[0-9]{{12}})
        carry: memory{second_key}
      - name: waybill
        regex: (?P<value>SF[0-9]{{10}})
"""


def _compile(
    tmp_path: Path, registry: Registry, goals: str
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    (tmp_path / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (tmp_path / "goals.yaml").write_text(goals, encoding="utf-8")
    return compile_path(tmp_path, registry, cache_dir=None)


def test_fact_keys_of_slots(tmp_path: Path, registry: Registry) -> None:
    pack, diags = _compile(tmp_path, registry, _goals("\n        memory_key: order_id"))
    assert diags == [] and pack is not None and pack.goals is not None
    spec = pack.goals
    assert spec.fact_key("order-query", "order_id") == "order_id"
    assert spec.fact_key("logistics", "order_id") == "order_id"
    assert spec.fact_key("logistics", "waybill") == "logistics.waybill"
    assert spec.fact_key("logistics", "carrier") == "logistics.carrier"  # a kept field
    assert spec.fact_key("unknown", "x") == "unknown.x"
    assert spec.remembered_keys == {"order_id": "order_id"}


def test_one_slot_carried_from_memory_under_two_keys(tmp_path: Path, registry: Registry) -> None:
    _, diags = _compile(tmp_path, registry, _goals(""))
    assert [(d.code, d.location.line, d.location.col, d.message, d.hint) for d in diags] == [
        (
            "CH317",
            16,
            16,
            "slot 'order_id' of intent 'logistics' is carried from memory under the key "
            "'logistics.order_id', but intent 'order-query' carries it under 'order_id'",
            "give both slots the same memory_key (memory_key: order_id)",
        )
    ]


def test_the_shipped_packs_share_the_keys_their_intents_mean_alike(registry: Registry) -> None:
    keys = {}
    for name in ("finance", "ecommerce", "medical"):
        pack, diags = compiled_with_diagnostics(name)
        assert pack is not None and pack.goals is not None and diags == [], diags
        keys[name] = pack.goals
    finance, ecommerce, medical = keys["finance"], keys["ecommerce"], keys["medical"]
    # the collision of issue 17: the two amounts are two facts
    assert finance.fact_key("transfer", "amount") == "transfer.amount"
    assert finance.fact_key("wealth-product", "amount") == "wealth-product.amount"
    assert finance.fact_key("transfer", "card_tail") == "card_tail"
    assert finance.remembered_keys == {"card_tail": "card_tail"}
    for intent in ("order-query", "logistics", "return-exchange", "coupon"):
        assert ecommerce.fact_key(intent, "order_id") == "order_id"
    assert ecommerce.remembered_keys == {"order_id": "order_id"}
    assert medical.fact_key("registration", "phone") == "phone"
    assert medical.fact_key("registration", "department") == "registration.department"
