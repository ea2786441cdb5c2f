"""The fact store's lifecycle with a fake clock: validity rules (an expired fact is never
returned), expiry, deprecation, decay and tiering; on SQLite and PostgreSQL.

Ids are f-001, f-002 ... in write order (the ``ids`` fixture) and every time comes from the
fake clock, so rows are pinned whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Protocol

import pytest

from charter.memory.facts import FactStore
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


# ---- validity (ARCHITECTURE §7: commitment deadline + 2 h, inferred 7 d x (1 - confidence),
# session state 15 min), with the default policy's types


def every_read(store: FactStore, key: str, ref: str, intent: str, word: str) -> list[Fact | None]:
    return [
        store.get(U1, key),
        *store.by_entity(U1, ref),
        *store.by_intent(U1, intent),
        *store.search_text(U1, [word]),
    ]


@pytest.mark.parametrize(
    ("memory_type", "confidence", "deadline_h", "lives"),
    [
        ("commitment", 1.0, 24.0, timedelta(hours=26)),  # the deadline + 2 h
        ("inferred", 0.75, None, timedelta(hours=42)),  # 7 d x 0.25
        ("session_state", 1.0, None, timedelta(minutes=15)),
    ],
)
def test_validity_rules_and_an_expired_fact_is_never_returned(
    store: FactStore,
    clock: Clock,
    make_fact: MakeFact,
    memory_type: str,
    confidence: float,
    deadline_h: float | None,
    lives: timedelta,
) -> None:
    deadline = None if deadline_h is None else clock.now + timedelta(hours=deadline_h)
    until = store.policy.valid_until(memory_type, clock.now, confidence, deadline)
    assert until == clock.now + lives
    fact = make_fact(
        "promise",
        "48小时内回电",
        memory_type=memory_type,
        confidence=confidence,
        source="inferred" if memory_type == "inferred" else "user_confirmed",
        valid_until=until,
        entity_ref="TICKET-7",
        intent_type="callback",
    )
    store.write(U1, fact)
    clock.now = until - timedelta(seconds=1)
    assert [
        f.id if f else None for f in every_read(store, "promise", "TICKET-7", "callback", "回电")
    ] == ["f-001"] * 4
    clock.now = until
    assert every_read(store, "promise", "TICKET-7", "callback", "回电") == [None]
    clock.advance(days=365)
    assert every_read(store, "promise", "TICKET-7", "callback", "回电") == [None]
    assert store.expire() == 1
    assert rows(store) == [("f-001", "48小时内回电", "expired", None, None)]
    assert every_read(store, "promise", "TICKET-7", "callback", "回电") == [None]


def test_a_fact_without_valid_until_gets_its_types_validity(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    written = [
        store.write(U1, make_fact("state", "选尺码", memory_type="session_state")),
        store.write(U1, make_fact("guess", "喜欢蓝色", memory_type="inferred", confidence=0.5)),
        store.write(U1, make_fact("call", "回电", memory_type="commitment")),
        store.write(U1, make_fact("name", "张", memory_type="undeclared_type")),
    ]
    assert [f.valid_until for f in written] == [
        clock.now + timedelta(minutes=15),
        clock.now + timedelta(days=3.5),
        clock.now + timedelta(hours=2),  # no deadline known: the grace period from now
        None,
    ]


def test_a_new_value_after_expiry_does_not_supersede(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(U1, make_fact("state", "选尺码", memory_type="session_state"))
    clock.advance(minutes=20)
    new = store.write(U1, make_fact("state", "付款", memory_type="session_state"))
    assert (new.status, new.supersedes) == ("active", None)
    assert rows(store) == [
        ("f-001", "选尺码", "expired", None, None),
        ("f-002", "付款", "active", None, None),
    ]


def test_a_fact_written_already_outlived_is_kept_expired(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(U1, make_fact("city", "上海"))
    late = store.write(U1, make_fact("city", "杭州", valid_until=clock.now - timedelta(hours=1)))
    assert late.status == "expired"
    assert rows(store) == [
        ("f-001", "上海", "active", None, None),
        ("f-002", "杭州", "expired", None, None),
    ]


def test_deprecation(store: FactStore, clock: Clock, make_fact: MakeFact) -> None:
    store.write(U1, make_fact("difficulty", "分数加法", intent_type="homework"))
    gone = store.deprecate(U1, "difficulty")
    assert gone is not None and (gone.id, gone.status) == ("f-001", "deprecated")
    assert store.get(U1, "difficulty") is None
    assert store.by_intent(U1, "homework") == []
    assert store.deprecate(U1, "difficulty") is None
    assert rows(store) == [("f-001", "分数加法", "deprecated", None, None)]


def weights(store: FactStore) -> dict[str, float]:
    export = store.export(Accessor("u1", "test", role="admin"))
    return {f["id"]: f["weight"] for f in export["facts"]}


def test_decay_is_fifteen_percent_per_idle_thirty_days(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(U1, make_fact("a", "1"))
    store.write(U1, make_fact("b", "2"))
    clock.advance(days=30)
    assert store.decay() == 2
    assert weights(store) == {"f-001": 0.85, "f-002": 0.85}
    assert store.decay() == 0  # a function of idle time: running it again changes nothing
    store.get(U1, "a")  # a use: weight 1 again, idle from now
    clock.advance(days=30)
    assert store.decay() == 2
    assert weights(store) == {"f-001": 0.85, "f-002": 0.7225}
    clock.advance(days=15)
    store.decay()
    assert weights(store) == {"f-001": 0.783661, "f-002": 0.666112}  # 0.85^1.5, 0.85^2.5


def test_tiering_archives_cold_facts_out_of_reads_but_not_out_of_exports(
    store: FactStore,
    clock: Clock,
    make_fact: MakeFact,
) -> None:
    store.write(U1, make_fact("old", "旧地址", entity_ref="A1"))
    store.write(U1, make_fact("used", "常用尺码", entity_ref="A1"))
    clock.advance(days=8)
    assert store.archive_cold() == 0
    export = store.export(Accessor("u1", "test", role="admin"))
    assert [(f["id"], f["tier"]) for f in export["facts"]] == [("f-001", "warm"), ("f-002", "warm")]
    clock.advance(days=80)  # day 88
    assert store.get(U1, "used") is not None  # used: hot again
    clock.advance(days=3)  # day 91: "old" idle 91 days, "used" 3
    assert store.archive_cold() == 1
    assert store.get(U1, "old") is None
    assert [f.id for f in store.by_entity(U1, "A1")] == ["f-002"]
    assert store.search_text(U1, ["旧地址"]) == []
    export = store.export(Accessor("u1", "test", role="admin"))
    assert [(f["id"], f["status"], f["tier"]) for f in export["facts"]] == [
        ("f-001", "archived", "cold"),
        ("f-002", "active", "hot"),
    ]
    assert store.archive_cold() == 0
    # its key is free for a new active fact
    assert store.write(U1, make_fact("old", "新地址")).status == "active"


def test_expire_marks_outlived_facts_and_audits_them(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    u2 = Accessor("u2", "agent")
    store.write(U1, make_fact("s", "x", memory_type="session_state"))
    store.write(u2, make_fact("s", "y", memory_type="session_state", user_id="u2"))
    store.write(U1, make_fact("f", "z"))
    assert store.expire() == 0
    clock.advance(minutes=15)
    assert store.expire() == 2
    assert store.expire() == 0
    trail = store.audit_trail(Accessor("u2", "test", role="admin"))
    assert [(e.actor, e.role, e.action, e.memory_id, e.reason) for e in trail] == [
        ("agent", "agent", "write", "f-002", "s"),
        ("system", "system", "expire", "f-002", "s: outlived"),
    ]
