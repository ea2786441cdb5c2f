"""The fact store: write and read, supersede, contradiction, refresh, the ladder's lookups and
racing writers, with a fake clock; on SQLite and PostgreSQL (the lifecycle is in
``test_facts_lifecycle.py``).

Ids are f-001, f-002 ... in write order (the ``ids`` fixture) and every time comes from the
fake clock, so rows are pinned whole."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Protocol

import pytest
import sqlalchemy as sa

from charter.memory.facts import FactStore
from charter.memory.facts.access import resolve
from charter.memory.records import Accessor, Fact, PreparedFact

U1 = Accessor("u1", "agent")
MakeFact = Callable[..., PreparedFact]


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


@pytest.fixture
def store(memory_db_url: str, clock: Clock, ids: Callable[[], str]) -> Iterator[FactStore]:
    with FactStore(memory_db_url, clock=clock, ids=ids) as s:
        yield s


def rows(store: FactStore, user: str = "u1") -> list[tuple[str, str, str, str | None, str | None]]:
    """(id, value, status, supersedes, contradicts) of every row of the user, oldest first."""
    return [
        (f.id, f.value, f.status, f.supersedes, f.contradicts)
        for f in store.list_facts(Accessor(user, "test", role="admin"), history=True)
    ]


def test_a_written_fact_is_read_back_whole(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    reader = Accessor("u1", "agent", use="orders", consent="app_v3.2")
    written = store.write(
        reader,
        make_fact(
            "order_status",
            "已发货",
            memory_type="order_fact",
            level="L1",
            confidence=0.9,
            source="system_verified",
            domain="orders",
            valid_until=clock.now + timedelta(days=90),
            entity_ref="ORD20240501001",
            intent_type="track_order",
            consent_source="app_v3.2",
            value_score=6.5,
        ),
    )
    assert written == Fact(
        id="f-001",
        user_id="u1",
        key="order_status",
        value="已发货",
        memory_type="order_fact",
        level="L1",
        encrypted=False,
        confidence=0.9,
        source="system_verified",
        domain="orders",
        status="active",
        created_at=clock.now,
        valid_until=clock.now + timedelta(days=90),
        entity_ref="ORD20240501001",
        intent_type="track_order",
        consent_source="app_v3.2",
        value_score=6.5,
    )
    clock.advance(minutes=5)
    got = store.get(reader, "order_status")
    assert got is not None
    assert got == Fact(
        **{**written.__dict__, "access_count": 1, "last_used_at": clock.now},
    )
    assert store.get(reader, "order_status") == Fact(
        **{**written.__dict__, "access_count": 2, "last_used_at": clock.now}
    )


def test_a_new_value_supersedes_the_old_in_one_row_each(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(U1, make_fact("city", "上海"))
    clock.advance(hours=1)
    new = store.write(U1, make_fact("city", "杭州"))
    assert (new.id, new.status, new.supersedes) == ("f-002", "active", "f-001")
    assert rows(store) == [
        ("f-001", "上海", "superseded", None, None),
        ("f-002", "杭州", "active", "f-001", None),
    ]
    old = store.list_facts(Accessor("u1", "test", role="admin"), history=True)[0]
    assert old.valid_until == clock.now  # superseded now: its validity ends here
    got = store.get(U1, "city")
    assert got is not None and got.value == "杭州"


def test_a_failed_supersede_changes_nothing(
    store: FactStore, clock: Clock, make_fact: MakeFact, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write(U1, make_fact("city", "上海"))
    clock.advance(hours=1)
    monkeypatch.setattr(store, "_ids", lambda: "f-001")  # every new id is taken
    with pytest.raises(sa.exc.IntegrityError):
        store.write(U1, make_fact("city", "杭州"))
    # the superseding UPDATE ran before the failing INSERT, in the same transaction
    monkeypatch.undo()
    assert rows(store) == [("f-001", "上海", "active", None, None)]
    got = store.get(U1, "city")
    assert got is not None and (got.value, got.valid_until) == ("上海", None)


def test_the_same_value_refreshes_the_held_row(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    first = store.write(
        U1,
        make_fact(
            "size",
            "M",
            source="inferred",
            confidence=0.6,
            valid_until=clock.now + timedelta(days=1),
        ),
    )
    clock.advance(hours=12)
    again = store.write(
        U1,
        make_fact(
            "size",
            "M",
            source="user_confirmed",
            confidence=0.95,
            valid_until=clock.now + timedelta(days=30),
        ),
    )
    assert again.id == first.id == "f-001"
    assert (again.source, again.confidence, again.valid_until) == (
        "user_confirmed",
        0.95,
        clock.now + timedelta(days=30),
    )
    # a weaker, shorter restatement takes nothing away
    weaker = store.write(
        U1,
        make_fact(
            "size",
            "M",
            source="default",
            confidence=0.1,
            valid_until=clock.now + timedelta(hours=1),
        ),
    )
    assert (weaker.id, weaker.source, weaker.confidence, weaker.valid_until) == (
        "f-001",
        "user_confirmed",
        0.95,
        clock.now + timedelta(days=30),
    )
    assert rows(store) == [("f-001", "M", "active", None, None)]


def test_a_guess_never_overwrites_a_confirmed_fact(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(U1, make_fact("allergy", "青霉素", source="user_confirmed"))
    clock.advance(minutes=1)
    guess = store.write(U1, make_fact("allergy", "无", source="inferred", confidence=0.8))
    assert (guess.id, guess.status, guess.contradicts) == ("f-002", "contradicted", "f-001")
    got = store.get(U1, "allergy")
    assert got is not None and got.value == "青霉素"
    # a confirmed change does replace it; the contradiction stays on record
    store.write(U1, make_fact("allergy", "头孢", source="system_verified"))
    assert rows(store) == [
        ("f-001", "青霉素", "superseded", None, None),
        ("f-002", "无", "contradicted", None, "f-001"),
        ("f-003", "头孢", "active", "f-001", None),
    ]


HELD_NEW_EXPECTED = [
    # held source, new source -> what a different value does
    ("user_confirmed", "user_confirmed", "supersede"),
    ("user_confirmed", "system_verified", "supersede"),
    ("user_confirmed", "inferred", "contradict"),
    ("user_confirmed", "default", "contradict"),
    ("system_verified", "user_confirmed", "supersede"),
    ("system_verified", "system_verified", "supersede"),
    ("system_verified", "inferred", "contradict"),
    ("system_verified", "default", "contradict"),
    ("inferred", "user_confirmed", "supersede"),
    ("inferred", "system_verified", "supersede"),
    ("inferred", "inferred", "supersede"),
    ("inferred", "default", "supersede"),
    ("default", "user_confirmed", "supersede"),
    ("default", "system_verified", "supersede"),
    ("default", "inferred", "supersede"),
    ("default", "default", "supersede"),
]


@pytest.mark.parametrize(("held", "new", "expected"), HELD_NEW_EXPECTED)
def test_the_contradiction_rule(held: str, new: str, expected: str, make_fact: MakeFact) -> None:
    row = {"value": "a", "encrypted": False, "source": held}
    assert resolve(row, make_fact("k", "b", source=new)) == expected
    assert resolve(row, make_fact("k", "a", source=new)) == "refresh"
    assert resolve(None, make_fact("k", "b", source=new)) == "insert"
    # equal ciphertext is not equal plaintext's only sign: an encrypted value is always new
    assert resolve(row, make_fact("k", "a", source=new, encrypted=True)) != "refresh"


# ---- the ladder's lookups


def test_by_entity_and_by_intent_newest_first_within_limits(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    for i in range(4):
        store.write(U1, make_fact(f"k{i}", f"v{i}", entity_ref="ORD-1", intent_type="refund"))
        clock.advance(seconds=1)
    store.write(U1, make_fact("other", "v", entity_ref="ORD-2", intent_type="track"))
    assert [f.id for f in store.by_entity(U1, "ORD-1")] == ["f-004", "f-003", "f-002", "f-001"]
    assert [f.id for f in store.by_intent(U1, "refund", limit=2)] == ["f-004", "f-003"]
    assert store.by_entity(U1, "ORD-3") == []


def test_search_text_ranks_by_words_matched_and_takes_wildcards_literally(
    store: FactStore,
    clock: Clock,
    make_fact: MakeFact,
) -> None:
    store.write(U1, make_fact("note", "宽带 故障 已报修"))
    clock.advance(seconds=1)
    store.write(U1, make_fact("plan", "宽带 套餐 100%"))
    clock.advance(seconds=1)
    store.write(U1, make_fact("secret", "宽带 故障", encrypted=True, level="L3"))
    clock.advance(seconds=1)
    store.write(U1, make_fact("broadband_fault", "x"))
    found = store.search_text(U1, ["宽带", "故障"], limit=5)
    assert [f.id for f in found] == ["f-001", "f-002"]  # ciphertext is never matched
    assert [f.id for f in store.search_text(U1, ["100%"])] == ["f-002"]
    assert [f.id for f in store.search_text(U1, ["%"])] == ["f-002"]
    assert [f.id for f in store.search_text(U1, ["_"])] == ["f-004"]  # the key's own "_"
    assert store.search_text(U1, ["%%"]) == []
    assert store.search_text(U1, ["宽带"], limit=1)[0].id == "f-002"  # ties: newest first
    assert store.search_text(U1, ["  "]) == []


def test_racing_writers_leave_one_active_row_per_key(
    memory_db_url: str, make_fact: MakeFact
) -> None:
    writers = 8
    barrier = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        with FactStore(memory_db_url) as s:  # each its own engine, as processes would
            try:
                barrier.wait()
                s.write(U1, make_fact("city", f"city-{n}"))
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with FactStore(memory_db_url) as s:
        history = s.list_facts(Accessor("u1", "test", role="admin"), history=True)
    statuses = sorted(f.status for f in history)
    assert statuses == ["active"] + ["superseded"] * (writers - 1)
    # every superseded row is named by exactly one later row: one chain, nothing lost
    assert sorted(f.supersedes for f in history if f.supersedes) == sorted(
        f.id for f in history if f.status == "superseded"
    )
