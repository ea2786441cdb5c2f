"""The ticket store: round trips, ids, order, filters, status changes and their refusals, the
migration, and ids that stay unique when threads open tickets at once; on SQLite and, when a
server is reachable (``CHARTER_TEST_POSTGRES_URL``), on PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.goals.store import GoalStore
from charter.skills.tickets import (
    TICKETS,
    Ticket,
    TicketClosed,
    TicketNotFound,
    TicketStore,
    ticket_id,
)
from charter.skills.tickets_migrations import COMPONENT
from charter.store.migrations import SCHEMA_TABLE, make_engine, schema_versions
from tests.support.postgres import fresh_schema

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
THREADS = 8
PER_THREAD = 5


@pytest.fixture
def ticket_pg_url() -> Iterator[str]:
    with fresh_schema("charter_tkt") as url:
        yield url


@pytest.fixture
def ticket_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tickets.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs on SQLite and on PostgreSQL."""
    name = "ticket_sqlite_url" if request.param == "sqlite" else "ticket_pg_url"
    url: str = request.getfixturevalue(name)
    return url


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(db_url: str, clock: FakeClock) -> Iterator[TicketStore]:
    with TicketStore(db_url, clock=clock) as s:
        yield s


CONTEXT: dict[str, Any] = {
    "turns": [
        {"role": "user", "text": "查一下2024年新能源补贴细则"},
        {"role": "agent", "text": "未找到相关政策"},
        {"role": "user", "text": "不对，重新来"},
    ],
    "goal": {"id": "g-1", "intent": "policy_lookup", "slots": {"year_range": [2024, 2024]}},
    "skill_call": {"name": "policy_search", "error": None, "results": 0},
    "negations": 2,
    "confidence": 0.41,
    "escalate": True,
}


def open_negated(store: TicketStore, **changes: Any) -> Ticket:
    fields: dict[str, Any] = {
        "user_id": "u1",
        "session_id": "s1",
        "domain": "finance",
        "skill": "policy_search",
        "reason": "user negated twice",
        "summary": "用户连续两次否定检索结果",
        "context": CONTEXT,
    }
    fields.update(changes)
    return store.open(**fields)


def test_a_ticket_round_trips_exactly(store: TicketStore, db_url: str) -> None:
    opened = open_negated(store)
    want = Ticket(
        id="T-000001",
        status="open",
        queue="human",
        user_id="u1",
        session_id="s1",
        domain="finance",
        skill="policy_search",
        reason="user negated twice",
        summary="用户连续两次否定检索结果",
        context=CONTEXT,
        assignee=None,
        note=None,
        created_at=T0,
        updated_at=T0,
    )
    assert opened == want
    assert store.get("T-000001") == want
    with TicketStore(db_url) as again:  # another store, another connection pool
        read = again.get("T-000001")
    assert read == want
    assert read is not None and list(read.context) == list(CONTEXT)  # in the caller's order


def test_defaults_and_json_shapes(store: TicketStore) -> None:
    ticket = store.open(
        user_id="u2",
        session_id="s9",
        domain="ecommerce",
        reason="breaker open",
        context={"attempts": (1, 2)},
    )
    assert (ticket.skill, ticket.queue, ticket.summary, ticket.assignee, ticket.note) == (
        None,
        "human",
        "",
        None,
        None,
    )
    # JSON has no tuples: the context comes back as JSON gives it, from the store and the row
    assert ticket.context == {"attempts": [1, 2]}
    assert store.get(ticket.id) == ticket
    bare = store.open(user_id="u2", session_id="s9", domain="ecommerce", reason="r", queue="vip")
    assert (bare.context, bare.queue) == ({}, "vip")


def test_as_dict_is_what_json_output_prints(store: TicketStore, clock: FakeClock) -> None:
    clock.now = T0 + timedelta(microseconds=1500)
    ticket = open_negated(store, context={"n": 1})
    assert ticket.as_dict() == {
        "id": "T-000001",
        "status": "open",
        "queue": "human",
        "user_id": "u1",
        "session_id": "s1",
        "domain": "finance",
        "skill": "policy_search",
        "reason": "user negated twice",
        "summary": "用户连续两次否定检索结果",
        "context": {"n": 1},
        "assignee": None,
        "note": None,
        "created_at": "2024-05-01T10:00:00.001500Z",
        "updated_at": "2024-05-01T10:00:00.001500Z",
    }


@pytest.mark.parametrize(
    ("seq", "text"),
    [(1, "T-000001"), (42, "T-000042"), (999_999, "T-999999"), (1_000_000, "T-1000000")],
)
def test_ticket_ids(seq: int, text: str) -> None:
    assert ticket_id(seq) == text


def seed(store: TicketStore, clock: FakeClock) -> None:
    """Five tickets; the clock stands still for the last two: order must not depend on it."""
    for user, minutes in (("u1", 1), ("u2", 1), ("u1", 1), ("u2", 0), ("u1", 0)):
        open_negated(store, user_id=user)
        clock.advance(minutes)
    store.assign("T-000002", "alice")
    store.close("T-000003", "answered by phone")
    store.assign("T-000005", "bob")


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        ({}, ["T-000005", "T-000004", "T-000003", "T-000002", "T-000001"]),
        ({"limit": 2}, ["T-000005", "T-000004"]),
        ({"status": "open"}, ["T-000004", "T-000001"]),
        ({"status": "assigned"}, ["T-000005", "T-000002"]),
        ({"status": "closed"}, ["T-000003"]),
        ({"user_id": "u1"}, ["T-000005", "T-000003", "T-000001"]),
        ({"user_id": "u2", "status": "open"}, ["T-000004"]),
        ({"user_id": "u1", "limit": 1}, ["T-000005"]),
        ({"user_id": "nobody"}, []),
    ],
)
def test_list_is_newest_first_and_filters(
    store: TicketStore, clock: FakeClock, filters: dict[str, Any], ids: list[str]
) -> None:
    seed(store, clock)
    assert [t.id for t in store.list(**filters)] == ids


def test_list_limit_defaults_to_50(store: TicketStore) -> None:
    for _ in range(51):
        store.open(user_id="u1", session_id="s1", domain="d", reason="r")
    listed = store.list()
    assert (len(listed), listed[0].id, listed[-1].id) == (50, "T-000051", "T-000002")


def test_assign_then_close(store: TicketStore, clock: FakeClock) -> None:
    open_negated(store)
    clock.advance(5)
    assigned = store.assign("T-000001", "alice")
    assert (assigned.status, assigned.assignee, assigned.updated_at) == (
        "assigned",
        "alice",
        T0 + timedelta(minutes=5),
    )
    assert assigned.created_at == T0
    clock.advance(5)
    handed_on = store.assign("T-000001", "bob")
    assert (handed_on.status, handed_on.assignee) == ("assigned", "bob")
    clock.advance(5)
    closed = store.close("T-000001", "告知用户2024年细则尚未发布")
    assert closed == replace(
        assigned,
        status="closed",
        assignee="bob",
        note="告知用户2024年细则尚未发布",
        updated_at=T0 + timedelta(minutes=15),
    )
    assert store.get("T-000001") == closed


def test_an_open_ticket_can_be_closed_without_an_assignee(store: TicketStore) -> None:
    open_negated(store)
    closed = store.close("T-000001", "duplicate of T-000000")
    assert (closed.status, closed.assignee, closed.note) == (
        "closed",
        None,
        "duplicate of T-000000",
    )


def test_a_closed_ticket_never_changes_again(store: TicketStore, clock: FakeClock) -> None:
    open_negated(store)
    closed = store.close("T-000001", "done")
    clock.advance(1)
    with pytest.raises(TicketClosed) as again:
        store.close("T-000001", "done twice")
    assert str(again.value) == "ticket T-000001 is already closed"
    with pytest.raises(TicketClosed) as reassigned:
        store.assign("T-000001", "carol")
    assert str(reassigned.value) == "ticket T-000001 is closed: it cannot be assigned"
    assert store.get("T-000001") == closed


@pytest.mark.parametrize(
    "change",
    [lambda s: s.assign("T-000404", "alice"), lambda s: s.close("T-000404", "note")],
    ids=["assign", "close"],
)
def test_unknown_ids(store: TicketStore, change: Callable[[TicketStore], Ticket]) -> None:
    assert store.get("T-000404") is None
    with pytest.raises(TicketNotFound) as caught:
        change(store)
    assert (str(caught.value), caught.value.ticket_id) == ("no ticket 'T-000404'", "T-000404")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"user_id": ""}, "a ticket needs a user_id"),
        ({"session_id": ""}, "a ticket needs a session_id"),
        ({"domain": ""}, "a ticket needs a domain"),
        ({"reason": ""}, "a ticket needs a reason"),
        ({"queue": ""}, "a ticket needs a queue"),
        (
            {"context": {"at": T0}},
            "the ticket context must be JSON-serialisable: "
            "Object of type datetime is not JSON serializable",
        ),
    ],
)
def test_open_refuses(store: TicketStore, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        open_negated(store, **changes)
    assert str(caught.value) == message
    assert store.list() == []  # nothing half-written, no number used up
    assert open_negated(store).id == "T-000001"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.list(limit=0), "limit must be at least 1, got 0"),
        (
            lambda s: s.list(status="pending"),
            "unknown ticket status 'pending' (one of open, assigned, closed)",
        ),
        (lambda s: s.assign("T-000001", ""), "a ticket is assigned to someone: who is empty"),
    ],
    ids=["limit", "status", "who"],
)
def test_bad_arguments(
    store: TicketStore, call: Callable[[TicketStore], object], message: str
) -> None:
    open_negated(store)
    with pytest.raises(ValueError) as caught:
        call(store)
    assert str(caught.value) == message


# ---- the schema ------------------------------------------------------------------------------


def test_the_migration_runs_once_next_to_the_goal_store(db_url: str) -> None:
    """Tickets share the goals' database (``charter.db``): each component its own versions."""
    GoalStore(db_url).close()
    engine = make_engine(db_url)
    TicketStore(engine).dispose()
    TicketStore(engine).dispose()  # a second open finds version 1 applied
    assert schema_versions(engine, COMPONENT) == [1]
    assert schema_versions(engine, "goals") == [1]
    with engine.connect() as conn:  # the shared engine was left open by dispose
        query = f"SELECT version, name FROM {SCHEMA_TABLE} WHERE component = 'tickets'"
        assert [tuple(r) for r in conn.execute(sa.text(query))] == [(1, "skill_ticket")]
    engine.dispose()


def test_the_migrated_schema_is_what_tickets_py_declares(db_url: str) -> None:
    """A change to ``TICKETS`` without a migration fails here."""
    engine = make_engine(db_url)
    TicketStore(engine).dispose()
    inspector = sa.inspect(engine)
    name = TICKETS.name
    got = {c["name"]: (c["nullable"], c["type"].python_type) for c in inspector.get_columns(name)}
    want = {c.name: (c.nullable, c.type.python_type) for c in TICKETS.columns}
    assert got == want
    assert [c["name"] for c in inspector.get_columns(name)] == [c.name for c in TICKETS.columns]
    assert inspector.get_pk_constraint(name)["constrained_columns"] == ["id"]
    found = inspector.get_indexes(name)
    indexes = {(i["name"], tuple(map(str, i["column_names"]))) for i in found if not i["unique"]}
    assert indexes == {(i.name, tuple(c.name for c in i.columns)) for i in TICKETS.indexes}
    # a unique column is a constraint on one database and a unique index on another
    unique = {tuple(map(str, u["column_names"])) for u in inspector.get_unique_constraints(name)}
    unique |= {tuple(map(str, i["column_names"])) for i in found if i["unique"]}
    assert unique == {("seq",)}
    engine.dispose()


# ---- concurrency -----------------------------------------------------------------------------


def test_ids_are_unique_when_threads_open_tickets_at_once(db_url: str) -> None:
    """Eight threads, each with its own store (its own engine, as separate processes would
    have), start together and open five tickets each: forty ids, no gap, no duplicate."""
    TicketStore(db_url).dispose()  # the race here is for numbers, not for the migration
    start = threading.Barrier(THREADS)
    made: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        try:
            with TicketStore(db_url) as store:
                start.wait()
                for i in range(PER_THREAD):
                    t = store.open(user_id=f"u{n}", session_id=f"s{i}", domain="d", reason="r")
                    with lock:
                        made.append(t.id)
        except BaseException as exc:  # reported below, not lost in the thread
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(made) == [ticket_id(n) for n in range(1, THREADS * PER_THREAD + 1)]
    with TicketStore(db_url) as store:
        listed = store.list(limit=100)
    assert [t.id for t in listed] == sorted(made, reverse=True)


def test_of_concurrent_closes_exactly_one_wins(db_url: str) -> None:
    with TicketStore(db_url) as store:
        store.open(user_id="u1", session_id="s1", domain="d", reason="r")
    start = threading.Barrier(THREADS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        with TicketStore(db_url) as store:
            start.wait()
            try:
                store.close("T-000001", f"closed by agent {n}")
                outcome = "closed"
            except TicketClosed as exc:
                outcome = str(exc)
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["closed"] + ["ticket T-000001 is already closed"] * (THREADS - 1)


def test_an_agents_store_scrubs_what_users_typed(db_url: str) -> None:
    """Issue 16: a hand-off ticket's reason, summary and every text of its context go through
    the scrubber an agent gives the store (its memory write pipeline)."""
    phone = "13812345678"

    def scrub(text: str) -> str:
        return text.replace(phone, "[PHONE]")

    with TicketStore(db_url, scrub=scrub) as s:
        t = s.open(
            user_id="u1",
            session_id="s1",
            domain="ecommerce",
            reason=f"error: 回电{phone}",
            summary=f"手机{phone}",
            context={"query": f"手机{phone}", "args": {"phone": phone, "n": 1}},
        )
        got = s.get(t.id)
        with s.engine.connect() as conn:
            rows = "".join(
                str(tuple(r)) for r in conn.exec_driver_sql("SELECT * FROM skill_ticket")
            )
    assert got is not None
    assert (got.reason, got.summary) == ("error: 回电[PHONE]", "手机[PHONE]")
    assert got.context == {"query": "手机[PHONE]", "args": {"phone": "[PHONE]", "n": 1}}
    assert phone not in rows
