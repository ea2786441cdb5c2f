"""Facts from what the user said: memory.yaml's ``statements`` (我对{X}过敏 → allergy) and
``slot_facts`` (the type, level, source, confidence and validity of a slot value's fact),
compiled with their diagnostics and written through the write pipeline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.memory_facts import compile_phrase
from charter.compile.specs.memory import (
    FactRule,
    MemoryPolicy,
    SlotFacts,
    SlotOrigin,
    Statement,
    Validity,
)
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from charter.memory.pipeline import Candidate, Dropped, WritePipeline
from charter.memory.records import Accessor, PreparedFact
from charter.memory.statements import (
    slot_candidate,
    statement_candidate,
    statements_of,
)
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 7, 9, 0, tzinfo=UTC)
USER = Accessor("u1", "agent")
KEY = bytes(range(32))


def _policy(registry: Registry, name: str) -> MemoryPolicy:
    pack, diags = compiled_with_diagnostics(name)
    assert pack is not None and pack.memory is not None and diags == [], diags
    return pack.memory


@pytest.fixture(scope="module")
def medical(registry: Registry) -> MemoryPolicy:
    return _policy(registry, "medical")


@pytest.fixture(scope="module")
def finance(registry: Registry) -> MemoryPolicy:
    return _policy(registry, "finance")


def _read(policy: MemoryPolicy, text: str) -> list[tuple[str, str]]:
    return [(s.statement.key, s.value) for s in statements_of(policy, text)]


# ---- reading statements ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("我对青霉素过敏", [("allergy", "青霉素")]),
        ("医生你好，我对青霉素和头孢过敏，头疼能吃什么药", [("allergy", "青霉素和头孢")]),
        ("以前查过，有磺胺类药物过敏史", [("allergy", "磺胺类药物")]),
        ("我有高血压，能吃布洛芬吗", [("chronic_disease", "高血压")]),
        ("我是糖尿病患者", [("chronic_disease", "糖尿病")]),
        ("我怀孕12周了，感冒了怎么办", [("pregnancy", "怀孕12周")]),
        ("我怀孕了，能吃感冒药吗", [("pregnancy", "怀孕")]),
        ("我对青霉素过敏，而且我有哮喘", [("allergy", "青霉素"), ("chronic_disease", "哮喘")]),
        # not statements: negated, asked, a value the statement does not take
        ("我对青霉素不过敏", []),
        ("我对什么过敏", []),
        ("我对青霉素过敏吗？", []),
        ("我有一个问题想问", []),
        ("我没有高血压", []),
    ],
)
def test_the_medical_statements(medical: MemoryPolicy, text: str, read: list[object]) -> None:
    assert _read(medical, text) == read


def test_a_phrase_ending_in_its_value_reads_the_whole_clause(finance: MemoryPolicy) -> None:
    text = "我的发票抬头是杭州云帆科技有限公司，税号稍后给你"
    assert _read(finance, text) == [("invoice_title", "杭州云帆科技有限公司")]


@pytest.mark.parametrize(
    ("phrase", "values", "regex"),
    [
        ("我对{X}过敏", (), "我对(?P<value>[^\\s，。！？；：、,.!?;:“”\\\"'（）()]{1,30}?)过敏"),
        ("我有{X}", ("高血压", "哮喘"), "我有(?P<value>高血压|哮喘)"),
        ("我怀孕了", (), "我怀孕了"),
        ("a.b{X}", ("1",), "a\\.b(?P<value>1)"),
    ],
)
def test_phrases_compile_to_regular_expressions(
    phrase: str, values: tuple[str, ...], regex: str
) -> None:
    assert compile_phrase(phrase, values) == regex


# ---- the facts they become ------------------------------------------------------------------------


def test_a_statement_becomes_the_declared_fact(medical: MemoryPolicy) -> None:
    (said,) = statements_of(medical, "我对青霉素过敏")
    c = statement_candidate(said, domain="clinical", intent_type="symptom")
    assert (c.key, c.value, c.memory_type, c.source, c.confidence) == (
        "allergy",
        "青霉素",
        "allergy",
        "user_confirmed",
        1.0,
    )
    # recalled with the intent the statement names, not the turn's; only with consent
    assert (c.intent_type, c.consent_required) == ("medication", True)
    assert medical.may_see("doctor", "allergy", "allergy")
    assert not medical.may_see("agent", "allergy", "allergy")
    assert medical.may_see("pharmacist", "pregnancy", "pregnancy")


def test_a_statement_needing_consent_is_not_stored_without_it(
    registry: Registry, medical: MemoryPolicy
) -> None:
    pipeline = WritePipeline(medical, registry, KEY, clock=lambda: T0)
    (said,) = statements_of(medical, "我对青霉素过敏")
    c = statement_candidate(said, domain="clinical", intent_type=None)
    dropped = pipeline.prepare(USER, c)
    assert dropped == Dropped("allergy: remembered only with the user's consent", "consent")
    stored = pipeline.prepare(Accessor("u1", "agent", consent="app_v3"), c)
    assert isinstance(stored, PreparedFact)
    assert (stored.level, stored.encrypted, stored.consent_source) == ("L3", True, "app_v3")
    assert pipeline.reveal(stored) == "青霉素"


# ---- slot facts ------------------------------------------------------------------------------------


def test_the_rule_of_a_key_the_intent_s_then_the_default() -> None:
    facts = SlotFacts(
        default=FactRule("fact"),
        keys={"transfer.*": FactRule("account_fact"), "transfer.date": FactRule("session")},
    )
    assert facts.rule("transfer.amount").type == "account_fact"
    assert facts.rule("transfer.date").type == "session"
    assert facts.rule("wealth-product.amount").type == "fact"
    assert facts.rule("card_tail").type == "fact"


@pytest.mark.parametrize(
    ("key", "origin", "type_", "source", "confidence"),
    [
        ("transfer.amount", "stated", "account_fact", "user_confirmed", 1.0),
        ("card_tail", "stated", "account_fact", "user_confirmed", 1.0),
        ("account-query.item", "inferred", "query", "inferred", 0.6),
        ("wealth-product.risk", "stated", "risk_profile", "user_confirmed", 1.0),
        ("invoice.kind", "verified", "preference", "system_verified", 0.9),
    ],
)
def test_the_finance_slot_facts(
    finance: MemoryPolicy, key: str, origin: str, type_: str, source: str, confidence: float
) -> None:
    c = slot_candidate(finance, key, "x", origin, domain="billing", intent_type="transfer")  # type: ignore[arg-type]
    assert c is not None
    assert (c.memory_type, c.source, c.confidence) == (type_, source, confidence)


def test_finance_account_slots_are_encrypted(registry: Registry, finance: MemoryPolicy) -> None:
    pipeline = WritePipeline(finance, registry, KEY, clock=lambda: T0)
    for key, value in (("transfer.amount", "38600"), ("transfer.payee", "王建国")):
        c = slot_candidate(finance, key, value, "stated", domain="billing", intent_type="transfer")
        assert c is not None
        fact = pipeline.prepare(USER, c)
        assert isinstance(fact, PreparedFact)
        assert (fact.level, fact.encrypted) == ("L2", True)
        assert value not in fact.value and pipeline.reveal(fact) == value
        assert fact.valid_until == T0 + timedelta(days=365)


def test_an_encrypted_fact_keeps_no_reference_repeating_its_value(
    registry: Registry, finance: MemoryPolicy
) -> None:
    pipeline = WritePipeline(finance, registry, KEY, clock=lambda: T0)
    c = slot_candidate(
        finance,
        "wealth-product.amount",
        "100000",
        "stated",
        domain="billing",
        intent_type="wealth-product",
        entity_ref="100000",
    )
    assert c is not None
    fact = pipeline.prepare(USER, c)
    assert isinstance(fact, PreparedFact) and fact.encrypted and fact.entity_ref is None


def test_an_inferred_value_lives_as_briefly_as_its_origin_says(
    registry: Registry, finance: MemoryPolicy
) -> None:
    pipeline = WritePipeline(finance, registry, KEY, clock=lambda: T0)
    c = slot_candidate(
        finance, "invoice.kind", "电子普通发票", "inferred", domain="billing", intent_type="invoice"
    )
    assert c is not None and c.confidence == 0.6
    fact = pipeline.prepare(USER, c)
    assert isinstance(fact, PreparedFact)
    # preference keeps 180 d; an inferred value 7 d × (1 - 0.6): the earlier end applies
    assert fact.valid_until == T0 + timedelta(days=2.8)


def test_a_key_that_is_not_remembered() -> None:
    policy = MemoryPolicy(slot_facts=SlotFacts(keys={"a.b": FactRule(remember=False)}))
    assert slot_candidate(policy, "a.b", "v", "stated", domain="d", intent_type="a") is None


def test_a_rule_s_level_raises_the_type_s(registry: Registry) -> None:
    policy = MemoryPolicy(
        slot_facts=SlotFacts(
            keys={"a.b": FactRule("fact", level="L2", confidence=0.5)},
            origins={"stated": SlotOrigin(0.8, Validity("fixed", 3600))},
        )
    )
    pipeline = WritePipeline(policy, registry, KEY, clock=lambda: T0)
    c = slot_candidate(policy, "a.b", "v", "stated", domain="d", intent_type="a")
    assert c is not None and c.confidence == 0.4
    fact = pipeline.prepare(USER, c)
    assert isinstance(fact, PreparedFact)
    assert (fact.level, fact.encrypted, fact.valid_until) == ("L2", True, T0 + timedelta(hours=1))


def test_a_candidate_without_rules_is_stored_as_before(registry: Registry) -> None:
    pipeline = WritePipeline(MemoryPolicy(), registry, KEY, clock=lambda: T0)
    fact = pipeline.prepare(USER, Candidate("k", "v"))
    assert isinstance(fact, PreparedFact)
    assert (fact.level, fact.encrypted, fact.valid_until) == ("L0", False, None)


# ---- diagnostics ------------------------------------------------------------------------------------


def _compile(tmp_path: Path, registry: Registry, memory: str) -> list[Diagnostic]:
    (tmp_path / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (tmp_path / "memory.yaml").write_text(memory, encoding="utf-8")
    _, diags = compile_path(tmp_path, registry, cache_dir=None)
    return diags


def _found(diags: list[Diagnostic]) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.location.line, d.location.col, d.message) for d in diags]


def test_an_unknown_memory_type(tmp_path: Path, registry: Registry) -> None:
    diags = _compile(
        tmp_path,
        registry,
        "types:\n  account_fact: {validity: 365d, level: L2}\n"
        "slot_facts:\n  keys:\n    transfer.*: {type: acount_fact}\n",
    )
    assert _found(diags) == [
        (
            "CH313",
            5,
            24,
            "unknown memory type 'acount_fact': its facts would be plain L0 facts kept for ever",
        )
    ]
    assert diags[0].hint == "did you mean 'account_fact'?"


def test_malformed_statement_phrases(tmp_path: Path, registry: Registry) -> None:
    diags = _compile(
        tmp_path,
        registry,
        "statements:\n"
        "  - pattern: '{A}对{B}过敏'\n    key: allergy\n"
        "  - pattern: ['我怀孕了']\n    key: pregnancy\n"
        "  - pattern: 我怀孕了\n    key: pregnancy\n    value: '{X}'\n",
    )
    assert _found(diags) == [
        (
            "CH314",
            2,
            14,
            "statement 'allergy': the phrase '{A}对{B}过敏' has 2 placeholders; "
            "a statement reads one",
        ),
        (
            "CH314",
            4,
            15,
            "statement 'pregnancy': the phrase '我怀孕了' has no {X} and the statement no "
            "value: to store",
        ),
        (
            "CH314",
            6,
            14,
            "statement 'pregnancy': value: names {X} but the phrase '我怀孕了' reads none",
        ),
    ]


def test_statement_roles_against_the_policy_s(tmp_path: Path, registry: Registry) -> None:
    diags = _compile(
        tmp_path,
        registry,
        "roles:\n  allergy: [doctor]\n"
        "statements:\n  - pattern: 我对{X}过敏\n    key: allergy\n    roles: [nurse]\n",
    )
    assert _found(diags) == [
        ("CH315", 6, 12, "statement 'allergy' lets nurse read it, but roles: says doctor")
    ]


def test_statement_roles_become_the_key_s(tmp_path: Path, registry: Registry) -> None:
    (tmp_path / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (tmp_path / "memory.yaml").write_text(
        "statements:\n  - pattern: 我对{X}过敏\n    key: allergy\n    roles: [doctor]\n",
        encoding="utf-8",
    )
    pack, diags = compile_path(tmp_path, registry, cache_dir=None)
    assert diags == [] and pack is not None and pack.memory is not None
    assert pack.memory.roles == {"allergy": frozenset({"doctor"})}
    (s,) = pack.memory.statements
    assert s == Statement("allergy", (compile_phrase("我对{X}过敏"),), rule=FactRule("fact"))
