"""The ``zh`` plugin registers its sixteen extractors and one predicate through Charter's plugin host (its PII
recognizers are tested in ``test_zh_pii``)."""

from __future__ import annotations

import charter_zh.plugin
from charter.contracts.rules import Extractor
from charter.plugins.host import build_registry, make_plugin_manager

NAMES = {
    "money": ("number", True),
    "money_upper": ("number", True),
    "percent": ("number", True),
    "date": ("date", False),
    "url": ("text", False),
    "email": ("text", False),
    "phone": ("text", False),
    "tax_doc": ("text", False),
    "drug": ("text", False),
    "id_card": ("text", False),
    "bank_card": ("text", False),
    "address": ("text", False),
    "time": ("date", False),
    "user_claim": ("text", False),
    "spoken_amount": ("number", True),
    "card_tail": ("text", False),
}


def test_registers_exactly_the_sixteen_extractors_and_the_predicate() -> None:
    pm, diags = make_plugin_manager(load_entry_points=False)
    assert diags == []
    pm.register(charter_zh.plugin, name="zh")
    registry, more = build_registry(pm)
    assert more == []
    # the built-in plugin (charter.plugins.builtin) registers identifier and the model-text predicates
    assert set(registry.extractors) == set(NAMES) | {"identifier"}
    assert set(registry.predicates) == {
        "backed_by_memory",
        "echoes",
        "repetitive",
        "off_language",
        "no_content",
    }


def test_extractors_satisfy_the_protocol() -> None:
    extractors = charter_zh.plugin.charter_register_extractors()
    assert len(extractors) == len(NAMES)
    for ex in extractors:
        assert isinstance(ex, Extractor)
        assert (ex.value_kind, ex.has_units) == NAMES[ex.name]
        assert ex.extract("") == ()


def test_entry_point_is_declared() -> None:
    import importlib.metadata as md

    eps = {ep.name: ep.value for ep in md.entry_points(group="charter")}
    assert eps.get("zh") == "charter_zh.plugin"
