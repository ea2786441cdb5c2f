"""The trace store on SQLite and, when a server is reachable, PostgreSQL: round trips, tenants,
order and filters, forgetting a user, retention, refusals that leave nothing behind, and the
migration."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa

from charter.goals.store import GoalStore
from charter.store.migrations import SCHEMA_TABLE, make_engine, schema_versions
from charter.traces.migrations import COMPONENT
from charter.traces.model import Trace, TraceStep
from charter.traces.store import STEPS, TRACES, TraceExists, TraceStore
from tests.support.traces import RECALL, T0, trace


def ids(traces: list[Trace]) -> list[str]:
    return [t.id for t in traces]


def test_a_trace_comes_back_as_it_was_saved(db_url: str) -> None:
    odd = TraceStep(
        "skill",
        1 / 3,  # every bit of a float survives, on both databases
        1e-6,
        {"args": {"年份": [2020, 2023], "nested": {"z": 1, "a": None}}},
        {"error": "TimeoutError: after 2.0s", "ok": False, "score": 0.72},
        "fallback: degrade_to_faq",
    )
    saved = [
        trace("tr-1", steps=(RECALL, odd), reply="第一行\n第二行", verdict="escalate"),
        trace("tr-2", steps=(), tenant="acme", started_at=T0.replace(microsecond=123456)),
    ]
    with TraceStore(db_url) as store:
        for t in saved:
            store.save(t)
    with TraceStore(db_url) as store:  # another process, as far as the data can tell
        assert store.get("tr-1") == saved[0]
        assert store.get("tr-2", tenant="acme") == saved[1]
        got = store.get("tr-1")
        assert got is not None
        # keys keep the order they were written in, on PostgreSQL too
        assert list(got.steps[1].inputs["args"]["nested"]) == ["z", "a"]


def test_tenants_see_only_their_own_traces(db_url: str) -> None:
    with TraceStore(db_url) as store:
        store.save(trace("tr-none"))
        store.save(trace("tr-acme", tenant="acme"))
        store.save(trace("tr-beta", tenant="beta", minutes=1))
        assert store.get("tr-acme", tenant="acme") is not None
        assert store.get("tr-acme", tenant="beta") is None
        assert store.get("tr-acme") is None  # no tenant given: fails closed
        assert store.get("tr-none", tenant="acme") is None
        assert store.get("tr-none") is not None
        assert ids(store.list()) == ["tr-none"]
        assert ids(store.list(tenant="acme")) == ["tr-acme"]
        assert ids(store.list(user_id="u1", tenant="beta")) == ["tr-beta"]


@pytest.fixture
def filled(db_url: str) -> str:
    with TraceStore(db_url) as store:
        # saved out of order; tr-3 and tr-4 start in the same microsecond: the id breaks the tie
        store.save(trace("tr-3", minutes=2, session="s2"))
        store.save(trace("tr-1", minutes=0))
        store.save(trace("tr-5", minutes=3, user="u2", session="s9"))
        store.save(trace("tr-4", minutes=2, session="s2"))
        store.save(trace("tr-2", minutes=1))
    return db_url


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ({}, ["tr-5", "tr-4", "tr-3", "tr-2", "tr-1"]),
        ({"limit": 2}, ["tr-5", "tr-4"]),
        ({"user_id": "u1"}, ["tr-4", "tr-3", "tr-2", "tr-1"]),
        ({"session_id": "s2"}, ["tr-4", "tr-3"]),
        ({"user_id": "u1", "session_id": "s1", "limit": 1}, ["tr-2"]),
        ({"user_id": "u2", "session_id": "s1"}, []),
        ({"user_id": "nobody"}, []),
    ],
)
def test_list_is_newest_first(filled: str, query: dict[str, object], want: list[str]) -> None:
    with TraceStore(filled) as store:
        got = store.list(**query)  # type: ignore[arg-type]
    assert ids(got) == want
    assert all(t.steps == (trace("x").steps) for t in got)  # steps come with each trace


def test_a_limit_below_one_is_refused(filled: str) -> None:
    with TraceStore(filled) as store, pytest.raises(ValueError, match="at least 1, got 0"):
        store.list(limit=0)


def step_rows(store: TraceStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(STEPS)).scalar_one())


def test_delete_user_forgets_a_user_in_one_tenant(filled: str) -> None:
    with TraceStore(filled) as store:
        store.save(trace("tr-acme", tenant="acme"))
        assert step_rows(store) == 12
        assert store.delete_user("u1") == 4
        assert ids(store.list()) == ["tr-5"]
        assert ids(store.list(tenant="acme")) == ["tr-acme"]  # another tenant's u1 stays
        assert step_rows(store) == 4  # the steps went with their traces
        assert store.delete_user("u1", tenant="acme") == 1
        assert store.delete_user("u1") == 0


def test_prune_removes_what_started_before_the_cut_off(filled: str) -> None:
    with TraceStore(filled) as store:
        store.save(trace("tr-acme", tenant="acme", minutes=0.5))
        assert store.prune(T0 + timedelta(minutes=2)) == 3  # tr-1, tr-acme, tr-2; not tr-3
        assert ids(store.list()) == ["tr-5", "tr-4", "tr-3"]
        assert store.list(tenant="acme") == []
        assert step_rows(store) == 6
        naive = (T0 + timedelta(minutes=3)).replace(tzinfo=None)  # read as UTC
        assert store.prune(naive) == 2
        assert store.prune(T0) == 0


def test_an_id_is_saved_once(db_url: str) -> None:
    with TraceStore(db_url) as store:
        store.save(trace("tr-1"))
        with pytest.raises(TraceExists, match="trace tr-1 has been saved already"):
            store.save(trace("tr-1", reply="another"))
        assert store.get("tr-1") == trace("tr-1")


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ({"blob": b"raw"}, "bytes is not JSON-serialisable"),
        ({"x": object()}, "object is not JSON-serialisable"),
    ],
)
def test_a_step_json_cannot_hold_saves_nothing(
    db_url: str, outputs: dict[str, object], message: str
) -> None:
    bad = trace("tr-bad", steps=(RECALL, TraceStep("skill", 1.0, 1.0, {}, outputs)))
    with TraceStore(db_url) as store:
        with pytest.raises(ValueError, match=f"trace tr-bad, step 'skill': .*{message}"):
            store.save(bad)
        assert store.get("tr-bad") is None
        assert step_rows(store) == 0


def test_tuples_and_enums_in_a_hand_made_trace_are_stored_as_json(db_url: str) -> None:
    made = trace("tr-1", steps=(TraceStep("plan", 0.0, 1.0, {"goals": ("a", "b")}, {}),))
    with TraceStore(db_url) as store:
        store.save(made)
        got = store.get("tr-1")
    assert got == replace(made, steps=(TraceStep("plan", 0.0, 1.0, {"goals": ["a", "b"]}, {}),))


# ---- the migration ---------------------------------------------------------------------------


def test_a_shared_engine_holds_goals_and_traces(db_url: str) -> None:
    GoalStore(db_url).close()
    engine = make_engine(db_url)
    with TraceStore(engine) as store:
        store.save(trace("tr-1"))
    TraceStore(engine).dispose()  # a second open applies nothing
    assert schema_versions(engine, COMPONENT) == [1]
    assert schema_versions(engine, "goals") == [1]
    with engine.connect() as conn:  # the shared engine was left open by dispose
        query = f"SELECT version, name FROM {SCHEMA_TABLE} WHERE component = 'traces'"
        assert [tuple(r) for r in conn.execute(sa.text(query))] == [(1, "trace, trace_step")]
    engine.dispose()


@pytest.mark.parametrize("table", [TRACES, STEPS], ids=lambda t: t.name)
def test_the_migrated_schema_is_what_store_py_declares(db_url: str, table: sa.Table) -> None:
    """A change to ``TRACES`` or ``STEPS`` without a migration fails here."""
    engine = make_engine(db_url)
    TraceStore(engine).dispose()
    inspector = sa.inspect(engine)
    got = {
        c["name"]: (c["nullable"], c["type"].python_type) for c in inspector.get_columns(table.name)
    }
    assert got == {c.name: (c.nullable, c.type.python_type) for c in table.columns}
    assert [c["name"] for c in inspector.get_columns(table.name)] == [c.name for c in table.columns]
    pk = inspector.get_pk_constraint(table.name)["constrained_columns"]
    assert pk == [c.name for c in table.primary_key.columns]
    indexes = {
        (i["name"], tuple(map(str, i["column_names"]))) for i in inspector.get_indexes(table.name)
    }
    assert indexes == {(i.name, tuple(c.name for c in i.columns)) for i in table.indexes}
    fks = {
        (tuple(f["constrained_columns"]), f["referred_table"])
        for f in inspector.get_foreign_keys(table.name)
    }
    assert fks == {((fk.parent.name,), fk.column.table.name) for fk in table.foreign_keys}
    engine.dispose()
