"""The narrative channel on LanceDB: add and search, isolation per user, domain scope, consent,
role visibility, validity, warm rows searched until archived, relevance-first hybrid ranking
(BM25 fused with similarity, a bounded recency boost), the ``min_score`` gate, keyword search,
usage, the privileged listing and export, ``forget`` down to the bytes on disk, the embedder
check on reopen, and the audit rows, with the fake clock.

Most tests embed with ``HashEmbedder`` (deterministic, no model); the ranking tests use
``TableEmbedder``, whose vectors are chosen by hand so that every similarity is known exactly
and every score can be computed from the formula."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pytest

from charter.compile.specs.memory import MemoryPolicy
from charter.contracts.registry import Registry
from charter.memory.crypto import FORGOTTEN, forgotten_id
from charter.memory.embedders import HashEmbedder
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.lifecycle import archive_cold, expire
from charter.memory.pipeline import WritePipeline
from charter.memory.records import Accessor, PreparedSummary, Summary
from tests.support.memory import T0

U1 = Accessor("u1", "agent")
ADMIN = Accessor("u1", "ops", role="admin")
AuditRows = list[dict[str, Any]]


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


class TableEmbedder:
    """Each text has the vector a table gives it: similarities are known exactly."""

    name = "table"
    dim = 4

    def __init__(self, vectors: Mapping[str, Sequence[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        return [list(self.vectors[t]) for t in texts]


# cosine with Q: A and C 1, B 0.5, D 0
VECTORS = {
    "Q": [1.0, 0.0, 0.0, 0.0],
    "A": [1.0, 0.0, 0.0, 0.0],
    "B": [1.0, 1.0, 1.0, 1.0],
    "C": [2.0, 0.0, 0.0, 0.0],
    "D": [0.0, 1.0, 0.0, 0.0],
}


def open_store(
    path: Path,
    clock: Clock,
    audit: AuditRows,
    embedder: Any = None,
    **policy: Any,
) -> NarrativeStore:
    return NarrativeStore(
        path,
        embedder or HashEmbedder(),
        MemoryPolicy(**{"min_score": 0.3, **policy}),
        audit=audit.extend,
        clock=clock,
    )


@pytest.fixture
def audit() -> AuditRows:
    return []


@pytest.fixture
def store(tmp_path: Path, clock: Clock, audit: AuditRows) -> Iterator[NarrativeStore]:
    s = open_store(tmp_path / "narrative", clock, audit)
    yield s
    s.close()


def prep(text: str, user: str = "u1", **changes: Any) -> PreparedSummary:
    return PreparedSummary(**{"user_id": user, "text": text, "domain": "default", **changes})


def texts(hits: Sequence[Any]) -> list[str]:
    return [h.summary.text for h in hits]


def cos(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---- add and search ----------------------------------------------------------------------------


def test_a_summary_is_stored_whole_and_found_again(store: NarrativeStore, clock: Clock) -> None:
    written = store.add(
        U1,
        [
            prep(
                "用户询问合同第三条怎么改", session_id="s1", kind="question", intent_type="contract"
            ),
            prep("用户想退货", session_id="s1"),
        ],
    )
    first = written[0]
    assert first == Summary(
        id=first.id,
        user_id="u1",
        session_id="s1",
        kind="question",
        text="用户询问合同第三条怎么改",
        domain="default",
        memory_type="summary",
        intent_type="contract",
        consent_source=None,
        created_at=T0,
        valid_until=None,
        status="active",
    )
    assert len({s.id for s in written}) == 2
    clock.advance(minutes=5)
    # the question passes the gate; 用户想退货, another subject far below it, stays out
    [hit] = store.search(U1, "合同第三条")
    assert hit.summary == first
    h = HashEmbedder()
    expected = cos(*h.embed(["用户询问合同第三条怎么改", "合同第三条"]))
    assert expected == pytest.approx(2 / 3, abs=1e-12)  # the hash buckets share 6 of 9
    assert hit.similarity == pytest.approx(2 / 3, abs=1e-6)
    # five minutes old and unused: boost 1 + 0.005 × 0.5^(days/30) × 0.85^(days/30)
    days = 5 / 1440
    assert hit.boost == pytest.approx(1 + 0.005 * 0.5 ** (days / 30) * 0.85 ** (days / 30))
    assert hit.bm25 is not None and hit.bm25 > 0  # 合同, 第三条: the words are there
    assert hit.fused is not None and hit.score == pytest.approx(hit.fused * hit.boost)


def test_a_summary_written_through_the_pipeline_holds_no_raw_phone(
    tmp_path: Path, clock: Clock, audit: AuditRows, registry: Registry
) -> None:
    policy = MemoryPolicy(encrypt_levels=frozenset())
    pipeline = WritePipeline(policy, registry, clock=clock)
    prepared = pipeline.prepare_summary(
        U1, "我的手机号是13812345678，合同第三条怎么改", domain="default", kind="question"
    )
    assert isinstance(prepared, PreparedSummary)
    store = open_store(tmp_path / "n", clock, audit)
    [stored] = store.add(U1, [prepared])
    assert stored.text == "我的手机号是[PHONE]，合同第三条怎么改"
    store.close()
    assert found_in(tmp_path / "n", ["合同第三条怎么改", "13812345678"]) == {"合同第三条怎么改"}


def test_nothing_is_returned_from_an_empty_store(store: NarrativeStore, audit: AuditRows) -> None:
    assert store.search(U1, "合同") == []
    assert store.search_keywords(U1, ["合同"]) == []
    assert [(r["action"], r["reason"]) for r in audit] == [
        ("read", "narrative: nothing matched"),
        ("read", "narrative: nothing matched"),
    ]


def test_adding_nothing_writes_nothing(store: NarrativeStore, audit: AuditRows) -> None:
    assert store.add(U1, []) == []
    assert (store.table.count_rows(), audit) == (0, [])


def test_an_accessor_without_a_user_reaches_nothing(store: NarrativeStore) -> None:
    nobody = Accessor(" ", "agent")
    message = "an accessor must name a user: memory has no scope without one"
    for call in (
        lambda: store.add(nobody, [prep("x", user=" ")]),
        lambda: store.search(nobody, "x"),
        lambda: store.search_keywords(nobody, ["合同"]),
    ):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message


def test_a_summary_of_another_user_is_refused_and_audited(
    store: NarrativeStore, audit: AuditRows
) -> None:
    with pytest.raises(PermissionError) as e:
        store.add(U1, [prep("别人的事", user="u2")])
    assert str(e.value) == "write refused: the summary belongs to another user"
    assert audit == [
        {
            "at": T0,
            "actor": "agent",
            "role": "agent",
            "user_id": "u1",
            "action": "deny",
            "memory_id": None,
            "allowed": False,
            "reason": "write: the summary belongs to another user",
        }
    ]
    assert store.table.count_rows() == 0


# ---- isolation, domain scope, consent, roles, validity -----------------------------------------

USERS = ["u1", "o'brien", "x' OR '1'='1", "'; DROP TABLE narrative; --", "用户甲"]


def test_each_user_sees_only_their_own_summaries(store: NarrativeStore) -> None:
    for user in USERS:
        who = Accessor(user, "agent")
        store.add(who, [prep("用户询问合同第三条怎么改", user), prep(f"合同备注 {user}", user)])
    for user in USERS:
        who = Accessor(user, "agent")
        found = store.search(who, "合同第三条怎么改", limit=100, min_score=-1.0)
        assert {h.summary.user_id for h in found} == {user}
        assert sorted(texts(found)) == sorted(["用户询问合同第三条怎么改", f"合同备注 {user}"])
        by_word = store.search_keywords(who, ["合同"], limit=100)
        assert sorted(texts(by_word)) == sorted(["用户询问合同第三条怎么改", f"合同备注 {user}"])
    assert store.table.count_rows() == 2 * len(USERS)


POLICY_SCOPES = {"billing": frozenset({"support"}), "orders": frozenset({"support", "marketing"})}


@pytest.mark.parametrize(
    ("use", "readable"),
    [
        ("support", ["账单合同", "订单合同", "客服合同"]),
        ("marketing", ["订单合同", "营销合同"]),
        ("billing", ["账单合同"]),
        ("orders", ["订单合同"]),
        ("default", []),
    ],
)
def test_a_use_reads_only_the_domains_its_scope_allows(
    tmp_path: Path, clock: Clock, audit: AuditRows, use: str, readable: list[str]
) -> None:
    store = open_store(tmp_path / "n", clock, audit, scopes=POLICY_SCOPES)
    for domain, text in [
        ("billing", "账单合同"),
        ("orders", "订单合同"),
        ("support", "客服合同"),
        ("marketing", "营销合同"),
    ]:
        store.add(Accessor("u1", "agent", use=domain), [prep(text, domain=domain)])
    reader = Accessor("u1", "agent", use=use)
    assert sorted(texts(store.search_keywords(reader, ["合同"], limit=10))) == sorted(readable)
    found = store.search(reader, "合同", limit=10, min_score=-1.0)
    assert sorted(texts(found)) == sorted(readable)


def test_a_use_cannot_write_a_domain_it_may_not_use(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    store = open_store(tmp_path / "n", clock, audit, scopes=POLICY_SCOPES)
    marketing = Accessor("u1", "agent", use="marketing")
    with pytest.raises(PermissionError) as e:
        store.add(marketing, [prep("账单合同", domain="billing")])
    assert str(e.value) == "write refused: domain billing is not writable for use marketing"
    assert [(r["action"], r["allowed"], r["reason"]) for r in audit] == [
        ("deny", False, "write: domain billing is not writable for use marketing")
    ]
    assert store.table.count_rows() == 0


@pytest.mark.parametrize(
    ("consent", "readable"),
    [
        (None, ["没有授权版本的合同"]),
        ("app_v3.2", ["没有授权版本的合同", "v3.2 授权的合同"]),
        ("app_v4.0", ["没有授权版本的合同", "v4.0 授权的合同"]),
        ("app_v4.1", ["没有授权版本的合同"]),
    ],
)
def test_a_summary_under_consent_is_read_only_under_that_consent(
    store: NarrativeStore, consent: str | None, readable: list[str]
) -> None:
    store.add(U1, [prep("没有授权版本的合同")])
    store.add(
        Accessor("u1", "agent", consent="app_v3.2"),
        [prep("v3.2 授权的合同", consent_source="app_v3.2")],
    )
    store.add(
        Accessor("u1", "agent", consent="app_v4.0"),
        [prep("v4.0 授权的合同", consent_source="app_v4.0")],
    )
    reader = Accessor("u1", "agent", consent=consent)
    assert sorted(texts(store.search_keywords(reader, ["合同"], limit=10))) == sorted(readable)
    assert sorted(texts(store.search(reader, "合同", limit=10, min_score=-1.0))) == sorted(readable)


@pytest.mark.parametrize(
    ("roles", "role", "visible"),
    [
        ({"allergy": frozenset({"doctor"})}, "doctor", True),
        ({"allergy": frozenset({"doctor"})}, "agent", False),
        ({"question": frozenset({"admin"})}, "agent", False),  # on the kind, as on a key
        ({"question": frozenset({"admin"})}, "admin", True),
        ({"question": frozenset({"agent"}), "allergy": frozenset({"doctor"})}, "agent", True),
    ],
)
def test_role_visibility_is_checked_per_row_and_a_refusal_audited(
    tmp_path: Path,
    clock: Clock,
    audit: AuditRows,
    roles: dict[str, frozenset[str]],
    role: str,
    visible: bool,
) -> None:
    store = open_store(tmp_path / "n", clock, audit, roles=roles)
    [allergy] = store.add(U1, [prep("青霉素过敏史", memory_type="allergy", kind="question")])
    audit.clear()
    reader = Accessor("u1", "app", role=role)
    found = store.search(reader, "青霉素过敏史")
    assert texts(found) == (["青霉素过敏史"] if visible else [])
    base = {"at": T0, "actor": "app", "role": role, "user_id": "u1"}
    if visible:
        assert audit == [
            {
                **base,
                "action": "read",
                "memory_id": allergy.id,
                "allowed": True,
                "reason": "narrative",
            }
        ]
    else:
        assert audit == [
            {
                **base,
                "action": "deny",
                "memory_id": allergy.id,
                "allowed": False,
                "reason": f"read: role {role} may not see question (allergy)",
            },
            {
                **base,
                "action": "read",
                "memory_id": None,
                "allowed": True,
                "reason": "narrative: nothing matched",
            },
        ]


def test_a_summary_past_valid_until_is_never_returned_even_before_expire_runs(
    store: NarrativeStore, clock: Clock
) -> None:
    [short] = store.add(U1, [prep("会话状态合同", valid_until=T0 + timedelta(hours=1))])
    store.add(U1, [prep("长期的合同")])
    clock.advance(minutes=59, seconds=59)
    assert sorted(texts(store.search(U1, "合同", limit=10, min_score=-1.0))) == [
        "会话状态合同",
        "长期的合同",
    ]
    clock.advance(seconds=1)  # valid_until == now: no longer valid
    assert texts(store.search(U1, "合同", limit=10, min_score=-1.0)) == ["长期的合同"]
    assert texts(store.search_keywords(U1, ["合同"])) == ["长期的合同"]
    # the row itself is untouched until the lifecycle marks it
    statuses = {s.text: s.status for s in store.list_summaries(ADMIN)}
    assert statuses == {"会话状态合同": "active", "长期的合同": "active"}
    assert expire(store, clock.now) == 1
    history = {s.id: s.status for s in store.list_summaries(ADMIN, history=True)}
    assert history[short.id] == "expired"


def test_a_summary_older_than_the_warm_tier_is_searched_until_archived(
    store: NarrativeStore, clock: Clock
) -> None:
    store.add(U1, [prep("很久以前的合同")])
    clock.advance(days=100)  # older than warm_days (90), never used, not archived
    assert texts(store.search(U1, "合同", min_score=-1.0)) == ["很久以前的合同"]
    assert texts(store.search_keywords(U1, ["合同"])) == ["很久以前的合同"]
    clock.advance(days=50)
    store.add(U1, [prep("新的合同")])
    clock.advance(days=41)  # the old one idle 91 days since those searches: the job archives it
    assert archive_cold(store, clock.now) == 1
    assert texts(store.search(U1, "合同", min_score=-1.0)) == ["新的合同"]
    assert texts(store.search_keywords(U1, ["合同"])) == ["新的合同"]
    statuses = {s.text: s.status for s in store.list_summaries(ADMIN, history=True)}
    assert statuses == {"很久以前的合同": "archived", "新的合同": "active"}


# ---- ranking ----------------------------------------------------------------------------------


def boost(age_days: float, idle_days: float, b: float = 0.005) -> float:
    """The policy's bounded boost, by hand: 1 + b × 0.5^(age/30) × (1-0.15)^(idle/30)."""
    return float(1 + b * 0.5 ** (age_days / 30) * 0.85 ** (idle_days / 30))


def test_an_old_relevant_summary_beats_recent_less_relevant_ones(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=10)
    [a] = store.add(U1, [prep("A")])  # day 0, similarity 1
    clock.advance(days=200)
    [b] = store.add(U1, [prep("B")])  # day 200, similarity 0.5
    [d] = store.add(U1, [prep("D")])  # day 200, similarity 0
    hits = store.search(U1, "Q", min_score=-1.0)
    # by similarity × 1/(1+days), A (1/201) fell far below B (0.5)
    assert [h.summary.id for h in hits] == [a.id, b.id, d.id]
    assert [h.similarity for h in hits] == pytest.approx([1.0, 0.5, 0.0], abs=1e-6)
    assert [h.boost for h in hits] == pytest.approx([boost(200, 200), boost(0, 0), boost(0, 0)])
    assert [h.bm25 for h in hits] == [0.0, 0.0, 0.0]  # Q shares no word with them
    for h in hits:
        assert h.fused is not None and h.score == pytest.approx(h.fused * h.boost)


def test_words_find_an_old_fact_among_a_year_of_small_talk(
    store: NarrativeStore, clock: Clock
) -> None:
    [fact] = store.add(U1, [prep("用户家里养了一只叫豆豆的柯基")])
    for week in range(1, 53):
        clock.advance(days=7)
        store.add(U1, [prep(f"用户问第{week}周的天气怎么样")])
    hits = store.search(U1, "我家柯基叫什么名字", limit=3, min_score=-1.0)
    assert hits[0].summary.id == fact.id
    assert hits[0].bm25 is not None and hits[0].bm25 > 0
    assert [h.bm25 for h in hits[1:]] == [0.0, 0.0]


def test_a_question_sharing_a_rows_words_passes_the_gate_below_min_score(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    table = {
        "柯基叫豆豆吗": VECTORS["Q"],
        "豆浆好喝吗": VECTORS["Q"],  # no word of any row
        "用户家里养了一只柯基叫豆豆": VECTORS["D"],  # similarity 0, every word of the question
        "用户问今天的天气": VECTORS["D"],  # similarity 0, no word
        "用户喜欢喝咖啡": VECTORS["B"],  # similarity 0.5, no word
    }
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(table), top_k=10)
    store.add(U1, [prep(t) for t in list(table)[2:]])
    # the gate is on the question: its words pass it; then the rows near the best one, past
    # the floor or holding the question's words are ranked (咖啡: 0.7 × scaled similarity 1;
    # 柯基: 0.3 × its share of the words above half); 天气 (0 similar, no word) is another
    # subject and stays out
    ranked = ["用户喜欢喝咖啡", "用户家里养了一只柯基叫豆豆"]
    hits = store.search(U1, "柯基叫豆豆吗", min_score=0.9)
    assert texts(hits) == ranked
    assert hits[0].fused == pytest.approx(0.7, abs=1e-6)
    assert hits[1].bm25 is not None and hits[1].bm25 > 0 and (hits[1].fused or 0.0) > 0
    # no shared word, best row 0.5 similar: a question about nothing the user said ...
    assert texts(store.search(U1, "豆浆好喝吗", min_score=0.9)) == []
    # ... unless the floor is below its best row: then the rows near that one come, not the
    # rows far below it
    assert texts(store.search(U1, "豆浆好喝吗", min_score=0.5)) == ["用户喜欢喝咖啡"]
    # a vector has no words: each row must pass the floor
    assert texts(store.search(U1, VECTORS["Q"], min_score=0.9)) == []
    assert texts(store.search(U1, VECTORS["Q"], min_score=0.5)) == ["用户喜欢喝咖啡"]


@pytest.mark.parametrize(("recency_weight", "first"), [(True, "合同乙"), (False, "合同甲")])
def test_recency_and_decay_break_ties_between_equally_relevant_summaries(
    tmp_path: Path, clock: Clock, audit: AuditRows, recency_weight: bool, first: str
) -> None:
    table = {"Q": VECTORS["Q"], "合同甲": VECTORS["A"], "合同乙": VECTORS["C"]}
    store = open_store(
        tmp_path / "n", clock, audit, TableEmbedder(table), top_k=10, recency_weight=recency_weight
    )
    store.add(U1, [prep("合同甲")])  # day 0
    clock.advance(days=150)
    store.add(U1, [prep("合同乙")])  # day 150, never used
    clock.advance(days=50)
    assert texts(store.search_keywords(U1, ["合同甲"])) == ["合同甲"]  # 甲 used on day 200
    store.flush_usage()
    hits = store.search(U1, "Q", min_score=-1.0)
    # equally similar: with recency, the newer 乙 (age 50) before 甲 (age 200, just used);
    # without, decay alone: 甲 was used now, 乙 idle for 50 days
    assert texts(hits)[0] == first
    assert [h.similarity for h in hits] == pytest.approx([1.0, 1.0], abs=1e-6)
    recency = {"合同甲": 0.5 ** (200 / 30), "合同乙": 0.5 ** (50 / 30)} if recency_weight else {}
    decay = {"合同甲": 1.0, "合同乙": 0.85 ** (50 / 30)}
    assert [h.boost for h in hits] == pytest.approx(
        [1 + 0.005 * recency.get(t, 1.0) * decay[t] for t in texts(hits)]
    )


def test_the_recency_boost_is_bounded_and_cannot_bury_relevance(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    store = open_store(
        tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=10, recency_boost=0.5
    )
    [a] = store.add(U1, [prep("A")])  # similarity 1, a year old
    clock.advance(days=365)
    [b] = store.add(U1, [prep("B")])  # similarity 0.5, new: the largest boost there is
    [d] = store.add(U1, [prep("D")])
    hits = store.search(U1, "Q", min_score=-1.0)
    assert [h.summary.id for h in hits] == [a.id, b.id, d.id]
    assert [h.boost for h in hits] == pytest.approx([boost(365, 365, 0.5), 1.5, 1.5])
    # a vector query: similarity alone, scaled over the user's rows (0.7 × 1, 0.5, 0), × boost
    by_vector = store.search(U1, VECTORS["Q"], min_score=-1.0)
    assert [h.summary.id for h in by_vector] == [a.id, b.id, d.id]
    assert [h.score for h in by_vector] == pytest.approx(
        [0.7 * boost(365, 365, 0.5), 0.7 * 0.5 * 1.5, 0.0], abs=1e-6
    )
    assert [h.bm25 for h in by_vector] == [None, None, None]


@pytest.mark.parametrize(
    ("min_score", "found"),
    [
        # the policy's, 0.3: A passes; B too, D (0 similar) is far below the best
        (None, ["A", "B"]),
        # A is exactly 1 similar (float32: 1e-6 of slack); B is neither near it nor past 1
        (1.0, ["A"]),
        (1.0001, []),  # no row that similar, no shared word: nothing
        (-1.0, ["A", "B", "D"]),
    ],
)
def test_min_score_gates_the_question_on_its_best_row(
    tmp_path: Path, clock: Clock, audit: AuditRows, min_score: float | None, found: list[str]
) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=10)
    store.add(U1, [prep("A"), prep("B"), prep("D")])
    assert texts(store.search(U1, "Q", min_score=min_score)) == found


@pytest.mark.parametrize(
    ("min_score", "found"),
    [
        (None, ["A", "B"]),  # the policy's, 0.3
        (0.5, ["A", "B"]),  # B is exactly 0.5 similar: "at least" holds in float32
        (0.5001, ["A"]),
        (1.0, ["A"]),
        (0.0, ["A", "B", "D"]),  # D is exactly 0 similar
        (-1.0, ["A", "B", "D"]),
    ],
)
def test_min_score_is_a_floor_on_each_row_for_a_vector_query(
    tmp_path: Path, clock: Clock, audit: AuditRows, min_score: float | None, found: list[str]
) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=10)
    store.add(U1, [prep("A"), prep("B"), prep("D")])
    assert texts(store.search(U1, VECTORS["Q"], min_score=min_score)) == found


def test_equally_relevant_rows_come_in_the_same_order_on_every_run(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=10)
    added = store.add(U1, [prep("C"), prep("A"), prep("D"), prep("B")])  # A, C: both 1
    hits = store.search(U1, "Q", min_score=-1.0)
    same = sorted(s.id for s in added if s.text in {"A", "C"})
    assert [h.summary.id for h in hits[:2]] == same
    assert texts(hits[2:]) == ["B", "D"]


def test_the_limit_and_top_k_cap_the_hits(tmp_path: Path, clock: Clock, audit: AuditRows) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS), top_k=2)
    store.add(U1, [prep("A"), prep("B"), prep("D")])
    assert texts(store.search(U1, "Q", min_score=-1.0)) == ["A", "B"]
    assert texts(store.search(U1, "Q", min_score=-1.0, limit=1)) == ["A"]
    assert texts(store.search(U1, [1.0, 0.0, 0.0, 0.0], min_score=-1.0, limit=3)) == ["A", "B", "D"]


@pytest.mark.parametrize(
    ("intent", "kinds", "found"),
    [
        (None, ("summary", "question", "tag"), ["A", "B"]),
        ("refund", ("summary", "question", "tag"), ["B"]),
        ("contract", ("summary", "question", "tag"), ["A"]),
        ("other", ("summary", "question", "tag"), []),
        (None, ("question",), ["B"]),
        ("contract", ("question",), []),
    ],
)
def test_search_filters_by_intent_and_kind(
    tmp_path: Path,
    clock: Clock,
    audit: AuditRows,
    intent: str | None,
    kinds: tuple[str, ...],
    found: list[str],
) -> None:
    store = open_store(tmp_path / "n", clock, audit, TableEmbedder(VECTORS))
    store.add(
        U1, [prep("A", intent_type="contract"), prep("B", kind="question", intent_type="refund")]
    )
    assert texts(store.search(U1, "Q", intent=intent, kinds=kinds)) == found


# ---- keywords ---------------------------------------------------------------------------------

KEYWORD_TEXTS = [
    "用户询问合同第三条怎么改",
    "用户想退货，合同还在",
    "合同与同第二次第三",
    "Order A-2024-001 已发货",
]


@pytest.mark.parametrize(
    ("keywords", "found"),
    [
        (["合同"], ["合同与同第二次第三", "用户想退货，合同还在", "用户询问合同第三条怎么改"]),
        (["合同", "退货"], ["用户想退货，合同还在"]),
        (["退货", "合同"], ["用户想退货，合同还在"]),
        (["合同", "发票"], []),
        (["合同第三"], ["用户询问合同第三条怎么改"]),  # every bigram is in the third: not enough
        (["第三条", "怎么改"], ["用户询问合同第三条怎么改"]),
        (
            ["合同", "第"],
            ["合同与同第二次第三", "用户想退货，合同还在", "用户询问合同第三条怎么改"],
        ),
        (["合"], []),  # one character: no keyword
        ([" 退货 "], ["用户想退货，合同还在"]),
        (["order", "a-2024-001"], ["Order A-2024-001 已发货"]),
        (["ORDER"], ["Order A-2024-001 已发货"]),
        ([], []),
    ],
)
def test_keyword_search_needs_every_keyword(
    store: NarrativeStore, keywords: list[str], found: list[str]
) -> None:
    store.add(U1, [prep(t) for t in KEYWORD_TEXTS])
    assert sorted(texts(store.search_keywords(U1, keywords, limit=10))) == sorted(found)


def test_keyword_search_finds_rows_added_after_the_index_was_built(store: NarrativeStore) -> None:
    store.add(U1, [prep("第一份合同")])
    assert texts(store.search_keywords(U1, ["合同"])) == ["第一份合同"]
    store.add(U1, [prep("第二份合同")])  # not in the full-text index until optimize
    assert sorted(texts(store.search_keywords(U1, ["合同"]))) == ["第一份合同", "第二份合同"]
    store.optimize()
    assert sorted(texts(store.search_keywords(U1, ["合同"]))) == ["第一份合同", "第二份合同"]


# ---- usage ------------------------------------------------------------------------------------


def summaries(store: NarrativeStore) -> dict[str, tuple[int, datetime | None]]:
    return {s.text: (s.access_count, s.last_used_at) for s in store.list_summaries(ADMIN)}


def test_uses_are_collected_and_written_by_flush(store: NarrativeStore, clock: Clock) -> None:
    store.add(U1, [prep("合同第三条"), prep("退货运费")])
    clock.advance(hours=1)
    assert texts(store.search(U1, "合同第三条", limit=1)) == ["合同第三条"]  # only what it returns
    clock.advance(hours=1)
    assert texts(store.search_keywords(U1, ["合同"])) == ["合同第三条"]
    assert summaries(store) == {"合同第三条": (0, None), "退货运费": (0, None)}  # not yet
    assert store.flush_usage() == 1
    assert summaries(store) == {"合同第三条": (2, clock.now), "退货运费": (0, None)}
    assert store.flush_usage() == 0
    store.search(U1, "合同第三条", limit=1)
    store.close()  # close flushes
    assert summaries(store) == {"合同第三条": (3, clock.now), "退货运费": (0, None)}


# ---- listing, export, forget ------------------------------------------------------------------


@pytest.mark.parametrize("action", ["list", "export", "forget"])
def test_privileged_actions_refuse_an_agent_and_audit_it(
    store: NarrativeStore, audit: AuditRows, action: str
) -> None:
    store.add(U1, [prep("合同第三条")])
    audit.clear()
    calls: dict[str, Callable[[Accessor], object]] = {
        "list": store.list_summaries,
        "export": store.export,
        "forget": store.forget,
    }
    call = calls[action]
    with pytest.raises(PermissionError) as e:
        call(U1)
    assert str(e.value) == f"{action} refused: role agent is not admin or user"
    assert audit == [
        {
            "at": T0,
            "actor": "agent",
            "role": "agent",
            "user_id": "u1",
            "action": "deny",
            "memory_id": None,
            "allowed": False,
            "reason": f"{action}: role agent is not admin or user",
        }
    ]
    assert store.table.count_rows() == 1


def test_list_and_export_show_the_user_only(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    [old] = store.add(
        U1,
        [
            prep(
                "会话状态",
                session_id="s1",
                valid_until=T0 + timedelta(minutes=15),
                intent_type="chat",
            )
        ],
    )
    clock.advance(hours=1)
    [new] = store.add(U1, [prep("合同第三条", kind="question")])
    store.add(Accessor("u2", "agent"), [prep("别人的合同", user="u2")])
    expire(store, clock.now)
    audit.clear()
    user = Accessor("u1", "user:u1", role="user")
    assert [s.id for s in store.list_summaries(user)] == [new.id]
    assert [s.id for s in store.list_summaries(user, history=True)] == [old.id, new.id]
    assert store.export(user) == [
        {
            "id": old.id,
            "session_id": "s1",
            "kind": "summary",
            "text": "会话状态",
            "domain": "default",
            "memory_type": "summary",
            "intent_type": "chat",
            "status": "expired",
            "count": 1,
            "merged_into": None,
            "created_at": "2024-05-01T10:00:00+00:00",
            "valid_until": "2024-05-01T10:15:00+00:00",
            "access_count": 0,
        },
        {
            "id": new.id,
            "session_id": None,
            "kind": "question",
            "text": "合同第三条",
            "domain": "default",
            "memory_type": "summary",
            "intent_type": None,
            "status": "active",
            "count": 1,
            "merged_into": None,
            "created_at": "2024-05-01T11:00:00+00:00",
            "valid_until": None,
            "access_count": 0,
        },
    ]
    assert [(r["action"], r["user_id"], r["reason"]) for r in audit] == [
        ("list", "u1", "narrative: 1"),
        ("list", "u1", "narrative: 2"),
        ("export", "u1", "narrative: 2"),
    ]


def found_in(directory: Path, needles: Sequence[str | bytes]) -> set[str | bytes]:
    """Which needles occur in any file under ``directory`` (as UTF-8 when text)."""
    blobs = [p.read_bytes() for p in directory.rglob("*") if p.is_file()]
    return {
        n
        for n in needles
        if any((n.encode("utf-8") if isinstance(n, str) else n) in b for b in blobs)
    }


def test_forget_leaves_no_byte_of_the_user_on_disk(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    path = tmp_path / "n"
    store = open_store(path, clock, audit)
    gone = Accessor("o'brien", "user:o'brien", role="user")
    kept = Accessor("u2", "agent")
    secret = ["奥布莱恩的合同第三条", "奥布莱恩想退货"]
    store.add(gone, [prep(t, "o'brien") for t in secret])
    store.add(gone, [prep("奥布莱恩的第三份摘要", "o'brien")])  # a second append: two fragments
    store.add(kept, [prep("保留的合同", "u2")])
    store.optimize()  # indexes hold the user too
    assert texts(store.search(gone, "奥布莱恩的合同第三条", limit=1)) == ["奥布莱恩的合同第三条"]
    vector = np.asarray(HashEmbedder().embed(["奥布莱恩想退货"])[0], dtype="<f4").tobytes()
    needles: list[str | bytes] = ["o'brien", *secret, "奥布莱恩", vector]
    assert found_in(path, needles) == set(needles)  # the scan sees them while they are there
    audit.clear()

    hashed = forgotten_id("o'brien", bytes(range(32)))
    assert store.forget(gone, forgotten_as=hashed) == 3

    assert found_in(path, needles) == set()
    assert store.list_summaries(Accessor("o'brien", "cli", role="admin"), history=True) == []
    assert store.search(gone, "奥布莱恩的合同第三条", min_score=-1.0) == []
    assert texts(store.search_keywords(kept, ["合同"])) == ["保留的合同"]
    assert texts(store.search(kept, "保留的合同")) == ["保留的合同"]
    forget_row = {
        "at": T0,
        "actor": f"user:{hashed}",
        "role": "user",
        "user_id": hashed,
        "action": "forget",
        "memory_id": None,
        "allowed": True,
        "reason": "narrative: 3 summaries",
    }
    assert [r for r in audit if r["action"] == "forget"] == [forget_row]
    assert all(r["user_id"] != "o'brien" for r in audit if r["action"] == "forget")
    store.close()
    # and reopened, the other user's rows are all there is
    again = open_store(path, clock, audit)
    assert again.table.count_rows() == 1
    assert found_in(path, needles) == set()


def test_forget_drops_pending_uses_of_the_user(store: NarrativeStore, clock: Clock) -> None:
    user = Accessor("u1", "app", role="user")
    store.add(U1, [prep("合同第三条")])
    store.add(Accessor("u2", "agent"), [prep("合同第三条", "u2")])
    store.search(U1, "合同第三条")
    store.search(Accessor("u2", "agent"), "合同第三条")
    assert store.forget(user) == 1
    assert store.flush_usage() == 0  # u2's use was written by forget's rewrite, u1's dropped
    [u2] = store.list_summaries(Accessor("u2", "app", role="user"))
    assert (u2.access_count, u2.last_used_at) == (1, T0)


def test_forget_of_a_user_with_nothing_stored_is_still_recorded(
    store: NarrativeStore, audit: AuditRows
) -> None:
    store.add(U1, [prep("合同第三条")])
    audit.clear()
    assert store.forget(Accessor("nobody", "app", role="admin")) == 0
    assert [(r["action"], r["user_id"], r["reason"]) for r in audit] == [
        ("forget", FORGOTTEN, "narrative: 0 summaries")
    ]
    assert store.table.count_rows() == 1


def test_forgetting_the_last_user_leaves_a_usable_empty_store(
    store: NarrativeStore,
) -> None:
    user = Accessor("u1", "app", role="user")
    store.add(U1, [prep("合同第三条")])
    assert store.forget(user) == 1
    assert store.search(U1, "合同第三条", min_score=-1.0) == []
    assert store.search_keywords(U1, ["合同"]) == []
    store.add(U1, [prep("新的合同")])
    assert texts(store.search_keywords(U1, ["合同"])) == ["新的合同"]


# ---- reopening --------------------------------------------------------------------------------


def test_reopening_with_another_embedder_is_refused(
    tmp_path: Path, clock: Clock, audit: AuditRows
) -> None:
    path = tmp_path / "n"
    store = open_store(path, clock, audit)
    store.add(U1, [prep("合同第三条")])
    store.close()
    with pytest.raises(ValueError) as e:
        open_store(path, clock, audit, TableEmbedder(VECTORS))
    assert str(e.value) == (
        f"{path} holds vectors of embedder 'hash', not 'table': "
        "vectors of two models cannot be compared"
    )
    again = open_store(path, clock, audit)  # the same embedder: everything is there
    assert texts(again.search(U1, "合同第三条")) == ["合同第三条"]


@pytest.mark.parametrize("rows", [0, 1])
def test_reopening_with_another_dimension_is_refused(
    tmp_path: Path, clock: Clock, audit: AuditRows, rows: int
) -> None:
    # BUG (narrative/__init__.py, _check_embedder): only the embedder's *name* is compared, so
    # HashEmbedder(8) reopens a table of HashEmbedder(384) vectors (both named "hash") and
    # the first add fails later with a LanceDB cast error ("Cannot cast to
    # FixedSizeList(384): value at index 0 has length 8"), also for an empty table.
    # Proposed fix: in _check_embedder, after the name check, compare
    # self.table.schema.field("vector").type.list_size with embedder.dim and raise the
    # ValueError below.
    path = tmp_path / "n"
    store = open_store(path, clock, audit)
    if rows:
        store.add(U1, [prep("合同第三条")])
    store.close()
    with pytest.raises(ValueError) as e:
        open_store(path, clock, audit, HashEmbedder(8))
    assert str(e.value) == (
        f"{path} holds vectors of 384 dimensions, not 8 (embedder 'hash'): "
        "vectors of two models cannot be compared"
    )


# ---- the audit sink ---------------------------------------------------------------------------


def test_every_write_and_read_reaches_the_audit_sink(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    a, b = store.add(U1, [prep("合同第三条"), prep("退货运费")])
    clock.advance(minutes=1)
    store.search(U1, "合同第三条", limit=1)
    store.search_keywords(U1, ["退货"])
    store.search_keywords(U1, ["发票"])
    at1 = T0 + timedelta(minutes=1)

    def row(at: datetime, action: str, memory_id: str | None, reason: str) -> dict[str, Any]:
        return {
            "at": at,
            "actor": "agent",
            "role": "agent",
            "user_id": "u1",
            "action": action,
            "memory_id": memory_id,
            "allowed": True,
            "reason": reason,
        }

    assert audit == [
        row(T0, "write", a.id, "narrative"),
        row(T0, "write", b.id, "narrative"),
        row(at1, "read", a.id, "narrative"),
        row(at1, "read", b.id, "narrative"),
        row(at1, "read", None, "narrative: nothing matched"),
    ]


def test_a_store_without_a_sink_still_works(tmp_path: Path, clock: Clock) -> None:
    store = NarrativeStore(tmp_path / "n", HashEmbedder(), MemoryPolicy(min_score=0.3), clock=clock)
    store.add(U1, [prep("合同第三条")])
    assert texts(store.search(U1, "合同第三条")) == ["合同第三条"]
    assert math.isclose(store.search(U1, "合同第三条")[0].similarity, 1.0, abs_tol=1e-6)


def test_concurrent_first_writes_create_the_indexes_once(tmp_path: Path) -> None:
    """Eight threads write the first summaries of an empty table at once: every write lands
    and the two indexes exist once each (the index creation is not a race)."""
    import threading

    store = NarrativeStore(tmp_path / "lance", HashEmbedder(), MemoryPolicy())
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        barrier.wait()
        try:
            who = Accessor(f"u{n}", "agent")
            store.add(who, [PreparedSummary(f"u{n}", f"第{n}个问题", "default")])
        except BaseException as e:  # pragma: no cover - the failure this test looks for
            errors.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.table.count_rows() == 8
    assert sorted(tuple(i.columns) for i in store.table.list_indices()) == [("text",), ("user_id",)]


# ---- the fusion's parts -----------------------------------------------------------------------


def test_words_count_from_half_the_questions_weight_up() -> None:
    from charter.memory.narrative import recall

    share = np.array([0.0, 0.3, 0.5, 0.75, 1.0])
    assert recall.words(share).tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]
    # a partial overlap cannot pass a more similar row; holding all the words can
    sims = np.array([0.90, 0.89, 0.80])
    assert recall.order(recall.fuse(sims, sims, np.array([0.0, 0.45, 0.0])), sims, list("abc")) == [
        0,
        1,
        2,
    ]
    assert recall.order(recall.fuse(sims, sims, np.array([0.0, 1.0, 0.0])), sims, list("abc")) == [
        1,
        0,
        2,
    ]


def test_the_order_breaks_ties_by_similarity_then_id() -> None:
    from charter.memory.narrative import recall

    final = np.array([1.0, 1.0, 1.0, 0.5])
    sims = np.array([0.8, 0.9, 0.8, 1.0])
    assert recall.order(final, sims, ["b", "c", "a", "d"]) == [1, 2, 0, 3]
    assert recall.order(np.zeros(0), np.zeros(0), []) == []


def test_the_gate_is_on_the_questions_best_row() -> None:
    from charter.memory.narrative import recall

    sims, none = np.array([0.83, 0.84]), np.zeros(2)
    assert recall.related(sims, none, 0.84) is True
    assert recall.related(sims, none, 0.8401) is False
    assert recall.related(sims, np.array([0.5, 0.0]), 0.9) is True  # half the words
    assert recall.related(np.zeros(0), np.zeros(0), -1.0) is False
