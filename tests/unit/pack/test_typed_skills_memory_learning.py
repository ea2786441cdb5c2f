"""The typed models of the skill contracts, ``fallbacks.yaml``, ``faq.yaml``, ``memory.yaml``,
``learning.yaml`` and the patch files: a shipped file reads into them whole, and what the schema
rejects reads as the default (or None, at its index) so that the compile stages still run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter.pack.typed._lenient import DocModel
from charter.pack.typed.learning import (
    Calibration,
    LearningFile,
    ParameterMapping,
    PatchFile,
    Triggers,
)
from charter.pack.typed.memory import (
    FactRule,
    Lifecycle,
    MemoryFile,
    MemoryType,
    Origin,
    PiiRule,
    Retrieval,
    ShortTerm,
    Statement,
)
from charter.pack.typed.skills import (
    Breaker,
    Constraint,
    Expect,
    FallbacksFile,
    FallbackStep,
    FaqEntry,
    FaqFile,
    Limits,
    SkillFile,
    SkillTest,
)
from charter.pack.yamlsrc import load_yaml

ROOT = Path(__file__).resolve().parents[3]

# An expected model with a list or a nested mapping is read from JSON: the lenient validators run
# when a model is built too, and keep only what a file can hold (a list, not a tuple).


def data_of(rel: str) -> Any:
    doc, diags = load_yaml(ROOT / rel)
    assert doc is not None and not diags, diags
    return doc.data


# ---- shipped files --------------------------------------------------------------------------


def test_a_skill_contract() -> None:
    skill = SkillFile.read(data_of("domains/ecommerce/skills/coupon_check.yaml"))
    assert (skill.name, skill.effect, skill.fallback) == ("coupon_check", None, "coupon_check")
    assert skill.description == "校验优惠券能否用于指定金额的订单，并计算优惠金额和应付金额"
    assert skill.input_schema is not None and skill.input_schema["required"] == [
        "coupon_code",
        "order_amount",
    ]
    assert set(skill.properties or {}) == {"coupon_code", "order_amount"}
    assert skill.output_schema is not None and skill.output_schema["if"] == {
        "properties": {"valid": {"const": True}}
    }
    assert skill.messages["default"] == "优惠券校验只需要券码和订单金额"
    assert skill.constraints == (
        Constraint(check="args.order_amount > 0", message="订单金额需大于0元"),
    )
    assert skill.limits == Limits(timeout="2s")
    assert skill.breaker == Breaker(failures=3, slow="2s", cooldown="30s")
    assert skill.tests[0] == SkillTest.read(
        {
            "name": "满减券可用",
            "args": {"coupon_code": "SAVE20", "order_amount": 158},
            "expect": {
                "status": "ok",
                "message": "优惠券SAVE20可以使用，本单优惠20.00元，优惠后应付138.00元，券有效期至2024-06-30。",
            },
        }
    )


def test_an_executing_skill_and_a_reply() -> None:
    assert SkillFile.read(data_of("domains/finance/skills/transfer.yaml")).effect == "execute"
    # read as written, by the responses stage
    reply = SkillFile.read(data_of("domains/finance/skills/account_balance.yaml")).reply
    assert reply[0] == {
        "when": "found == 0",
        "text": "没有查到尾号{args.account_tail}的账户，请核对卡号后四位后再告诉我。",
    }


def test_fallback_protocols() -> None:
    fallbacks = FallbacksFile.read(data_of("domains/ecommerce/fallbacks.yaml"))
    steps = fallbacks.protocols["logistics_track"]
    assert steps[0] == FallbackStep(when="negations >= 2", do="handoff_human aftersale")
    assert steps[1] == FallbackStep.read(
        {
            "when": [
                "unavailable",
                "expr not context.query matches /到哪|哪儿了|在哪里?了|快递在哪|包裹在哪/",
            ],
            "do": "degrade_to_faq min_score 0.5",
        }
    )
    assert list(fallbacks.protocols)[:2] == ["order_lookup", "logistics_track"]


def test_the_faq() -> None:
    faq = FaqFile.read(data_of("domains/ecommerce/faq.yaml"))
    assert (faq.min_score, faq.direct_score) == (None, None)
    assert faq.entries[0] == FaqEntry.read(
        {
            "id": "delivery-time",
            "question": "快递一般几天能到？",
            "alternates": ["发货后多久能收到", "物流要几天"],
            "answer": "一般情况下，江浙沪地区1-2天送达，其他地区2-4天送达，偏远地区可能需要5-7天，具体以物流轨迹为准。",
            "skills": ["logistics_track", "order_lookup"],
        }
    )


def test_a_memory_policy() -> None:
    memory = MemoryFile.read(data_of("domains/medical/memory.yaml"))
    assert memory.short_term == ShortTerm(turns=5, summary_chars=30)
    assert memory.retrieval == Retrieval(top_k=3, min_score=0.87, recency_weight=True)
    assert memory.uncertainty == 0.72
    assert memory.types["allergy"] == MemoryType.read(
        {"validity": "forever", "level": "L3", "roles": ["doctor"]}
    )
    assert memory.types["inferred"] == MemoryType(validity="7d*(1-confidence)")
    assert memory.pii["phone"] == PiiRule(level="L2", action="redact", token="[PHONE]")
    assert memory.pii["id_card"] == PiiRule(level="L3", action="drop")
    assert memory.encryption.levels == ("L2", "L3")
    assert memory.scopes["appointment"] == ("appointment", "clinical", "support")
    assert memory.roles == {"allergy": ("doctor",), "diagnosis_history": ("doctor",)}
    assert memory.lifecycle == Lifecycle(hot="7d", warm="180d")
    assert memory.lifecycle.model_fields_set == {"hot", "warm"}
    facts = memory.slot_facts
    assert facts.default == FactRule(type="health")
    assert facts.keys["phone"] == FactRule(type="fact", level="L2")
    assert facts.origins.inferred == Origin(confidence=0.6, validity="7d*(1-confidence)")
    assert memory.statements[0] == Statement.read(
        {
            "pattern": ["我对{X}过敏", "有{X}过敏史"],
            "key": "allergy",
            "type": "allergy",
            "intent": "medication",
            "consent": True,
        }
    )
    assert memory.statements[3] is not None and memory.statements[3].value == "怀孕"


def test_learning_settings() -> None:
    learning = LearningFile.read(data_of("domains/finance/learning.yaml"))
    assert learning.triggers == Triggers(
        skill_failures=2, negation=True, entropy=3.2, contradiction_turns=3, rejection=True
    )
    assert (learning.similarity, learning.patches_dir) == (0.85, "patches")
    assert learning.concepts["市净率"] == "股价 ÷ 每股净资产（看账面价值）"


def test_a_patch_file() -> None:
    patches = PatchFile.read(data_of("tests/fixtures/broken/learning/patches/001-time.yaml"))
    assert patches.parameter_mappings[0] == ParameterMapping.read(
        {
            "id": "quarterly-report/time/去年一季度",
            "intent": "quarterly-report",
            "entity": "time",
            "phrase": "去年一季度",
            "set": {"year": "current_yaer - 1", "quarter": 1},
            "learned_from": ["R-000001"],
        }
    )
    assert patches.calibrations == (
        Calibration.read(
            {
                "id": "calibration/市盈率-市净率",
                "confused_pair": ["市盈率", "市盈率"],
                "discriminator": "市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产",
                "intent": "stock-metric",
                "learned_from": ["R-2"],
            }
        ),
    )


# ---- what the schema rejects ----------------------------------------------------------------


@pytest.mark.parametrize(
    "model", [SkillFile, FallbacksFile, FaqFile, MemoryFile, LearningFile, PatchFile]
)
def test_a_document_that_is_no_mapping_reads_as_every_default(model: type[DocModel]) -> None:
    for value in (None, "text", [{"name": "x"}], 3):
        assert model.read(value) == model()


def test_a_broken_skill_contract() -> None:
    skill = SkillFile.read(
        {
            "name": 3,
            "input_schema": ["type", "object"],
            "messages": {"a": 1, "b": "ok"},
            "constraints": ["args.x > 1", {"check": 1, "message": "m", "asks": ["a", 2]}],
            "limits": "fast",
            "breaker": {"failures": True, "slow": 2},
            "tests": {"name": "t"},
        }
    )
    assert (skill.name, skill.input_schema, skill.properties) == (None, None, None)
    assert skill.messages == {"a": "", "b": "ok"}
    # item 1 is still item 1, and an argument that is no string is still named
    assert skill.constraints == (None, Constraint.read({"message": "m", "asks": ["a", 2]}))
    assert (skill.limits, skill.breaker, skill.tests) == (Limits(), Breaker(), ())
    assert SkillTest.read({"name": "t", "expect": {"status": 1}}).expect == Expect()


@pytest.mark.parametrize(
    ("schema", "properties"),
    [
        ({}, {}),  # no properties: none declared
        ({"properties": {"a": {}}}, {"a": {}}),
        ({"properties": ["a"]}, None),  # nothing can be said about the arguments
        ({"properties": None}, None),
    ],
)
def test_the_properties_an_input_schema_declares(
    schema: dict[str, Any], properties: dict[str, Any] | None
) -> None:
    assert SkillFile.read({"input_schema": schema}).properties == properties


def test_broken_fallback_steps_keep_their_indexes() -> None:
    fallbacks = FallbacksFile.read(
        {"protocols": {"a": [{"when": ["error", 1], "do": 2}, "x", {"when": {}}], "b": "c"}}
    )
    assert fallbacks.protocols == {
        "a": (FallbackStep.read({"when": ["error", 1]}), None, FallbackStep()),
        "b": (),
    }


def test_a_broken_memory_policy() -> None:
    memory = MemoryFile.read(
        {
            "short_term": {"turns": "5", "summary_chars": 2.5},
            "retrieval": {"recency_weight": "yes", "min_score": True},
            "types": {"a": "forever", "b": {"validity": 7, "roles": "doctor"}},
            "roles": {"allergy": "doctor"},
            "lifecycle": {"warm": 90, "merge_similarity": "high"},
            "slot_facts": {"default": [], "keys": {"k": {"remember": "no"}}},
            "statements": ["我对{X}过敏", {"pattern": ["a", 1], "key": 2}, {"pattern": 3}],
        }
    )
    assert memory.short_term == ShortTerm()
    assert memory.retrieval == Retrieval()
    assert memory.types == {"a": None, "b": MemoryType()}
    assert memory.roles == {"allergy": ()}
    # a wrong value is set: CH311 still points at lifecycle.warm, merge_similarity its default
    assert memory.lifecycle == Lifecycle()
    assert memory.lifecycle.model_fields_set == {"warm", "merge_similarity"}
    rule = memory.slot_facts.keys["k"]
    assert rule == FactRule() and "remember" in rule.model_fields_set
    assert memory.statements == (None, Statement.read({"pattern": ["a"]}), Statement())


@pytest.mark.parametrize(
    ("triggers", "entropy", "given"),
    [
        ({}, None, False),  # the default
        ({"entropy": None}, None, True),  # off
        ({"entropy": 2}, 2.0, True),
        ({"entropy": "high"}, None, False),  # the schema rejected it: the default, not off
        ({"entropy": True}, None, False),
    ],
)
def test_entropy_off_differs_from_entropy_absent(
    triggers: dict[str, Any], entropy: float | None, given: bool
) -> None:
    read = Triggers.read(triggers)
    assert (read.entropy, "entropy" in read.model_fields_set) == (entropy, given)


def test_the_broken_learning_fixture() -> None:
    learning = LearningFile.read(data_of("tests/fixtures/broken/learning/learning.yaml"))
    # -1 is an integer: the stage bounds it
    assert learning.triggers == Triggers(skill_failures=-1)
    assert "entropy" not in learning.triggers.model_fields_set
    assert learning.similarity == 1.5


def test_a_broken_patch_file() -> None:
    patches = PatchFile.read(
        {
            "rejected": ["a", 1, None],
            "parameter_mappings": [{"id": "m", "set": ["year"]}, {"set": {}}, 3],
            "calibrations": [{"confused_pair": ["a", 2, "b"], "learned_from": "R-1"}],
        }
    )
    assert patches.rejected == ("a", None, None)
    # no mapping under set: (left out) differs from an empty one (still checked)
    assert patches.parameter_mappings == (
        ParameterMapping(id="m"),
        ParameterMapping.read({"set": {}}),
        None,
    )
    assert patches.calibrations == (Calibration.read({"confused_pair": ["a", "b"]}),)
