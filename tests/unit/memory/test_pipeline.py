"""The write pipeline: intent filter, PII handled by the policy before anything is stored (a
generated corpus of Chinese ID numbers, mobiles, bank cards and addresses), encryption at the
sensitive levels, value score and validity."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from charter.compile.specs.memory import MemoryPolicy, MemoryType, PiiRule, Validity
from charter.contracts.pii import PiiMatch
from charter.contracts.registry import Registry
from charter.memory.crypto import DecryptionError, MemoryKeyError
from charter.memory.pipeline import Candidate, Dropped, WritePipeline, value_score
from charter.memory.records import Accessor, PreparedFact
from charter.memory.short_term import ShortTermMemory, SqlShortTermStore
from tests.support.memory import KEY, POLICY, RULES
from tests.support.memory import PIPELINE_T0 as T0
from tests.unit.memory.pii_corpus import CORPUS, Sample

OTHER_KEY = base64.b64encode(bytes(range(1, 33))).decode()
USER = Accessor("u-1001", "agent", consent="app_v3.2")


def pipeline(registry: Registry, policy: MemoryPolicy = POLICY, key: str = KEY) -> WritePipeline:
    return WritePipeline(policy, registry, key, clock=lambda: T0)


# ---- the corpus (tests/unit/memory/pii_corpus.py) ----------------------------------------


def test_the_corpus_is_big_and_every_value_distinct() -> None:
    raws = [r for s in CORPUS for r in s.raw if not any("\u4e00" <= ch <= "\u9fff" for ch in r)]
    assert len(CORPUS) == 260
    assert len(set(raws)) == len(raws) == 60 + 60 + 50 + 60


@pytest.fixture(scope="module")
def prepared(registry: Registry) -> list[tuple[Sample, PreparedFact | Dropped]]:
    pipe = pipeline(registry)
    return [
        (s, pipe.prepare(USER, Candidate("profile_note", s.sentence, intent_type="update_profile")))
        for s in CORPUS
    ]


def _fields(fact: PreparedFact | Dropped) -> Iterator[str]:
    for f in dataclasses.fields(fact):
        yield str(getattr(fact, f.name))
    yield repr(fact)


def test_no_raw_value_reaches_a_prepared_fact(
    prepared: list[tuple[Sample, PreparedFact | Dropped]],
) -> None:
    leaks = [
        (s.sentence, raw)
        for s, fact in prepared
        for raw in s.raw
        for text in _fields(fact)
        if raw in text
    ]
    assert leaks == []


def test_each_kind_is_handled_by_its_rule(
    registry: Registry, prepared: list[tuple[Sample, PreparedFact | Dropped]]
) -> None:
    pipe = pipeline(registry)
    for sample, fact in prepared:
        if sample.expected is None:
            assert fact == Dropped(
                "the policy drops facts holding bank_card", "pii", ("bank_card",)
            )
            continue
        assert isinstance(fact, PreparedFact), sample.sentence
        assert fact.level == sample.level
        assert fact.encrypted is (sample.level in ("L2", "L3"))
        if not fact.encrypted:
            assert fact.value == sample.expected
        plain = pipe.reveal(fact)
        assert plain == sample.expected
        assert not any(raw in plain for raw in sample.raw)


def test_generalised_addresses_keep_the_district_only(
    prepared: list[tuple[Sample, PreparedFact | Dropped]],
) -> None:
    addresses = [(s, f) for s, f in prepared if s.level == "L1"]
    assert len(addresses) == 60
    for sample, fact in addresses:
        assert isinstance(fact, PreparedFact)
        assert fact.value == sample.expected
        assert sample.raw[1] not in fact.value  # the street-level detail
        assert not any(ch.isdigit() for ch in fact.value)  # no house number survives


@pytest.mark.parametrize(
    "street", ["科技园路19栋A单元2542室", "科苑路7栋C单元282室", "珞喻街道15栋C单元1470室"]
)
def test_streets_named_after_an_estate_are_generalised_whole(
    registry: Registry, street: str
) -> None:
    fact = pipeline(registry).prepare(
        USER, Candidate("ship_to", f"快递送到北京市朝阳区{street}就行。")
    )
    assert isinstance(fact, PreparedFact)
    assert fact.value == "快递送到北京市朝阳区就行。"


def test_encrypted_values_need_the_key_and_their_own_row(
    registry: Registry, prepared: list[tuple[Sample, PreparedFact | Dropped]]
) -> None:
    encrypted = [f for _, f in prepared if isinstance(f, PreparedFact) and f.encrypted]
    assert len(encrypted) == 60 + 60 + 30
    stranger = pipeline(registry, key=OTHER_KEY)
    keyless = WritePipeline(
        MemoryPolicy(pii=RULES, encrypt_levels=frozenset()), registry, environ={}
    )
    own = pipeline(registry)
    for fact in encrypted:
        with pytest.raises(DecryptionError):
            stranger.reveal(fact)
        with pytest.raises(DecryptionError):
            own.reveal(dataclasses.replace(fact, user_id="u-1002"))
        with pytest.raises(DecryptionError):
            own.reveal(dataclasses.replace(fact, key="other_key"))
        with pytest.raises(
            MemoryKeyError, match="this value is encrypted and the pipeline has no key"
        ):
            keyless.reveal(fact)


def test_short_term_turns_scrubbed_by_the_pipeline_leave_no_raw_byte(
    registry: Registry, tmp_path: Path
) -> None:
    pipe = pipeline(registry)
    store = SqlShortTermStore(f"sqlite:///{tmp_path / 'st.db'}")
    st = ShortTermMemory(store, MemoryPolicy(short_term_turns=1000), scrub=pipe.scrub)
    for i, sample in enumerate(CORPUS):
        st.record("u-1001", f"s{i % 7}", sample.sentence, f"好的，已记录：{sample.sentence}")
    store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"short_term_turn" in blob
    leaks = [raw for s in CORPUS for raw in s.raw if raw.encode() in blob]
    assert leaks == []


# ---- rules, spans and levels ---------------------------------------------------------------


def test_a_kind_without_a_rule_is_redacted_at_the_highest_level(registry: Registry) -> None:
    fact = pipeline(registry).prepare(USER, Candidate("email", "发到 zhang.wei@example.com 就行"))
    assert isinstance(fact, PreparedFact)
    assert (fact.level, fact.encrypted) == ("L3", True)
    assert pipeline(registry).reveal(fact) == "发到 [EMAIL] 就行"


def test_keep_is_kept_encrypted_and_never_in_clear(registry: Registry) -> None:
    policy = MemoryPolicy(pii={"phone": PiiRule("phone", "L2", "keep")})
    pipe = pipeline(registry, policy)
    fact = pipe.prepare(USER, Candidate("手机13812345678", "请打13812345678"))
    assert isinstance(fact, PreparedFact)
    assert fact.key == "手机[PHONE]"  # the key is stored in clear
    assert fact.encrypted and "13812345678" not in repr(fact)
    assert pipe.reveal(fact) == "请打13812345678"
    assert pipe.scrub("请打13812345678") == "请打[PHONE]"


def test_keep_at_a_level_in_clear_is_a_policy_choice(registry: Registry) -> None:
    policy = MemoryPolicy(pii={"phone": PiiRule("phone", "L1", "keep")})
    fact = pipeline(registry, policy).prepare(USER, Candidate("phone", "13812345678"))
    assert isinstance(fact, PreparedFact)
    assert (fact.value, fact.level, fact.encrypted) == ("13812345678", "L1", False)


def test_generalize_without_a_coarser_form_redacts(registry: Registry) -> None:
    policy = MemoryPolicy(pii={"phone": PiiRule("phone", "L1", "generalize", "<电话>")})
    fact = pipeline(registry, policy).prepare(USER, Candidate("phone", "13812345678"))
    assert isinstance(fact, PreparedFact)
    assert fact.value == "<电话>"


def test_the_entity_ref_is_scanned_too(registry: Registry) -> None:
    cand = Candidate("callback", "回电", entity_ref="13812345678", intent_type="callback")
    fact = pipeline(registry).prepare(USER, cand)
    assert isinstance(fact, PreparedFact)
    assert (fact.entity_ref, fact.level) == ("[PHONE]", "L2")


@pytest.mark.parametrize("field", ["domain", "memory_type", "intent_type", "consent_source"])
def test_personal_data_in_an_identifier_drops_the_fact(registry: Registry, field: str) -> None:
    changes: dict[str, Any] = {field: "13812345678"}
    cand = dataclasses.replace(Candidate("k", "v"), **changes)
    assert pipeline(registry).prepare(USER, cand) == Dropped(
        f"personal data (phone) in the {field}", "pii", ("phone",)
    )


def test_the_level_is_the_highest_of_type_and_personal_data(registry: Registry) -> None:
    types = {
        "health": MemoryType("health", Validity("forever"), "L2"),
        "pref": MemoryType("pref", Validity("forever"), "L0"),
    }
    pipe = pipeline(registry, MemoryPolicy(pii=RULES, types=types))
    health = pipe.prepare(USER, Candidate("allergy", "青霉素过敏", memory_type="health"))
    pref = pipe.prepare(
        USER, Candidate("ship_to", "寄到北京市朝阳区建国路88号", memory_type="pref")
    )
    assert isinstance(health, PreparedFact) and isinstance(pref, PreparedFact)
    assert (health.level, health.encrypted, pipe.reveal(health)) == ("L2", True, "青霉素过敏")
    assert (pref.level, pref.encrypted, pref.value) == ("L1", False, "寄到北京市朝阳区")


@dataclass
class FakeRecognizer:
    name: str
    kind: str
    placeholder: str
    spans: tuple[tuple[int, int, str | None], ...]

    def recognize(self, text: str) -> tuple[PiiMatch, ...]:
        if text != "ABCDEFGH":
            return ()
        return tuple(PiiMatch(s, e, text[s:e], self.kind, g) for s, e, g in self.spans)


@dataclass
class FakeRegistry:
    pii_recognizers: dict[str, FakeRecognizer]


@pytest.mark.parametrize(
    ("actions", "spans", "out"),
    [
        # the strictest action over the union of overlapping spans
        (("keep", "redact"), ((0, 4, None), (2, 6, None)), "<B>GH"),
        (("redact", "keep"), ((0, 4, None), (2, 6, None)), "<A>GH"),
        (("generalize", "keep"), ((0, 6, "Z"), (2, 4, None)), "ZGH"),
        # a generalisation that does not cover the whole span cannot stand for it
        (("generalize", "keep"), ((0, 4, "Z"), (2, 6, None)), "<A>GH"),
        (("keep", "keep"), ((0, 4, None), (2, 6, None)), "ABCDEFGH"),
        (("redact", "redact"), ((0, 2, None), (5, 7, None)), "<A>CDE<B>H"),
    ],
)
def test_overlapping_matches(
    actions: tuple[str, str], spans: tuple[tuple[int, int, str | None], ...], out: str
) -> None:
    recognizers = {
        kind: FakeRecognizer(kind, kind, f"<{kind.upper()}>", (span,))
        for kind, span in zip(("a", "b"), spans, strict=True)
    }
    rules = {kind: PiiRule(kind, "L1", act) for kind, act in zip(("a", "b"), actions, strict=True)}  # type: ignore[arg-type]
    pipe = WritePipeline(
        MemoryPolicy(pii=rules, encrypt_levels=frozenset()), FakeRegistry(recognizers)
    )
    fact = pipe.prepare(USER, Candidate("k", "ABCDEFGH"))
    assert isinstance(fact, PreparedFact)
    assert fact.value == out


def test_a_drop_inside_an_overlap_drops_the_fact() -> None:
    recognizers = {
        "a": FakeRecognizer("a", "a", "<A>", ((0, 4, None),)),
        "b": FakeRecognizer("b", "b", "<B>", ((3, 6, None),)),
    }
    rules = {"a": PiiRule("a", "L0", "keep"), "b": PiiRule("b", "L0", "drop")}
    pipe = WritePipeline(
        MemoryPolicy(pii=rules, encrypt_levels=frozenset()), FakeRegistry(recognizers)
    )
    assert pipe.prepare(USER, Candidate("k", "ABCDEFGH")) == Dropped(
        "the policy drops facts holding b", "pii", ("b",)
    )
    assert pipe.scrub("ABCDEFGH") == "<B>GH"


def test_scrub_redacts_what_a_fact_would_drop(registry: Registry) -> None:
    text = "卡号6222021234567890128，寄到浙江省杭州市西湖区文三路90号，电话13812345678"
    assert pipeline(registry).scrub(text) == "卡号[BANK_CARD]，寄到浙江省杭州市西湖区，电话[PHONE]"


# ---- intent, score, validity ---------------------------------------------------------------


def test_inputs_without_an_intent_are_not_kept(registry: Registry) -> None:
    pipe = pipeline(registry)
    assert pipe.prepare(USER, Candidate("", "这个页面怎么这么卡")) == Dropped(
        "no intent: nothing was extracted and no intent was marked", "intent"
    )
    assert pipe.prepare(USER, Candidate("", "", intent_type="feedback")) == Dropped(
        "no key: a fact needs to say what it is about", "intent"
    )
    marked = pipe.prepare(USER, Candidate("subscription", "", intent_type="cancel_subscription"))
    assert isinstance(marked, PreparedFact) and marked.value == ""


def test_the_intent_filter_is_pluggable(registry: Registry) -> None:
    pipe = WritePipeline(POLICY, registry, KEY, intent=lambda c: c.intent_type == "complaint")
    assert isinstance(pipe.prepare(USER, Candidate("k", "v")), Dropped)
    assert isinstance(
        pipe.prepare(USER, Candidate("k", "v", intent_type="complaint")), PreparedFact
    )


@pytest.mark.parametrize(
    ("candidate", "score"),
    [
        (Candidate("hours", "营业时间", source="default", confidence=0.5), 0.75),
        (Candidate("k", "v"), 3.0),
        (Candidate("k", "v", intent_type="ask"), 3.5),
        (Candidate("k", "v", entity_ref="W2024", intent_type="ask"), 4.5),
        (Candidate("k", "v", memory_type="commitment", recurrence=2), 6.5),
        (Candidate("k", "v", memory_type="commitment", recurrence=9, domain="loan"), 10.0),
        (Candidate("k", "v", source="inferred", confidence=0.8, recurrence=3, domain="loan"), 4.5),
        (Candidate("k", "v", source="system_verified", domain="marketing"), 0.95),
    ],
)
def test_value_score(candidate: Candidate, score: float) -> None:
    assert value_score(candidate, {"loan": 1.0, "marketing": 0.1}) == score


def test_the_prepared_fact_carries_score_validity_and_consent(registry: Registry) -> None:
    pipe = WritePipeline(POLICY, registry, KEY, clock=lambda: T0, domain_weights={"billing": 1.0})
    deadline = T0 + timedelta(days=2)
    fact = pipe.prepare(
        USER,
        Candidate(
            "refund",
            "三天内退款",
            memory_type="commitment",
            domain="billing",
            deadline=deadline,
            entity_ref="W20240315-8821",
            intent_type="refund",
        ),
    )
    assert fact == PreparedFact(
        user_id="u-1001",
        key="refund",
        value="三天内退款",
        memory_type="commitment",
        level="L1",
        encrypted=False,
        confidence=1.0,
        source="user_confirmed",
        domain="billing",
        valid_until=deadline + timedelta(hours=2),
        entity_ref="W20240315-8821",
        intent_type="refund",
        consent_source="app_v3.2",
        value_score=8.0,
    )


@pytest.mark.parametrize(
    ("memory_type", "confidence", "valid_until"),
    [
        ("inferred", 0.6, T0 + timedelta(days=7 * 0.4)),
        ("session_state", 1.0, T0 + timedelta(minutes=15)),
        ("commitment", 1.0, T0 + timedelta(hours=2)),
        ("fact", 1.0, None),
        ("undeclared", 1.0, None),
    ],
)
def test_validity_comes_from_the_policy(
    registry: Registry, memory_type: str, confidence: float, valid_until: datetime | None
) -> None:
    cand = Candidate(
        "k", "v", memory_type=memory_type, confidence=confidence, consent_source="web_v1"
    )
    fact = pipeline(registry).prepare(USER, cand)
    assert isinstance(fact, PreparedFact)
    assert (fact.valid_until, fact.consent_source) == (valid_until, "web_v1")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"confidence": 1.5}, "confidence must be within 0..1, got 1.5"),
        (
            {"source": "rumour"},
            "unknown source 'rumour' (one of user_confirmed, system_verified, inferred, default)",
        ),
        ({"recurrence": 0}, "recurrence counts this time too: at least 1, got 0"),
    ],
)
def test_invalid_candidates_are_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Candidate("k", "v", **changes)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_domain_weights_are_checked(registry: Registry) -> None:
    with pytest.raises(ValueError, match=r"domain weight of 'loan' must be within 0\.\.1, got 2"):
        WritePipeline(POLICY, registry, KEY, domain_weights={"loan": 2})
