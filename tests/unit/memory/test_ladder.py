"""The retrieval ladder over the fact store (SQLite and PostgreSQL) and the narrative store
(LanceDB, ``HashEmbedder``): which step answers and why, what each step tried and the scores of
each summary, that an old relevant memory beats newer small talk, that no step ever returns an
expired, deprecated, merged or archived memory, and ``export`` / ``forget`` across every store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import pytest
import sqlalchemy as sa

from charter.compile.specs.memory import Lifecycle, MemoryPolicy
from charter.memory.crypto import forgotten_id
from charter.memory.embedders import HashEmbedder
from charter.memory.facts import FactStore
from charter.memory.facts.tables import MEMORY_AUDIT, MEMORY_FACT
from charter.memory.ladder import LayeredMemory, Recollection
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.lifecycle import archive_cold, deprecate, merge_recurring
from charter.memory.records import Accessor, PreparedFact, PreparedSummary
from charter.memory.short_term import InMemoryShortTermStore, ShortTermMemory
from tests.support.memory import T0

MakeFact = Callable[..., PreparedFact]
U1 = Accessor("u1", "agent")
U2 = Accessor("u2", "agent")
USER = Accessor("u1", "user:u1", role="user")
POLICY = MemoryPolicy(min_score=0.3, top_k=3, lifecycle=Lifecycle(merge_similarity=0.8))
SIMILAR = [
    "合同第三条怎么改",
    "合同第三条怎么改？",
    "合同第三条怎么改呢",
    "请问合同第三条怎么改",
    "合同第三条怎么改啊",
]


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


@dataclass
class Stores:
    memory: LayeredMemory
    facts: FactStore
    narrative: NarrativeStore
    short_term: ShortTermMemory


@pytest.fixture
def stores(
    memory_db_url: str, tmp_path: Path, clock: Clock, ids: Callable[[], str]
) -> Iterator[Stores]:
    facts = FactStore(memory_db_url, POLICY, clock=clock, ids=ids)
    narrative = NarrativeStore(
        tmp_path / "narrative", HashEmbedder(), POLICY, audit=facts.record_audit, clock=clock
    )
    short = ShortTermMemory(InMemoryShortTermStore(), POLICY, scrub=None, clock=clock)
    yield Stores(LayeredMemory(facts, narrative, short), facts, narrative, short)
    narrative.close()
    facts.close()


def summary(text: str, user: str = "u1", **changes: Any) -> PreparedSummary:
    return PreparedSummary(**{"user_id": user, "text": text, "domain": "default", **changes})


def fill(s: Stores, make_fact: MakeFact) -> dict[str, str]:
    """u1: two facts and three summaries; u2: the same contract under the same entity ref."""
    ids = {}
    ids["clause"] = s.facts.write(
        U1,
        make_fact(
            "contract_clause",
            "第三条付款期限六十天",
            entity_ref="A-2024-001",
            intent_type="contract",
        ),
    ).id
    ids["size"] = s.facts.write(U1, make_fact("shoe_size", "42码")).id
    s.facts.write(
        U2, make_fact("contract_clause", "别人的第三条", user_id="u2", entity_ref="A-2024-001")
    )
    question, refund, shoes = s.narrative.add(
        U1,
        [
            summary("用户询问合同第三条怎么改", kind="question", intent_type="contract"),
            summary("用户想退货，运费谁出", intent_type="refund"),
            summary("用户喜欢蓝色的鞋"),
        ],
    )
    s.narrative.add(U2, [summary("用户询问合同第三条怎么改", "u2", intent_type="contract")])
    ids.update(question=question.id, refund=refund.id, shoes=shoes.id)
    return ids


def found(r: Recollection) -> tuple[list[str], list[str]]:
    return [f.id for f in r.facts], [h.summary.id for h in r.summaries]


NO_ENTITY = ("entity", "the input names no entity")
NO_INTENT = ("intent", "no intent for this turn")
NO_WORDS = ("keyword", "no keywords of two characters or more")
NO_SUMMARY = ("vector", "no summary at least 0.3 similar or sharing the question's words")


@pytest.mark.parametrize(
    ("call", "step", "reason", "tried", "facts", "summaries"),
    [
        pytest.param(
            {"query": "上次说的合同第三条", "entity_refs": ["A-2024-001"], "intent": "contract"},
            "entity",
            "entity_ref A-2024-001: 1 live facts",
            [],
            ["clause"],
            [],
            id="entity",
        ),
        pytest.param(
            {"query": "合同第三条怎么改", "entity_refs": ["B-9", "B-9"], "intent": "contract"},
            "intent",
            "intent contract: 1 facts, 1 summaries",
            [("entity", "no live fact for entity_ref B-9")],
            ["clause"],
            ["question"],
            id="intent-both-channels",
        ),
        pytest.param(
            {"query": "退货运费", "intent": "refund"},
            "intent",
            "intent refund: 0 facts, 1 summaries",
            [NO_ENTITY],
            [],
            ["refund"],
            id="intent-summaries",
        ),
        pytest.param(
            # nothing alike (similarity far below min_score): the intent is the filter
            {"query": "zzz", "intent": "refund"},
            "intent",
            "intent refund: 0 facts, 1 summaries",
            [NO_ENTITY],
            [],
            ["refund"],
            id="intent-needs-no-similarity",
        ),
        pytest.param(
            {"query": "蓝色", "intent": "billing", "keywords": ["蓝色"]},
            "keyword",
            "keywords 蓝色: 0 facts, 1 summaries",
            [NO_ENTITY, ("intent", "intent billing: nothing of that intent")],
            [],
            ["shoes"],
            id="keyword-summary",
        ),
        pytest.param(
            {"query": "鞋码", "keywords": ["42码", "42码", "x"]},
            "keyword",
            "keywords 42码: 1 facts, 0 summaries",
            [NO_ENTITY, NO_INTENT],
            ["size"],
            [],
            id="keyword-fact",
        ),
        pytest.param(
            {"query": "用户喜欢蓝色的鞋子", "keywords": ["发票"]},
            "vector",
            # the question passes the gate: the summaries about it (the other two are far
            # below the best and under min_score: another subject)
            "1 summaries (best similarity 0.939 ≥ min_score 0.3)",
            [NO_ENTITY, NO_INTENT, ("keyword", "keywords 发票: no match")],
            [],
            ["shoes"],
            id="vector",
        ),
        pytest.param(
            {"query": "今天天气怎么样", "keywords": ["天"]},
            "none",
            "no step found a memory",
            [NO_ENTITY, NO_INTENT, NO_WORDS, NO_SUMMARY],
            [],
            [],
            id="none",
        ),
    ],
)
def test_the_first_step_that_finds_something_answers(
    stores: Stores,
    make_fact: MakeFact,
    call: dict[str, Any],
    step: str,
    reason: str,
    tried: list[tuple[str, str]],
    facts: list[str],
    summaries: list[str],
) -> None:
    ids = fill(stores, make_fact)
    got = stores.memory.recall(U1, **call)
    answered = [] if step == "none" else [(step, reason)]
    assert (got.step, got.reason, list(got.tried)) == (step, reason, tried + answered)
    assert found(got) == ([ids[k] for k in facts], [ids[k] for k in summaries])
    assert got.found is (step != "none")
    assert got.trace() == {
        "step": step,
        "reason": reason,
        "facts": [ids[k] for k in facts],
        "summaries": [ids[k] for k in summaries],
        "scores": [h.scores() for h in got.summaries],
        "tried": [{"step": s, "result": r} for s, r in tried + answered],
    }


def test_without_a_narrative_channel_the_vector_step_says_so(
    memory_db_url: str, clock: Clock, make_fact: MakeFact
) -> None:
    with FactStore(memory_db_url, POLICY, clock=clock) as facts:
        got = LayeredMemory(facts).recall(U1, "合同第三条", intent="contract", keywords=["合同"])
    assert (got.step, got.reason) == ("none", "no step found a memory")
    assert got.tried == (
        NO_ENTITY,
        ("intent", "intent contract: nothing of that intent"),
        ("keyword", "keywords 合同: no match"),
        ("vector", "no narrative channel"),
    )


def test_the_trace_names_the_step_and_each_summarys_scores(
    stores: Stores, make_fact: MakeFact, clock: Clock
) -> None:
    ids = fill(stores, make_fact)
    clock.advance(days=3)
    got = stores.memory.recall(U1, "用户喜欢蓝色的鞋子", top_k=1)
    trace = got.trace()
    assert (trace["step"], trace["summaries"]) == ("vector", [ids["shoes"]])
    [scores] = trace["scores"]
    assert list(scores) == ["id", "bm25", "similarity", "fused", "boost", "score"]
    assert scores["id"] == ids["shoes"]
    assert scores["bm25"] > 0  # 用户, 喜欢, 蓝色 ... are its words
    assert scores["similarity"] == pytest.approx(0.939, abs=1e-3)
    assert 1.0 < scores["boost"] < 1.005  # three days old: part of the 0.005 boost
    assert scores["score"] == pytest.approx(scores["fused"] * scores["boost"], abs=1e-3)
    # a keyword hit carries LanceDB's BM25 and no similarity
    by_word = stores.memory.recall(U1, "蓝色", keywords=["蓝色"]).trace()
    assert by_word["step"] == "keyword" and by_word["scores"][0]["similarity"] == 0.0


def test_an_old_fact_beats_months_of_newer_small_talk(
    stores: Stores, clock: Clock, make_fact: MakeFact
) -> None:
    [pet] = stores.narrative.add(U1, [summary("用户家里养了一只叫豆豆的柯基")])
    for week in range(1, 41):  # 280 days of other things, some sharing its words
        clock.advance(days=7)
        text = "用户问邻居家的柯基几岁了" if week % 10 == 0 else f"用户问第{week}周的天气"
        stores.narrative.add(U1, [summary(text)])
    got = stores.memory.recall(U1, "我家柯基叫豆豆吗")
    assert got.step == "vector" and got.summaries[0].summary.id == pet.id
    # 280 days old and older than the warm tier (90 days), yet never archived: searched


def test_a_summary_below_min_score_is_found_by_its_words_and_the_reason_says_so(
    memory_sqlite_url: str, tmp_path: Path, clock: Clock
) -> None:
    strict = MemoryPolicy(min_score=0.99, top_k=3)
    with FactStore(memory_sqlite_url, strict, clock=clock) as facts:
        narrative = NarrativeStore(tmp_path / "n", HashEmbedder(), strict, clock=clock)
        [pet] = narrative.add(U1, [summary("用户家里养了一只叫豆豆的柯基")])
        narrative.add(U1, [summary("用户问今天的天气")])
        got = LayeredMemory(facts, narrative).recall(U1, "柯基豆豆")
        narrative.close()
    # the words pass the gate; the other summary, another subject, stays out
    assert [h.summary.text for h in got.summaries] == ["用户家里养了一只叫豆豆的柯基"]
    assert got.summaries[0].summary.id == pet.id
    best = max(h.similarity for h in got.summaries)
    assert best < 0.99
    assert got.reason == (
        f"1 summaries (best similarity {best:.3f} < min_score 0.99: found by their words)"
    )


def test_top_k_caps_what_a_step_returns(stores: Stores, make_fact: MakeFact) -> None:
    for i in range(4):
        stores.facts.write(U1, make_fact(f"clause_{i}", f"第{i}条", entity_ref="A-2024-001"))
    got = stores.memory.recall(U1, "合同", entity_refs=["A-2024-001"], top_k=2)
    assert (got.step, got.reason) == ("entity", "entity_ref A-2024-001: 4 live facts")
    assert len(got.facts) == 2


# ---- what no step returns ----------------------------------------------------------------------


def retire(s: Stores, clock: Clock, how: str, make_fact: MakeFact) -> set[str]:
    """A contract fact and question of u1, put out of use ``how``; their ids."""
    until = T0 + timedelta(hours=1) if how == "expired" else None
    fact = s.facts.write(
        U1,
        make_fact(
            "contract_clause",
            "合同第三条付款期限",
            entity_ref="A-2024-001",
            intent_type="contract",
            valid_until=until,
        ),
    )
    asked = []
    for i, text in enumerate(SIMILAR if how == "merged" else SIMILAR[:1]):
        clock.now = T0 + timedelta(days=i)
        [q] = s.narrative.add(
            U1, [summary(text, kind="question", intent_type="contract", valid_until=until)]
        )
        asked.append(q.id)
    if how == "expired":
        clock.advance(hours=2)  # no job run: reads filter it themselves
    elif how == "deprecated":
        s.facts.deprecate(U1, "contract_clause")
        deprecate(s.narrative, U1, SIMILAR[0])
    elif how == "archived":
        clock.advance(days=91)
        s.facts.archive_cold()
        archive_cold(s.narrative, clock.now)
    elif how == "merged":
        assert merge_recurring(s.narrative, clock.now) == 5
        return set(asked)
    return {fact.id, *asked}


@pytest.mark.parametrize("how", ["expired", "deprecated", "archived", "merged"])
def test_no_step_returns_a_retired_memory(
    stores: Stores, clock: Clock, make_fact: MakeFact, how: str
) -> None:
    retired = retire(stores, clock, how, make_fact)
    calls: list[dict[str, Any]] = [
        {"entity_refs": ["A-2024-001"]},
        {"intent": "contract"},
        {"keywords": ["合同", "第三条"]},
        {},
    ]
    for call in calls:
        got = stores.memory.recall(U1, "合同第三条怎么改", **call)
        facts, summaries = found(got)
        assert retired.isdisjoint(facts + summaries), (how, call)
        if how == "merged":  # the tag stands for the merged questions
            tags = [h.summary for h in got.summaries]
            assert [(t.kind, t.count) for t in tags] == (
                [] if got.step == "entity" else [("tag", 5)]
            )
        else:
            assert (got.step, got.facts, got.summaries) == ("none", (), ()), (how, call)


# ---- export and forget -------------------------------------------------------------------------


def test_export_has_the_summaries_and_the_whole_audit_trail(
    stores: Stores, clock: Clock, make_fact: MakeFact
) -> None:
    ids = fill(stores, make_fact)
    clock.advance(minutes=1)
    stores.memory.recall(U1, "用户喜欢蓝色的鞋子", top_k=1)
    data = stores.memory.export(USER)
    assert list(data) == ["format", "user_id", "exported_at", "facts", "audit", "summaries"]
    assert [f["id"] for f in data["facts"]] == [ids["clause"], ids["size"]]
    assert [s["id"] for s in data["summaries"]] == [ids["question"], ids["refund"], ids["shoes"]]
    assert [s["text"] for s in data["summaries"]] == [
        "用户询问合同第三条怎么改",
        "用户想退货，运费谁出",
        "用户喜欢蓝色的鞋",
    ]
    trail = [(a["action"], a["memory_id"], a["reason"]) for a in data["audit"]]
    assert trail == [
        ("write", ids["clause"], "contract_clause"),
        ("write", ids["size"], "shoe_size"),
        ("write", ids["question"], "narrative"),
        ("write", ids["refund"], "narrative"),
        ("write", ids["shoes"], "narrative"),
        ("read", ids["shoes"], "narrative"),
        ("export", None, "narrative: 3"),
        ("export", None, "2 facts"),
    ]


def test_forget_clears_every_store_and_leaves_only_hashed_forget_rows(
    stores: Stores, make_fact: MakeFact
) -> None:
    fill(stores, make_fact)
    stores.short_term.record("u1", "s1", "合同第三条怎么改", "我来看看")
    stores.short_term.record("u1", "s2", "退货运费谁出", "商家出")
    stores.short_term.record("u2", "s1", "你好", "你好")
    stores.memory.recall(U1, "用户喜欢蓝色的鞋子", top_k=1)

    hashed = forgotten_id("u1", bytes(range(32)))
    counts = stores.memory.forget(USER, forgotten_as=hashed)
    assert counts == {"summaries": 3, "turns": 2, "facts": 2}

    assert stores.memory.recall(U1, "用户喜欢蓝色的鞋子", entity_refs=["A-2024-001"]).step == "none"
    assert stores.short_term.turns("u1", "s1") == []
    assert len(stores.short_term.turns("u2", "s1")) == 1
    with stores.facts.engine.connect() as conn:
        audit = conn.execute(
            sa.select(MEMORY_AUDIT.c.user_id, MEMORY_AUDIT.c.actor, MEMORY_AUDIT.c.reason)
            .where(MEMORY_AUDIT.c.user_id.in_(["u1", hashed]))
            .order_by(MEMORY_AUDIT.c.id)
        ).all()
        left = conn.execute(
            sa.select(MEMORY_FACT.c.user_id).where(MEMORY_FACT.c.user_id == "u1")
        ).all()
    # 6 rows went: 2 fact writes, 3 summary writes, the recall's read; u1's only rows left
    # are the ones of the recall made after the forget, which found nothing
    assert [tuple(r) for r in audit] == [
        (hashed, f"user:{hashed}", "narrative: 3 summaries"),
        (hashed, f"user:{hashed}", "2 facts, 6 audit rows"),
        ("u1", "agent", "by_entity: nothing found"),
        ("u1", "agent", "narrative: nothing matched"),
    ]
    assert left == []
    # u2 keeps everything
    other = stores.memory.recall(U2, "合同第三条", entity_refs=["A-2024-001"])
    assert (other.step, [f.value for f in other.facts]) == ("entity", ["别人的第三条"])
    assert [h.summary.user_id for h in stores.narrative.search(U2, "用户询问合同第三条怎么改")] == [
        "u2"
    ]


def test_forget_by_an_agent_changes_nothing(stores: Stores, make_fact: MakeFact) -> None:
    ids = fill(stores, make_fact)
    stores.short_term.record("u1", "s1", "合同第三条怎么改", "我来看看")
    with pytest.raises(PermissionError) as e:
        stores.memory.forget(U1)
    assert str(e.value) == "forget refused: role agent is not admin or user"
    assert len(stores.short_term.turns("u1", "s1")) == 1
    assert stores.narrative.table.count_rows("user_id = 'u1'") == 3
    got = stores.memory.recall(U1, "合同", entity_refs=["A-2024-001"])
    assert [f.id for f in got.facts] == [ids["clause"]]
    trail = stores.facts.audit_trail(USER)
    assert [(a.action, a.reason) for a in trail if a.action == "deny"] == [
        ("deny", "forget: role agent is not admin or user")
    ]
