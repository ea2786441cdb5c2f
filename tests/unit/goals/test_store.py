"""The goal store: transitions only along the table, each a compare-and-set written with its
history row, the hook once per transition after the commit, results handed up to the parent.

Tests taking ``goal_db_url`` run on SQLite and on PostgreSQL (skipped when unreachable)."""

from __future__ import annotations

import itertools
import logging
import re
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from charter.compile.specs.goal_states import STATUSES, Status
from charter.config.settings import PluginSettings
from charter.contracts.events import GoalTransition
from charter.goals.store import GoalNotFound, GoalStore, TransitionResult
from charter.goals.tables import GOAL_TREE, Goal
from charter.plugins.hookspecs import hookimpl
from charter.plugins.host import PluginHost, make_plugin_manager
from charter.store.prepared import Prepared
from tests.support.goals import T0, FakeClock, goal, status

# pinned here on purpose: a change to states.TRANSITIONS must show up as a failing test
ALLOWED = {
    ("pending", "active"),
    ("pending", "aborted"),
    ("active", "completed"),
    ("active", "aborted"),
    ("active", "pending"),
    ("completed", "aborted"),
}
PATH_TO: dict[str, list[Status]] = {
    "pending": [],
    "active": ["active"],
    "completed": ["active", "completed"],
    "aborted": ["aborted"],
}


def rows(store: GoalStore, goal_id: str) -> list[tuple[str | None, str, str, str, datetime]]:
    return [(h.from_status, h.to_status, h.actor, h.trigger, h.at) for h in store.history(goal_id)]


def put_in(store: GoalStore, goal_id: str, status: str) -> None:
    store.create("trip", user_id="u1", session_id="s1", goal_id=goal_id)
    for step in PATH_TO[status]:
        assert store.transition(goal_id, step, actor="agent", trigger="setup").ok


def test_the_pinned_table_is_states_transitions() -> None:
    from charter.compile.specs.goal_states import TRANSITIONS

    assert {(f, t) for f, tos in TRANSITIONS.items() for t in tos} == ALLOWED


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(STATUSES, STATUSES)))
def test_every_pair_is_allowed_or_refused_with_a_reason(
    store: GoalStore, clock: FakeClock, events: list[GoalTransition], frm: Status, to: Status
) -> None:
    put_in(store, "g", frm)
    before = rows(store, "g")
    events.clear()
    clock.advance(60)
    result = store.transition("g", to, actor="user", trigger="because")
    now = goal(store, "g")
    if (frm, to) in ALLOWED:
        assert result == TransitionResult(True, "g", frm, to, "because")
        assert now.status == to
        assert now.updated_at == T0 + timedelta(seconds=60)
        assert rows(store, "g") == [*before, (frm, to, "user", "because", clock.now)]
        assert events == [
            GoalTransition("g", "trip", frm, to, "user", "because", "u1", "s1", clock.now)
        ]
    else:
        assert result == TransitionResult(False, "g", frm, to, f"invalid transition {frm} -> {to}")
        assert now.status == frm
        assert now.updated_at == T0
        assert rows(store, "g") == before
        assert events == []


def test_create_writes_the_goal_its_slots_and_a_history_row(
    store: GoalStore, events: list[GoalTransition]
) -> None:
    created = store.create(
        "trip",
        user_id="u1",
        session_id="s1",
        description="上海出差三天",
        slots={"city": "上海"},
        timeout_s=900,
        goal_id="g-trip",
    )
    assert created == Goal(
        id="g-trip",
        parent_id=None,
        root_id="g-trip",
        depth=0,
        kind="root",
        intent="trip",
        description="上海出差三天",
        status="pending",
        user_id="u1",
        session_id="s1",
        timeout_s=900,
        created_at=T0,
        updated_at=T0,
        activated_at=None,
    )
    assert store.get("g-trip") == created
    assert store.context("g-trip") == {"city": "上海"}
    assert rows(store, "g-trip") == [(None, "pending", "agent", "created", T0)]
    assert events == [
        GoalTransition("g-trip", "trip", None, "pending", "agent", "created", "u1", "s1", T0)
    ]


def test_sub_goals_know_their_depth_kind_and_root(store: GoalStore) -> None:
    store.create("trip", user_id="u1", session_id="s1", goal_id="r")
    store.create("hotel", user_id="u1", session_id="s1", parent_id="r", goal_id="s")
    leaf = store.create("room", user_id="u1", session_id="s1", parent_id="s", goal_id="l")
    assert (leaf.parent_id, leaf.root_id, leaf.depth, leaf.kind) == ("s", "r", 2, "leaf")
    assert [(g.id, g.depth, g.kind) for g in store.tree("u1")] == [
        ("r", 0, "root"),
        ("s", 1, "sub"),
        ("l", 2, "leaf"),
    ]


def test_generated_ids_are_ulids_in_creation_order(store: GoalStore) -> None:
    ids = [store.create("x", user_id="u1", session_id="s1").id for _ in range(20)]
    assert all(re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", i) for i in ids), ids
    assert ids == sorted(ids)
    # the fake clock stamps them all alike: creation order still holds
    assert [g.id for g in store.tree("u1", "s1")] == ids


def test_create_refuses_bad_requests(store: GoalStore) -> None:
    store.create("trip", user_id="u1", session_id="s1", goal_id="r")
    with pytest.raises(GoalNotFound):
        store.create("hotel", user_id="u1", session_id="s1", parent_id="nope")
    with pytest.raises(ValueError, match="a sub-goal must belong to the same ones"):
        store.create("hotel", user_id="u2", session_id="s1", parent_id="r")
    with pytest.raises(ValueError, match="cannot create goal 'r'"):
        store.create("trip", user_id="u1", session_id="s1", goal_id="r")
    with pytest.raises(ValueError, match="unknown actor 'planner'"):
        store.create("trip", user_id="u1", session_id="s1", actor="planner")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slots must be JSON-serialisable"):
        store.create("trip", user_id="u1", session_id="s1", slots={"when": T0})
    assert [g.id for g in store.tree("u1")] == ["r"]


def test_unknown_goal_status_and_actor_are_refused(store: GoalStore) -> None:
    put_in(store, "g", "pending")
    assert store.transition("nope", "active", actor="agent", trigger="t") == TransitionResult(
        False, "nope", None, "active", "no such goal"
    )
    assert store.transition("g", "done", actor="agent", trigger="t") == TransitionResult(  # type: ignore[arg-type]
        False, "g", None, "done", "unknown status 'done'"
    )
    assert store.transition("g", "active", actor="bot", trigger="t") == TransitionResult(  # type: ignore[arg-type]
        False, "g", None, "active", "unknown actor 'bot'"
    )
    assert rows(store, "g") == [(None, "pending", "agent", "created", T0)]


def test_expect_refuses_a_goal_that_moved_on(store: GoalStore) -> None:
    put_in(store, "g", "completed")
    result = store.transition("g", "aborted", actor="sweeper", trigger="t", expect="active")
    assert result == TransitionResult(
        False, "g", "completed", "aborted", "expected active, found completed"
    )
    assert status(store, "g") == "completed"


def test_activation_time_is_the_last_activation(store: GoalStore, clock: FakeClock) -> None:
    put_in(store, "g", "pending")
    clock.advance(10)
    store.transition("g", "active", actor="agent", trigger="go")
    clock.advance(5)
    store.transition("g", "pending", actor="agent", trigger="slot lost")
    backed_off = goal(store, "g")
    assert (backed_off.updated_at, backed_off.activated_at) == (
        T0 + timedelta(seconds=15),
        T0 + timedelta(seconds=10),
    )
    clock.advance(5)
    store.transition("g", "active", actor="agent", trigger="go again")
    assert goal(store, "g").activated_at == T0 + timedelta(seconds=20)
    assert store.active("u1", "s1") == [store.get("g")]


def test_a_lost_compare_and_set_changes_nothing(
    store: GoalStore, events: list[GoalTransition], monkeypatch: pytest.MonkeyPatch
) -> None:
    put_in(store, "g", "active")
    events.clear()
    t = GOAL_TREE
    # the read says "pending" (another writer's change not seen yet); the row says "active"
    stale = sa.select(
        sa.literal("pending").label("status"),
        t.c.parent_id,
        t.c.intent,
        t.c.user_id,
        t.c.session_id,
    ).where(t.c.id == sa.bindparam("gid"))
    monkeypatch.setattr(store, "_sel_move", Prepared(stale, store.engine.dialect))
    before = rows(store, "g")
    result = store.transition("g", "active", actor="agent", trigger="t")
    assert result == TransitionResult(
        False, "g", "pending", "active", "lost race: no longer pending"
    )
    assert status(store, "g") == "active"
    assert rows(store, "g") == before
    assert events == []


def test_a_database_error_is_a_refusal_and_rolls_back(store: GoalStore) -> None:
    put_in(store, "g", "pending")
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE goal_history"))
    result = store.transition("g", "active", actor="agent", trigger="t")
    assert (result.ok, result.from_status, result.reason.split(":")[0]) == (
        False,
        "pending",
        "database error",
    )
    assert status(store, "g") == "pending"  # the UPDATE was rolled back


def test_refusals_are_logged(goal_sqlite_url: str, caplog: pytest.LogCaptureFixture) -> None:
    with GoalStore(goal_sqlite_url, clock=FakeClock()) as store:
        put_in(store, "g", "completed")
        with caplog.at_level(logging.INFO, logger="charter.goals.store"):
            store.transition("g", "active", actor="agent", trigger="t")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "goal g: completed -> active refused: invalid transition completed -> active")
    ]


def host_of(plugin: object) -> PluginHost:
    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    pm.distributions["p"] = ("charter-p", "1.0")
    pm.register(plugin, name="p")
    host = PluginHost(pm, PluginSettings())
    assert host.diagnostics == []
    return host


def test_the_plugin_hook_sees_each_transition_once_after_the_commit(goal_sqlite_url: str) -> None:
    seen: list[tuple[GoalTransition, str]] = []

    class P:
        @hookimpl
        def charter_on_goal_transition(self, event: GoalTransition) -> None:
            # committed: a fresh connection already reads the new status
            seen.append((event, status_in_db(event.goal_id)))

    host = host_of(P())
    store = GoalStore(
        goal_sqlite_url,
        clock=FakeClock(),
        on_transition=lambda e: host.notify("charter_on_goal_transition", e),
    )

    def status_in_db(goal_id: str) -> str:
        with sa.create_engine(goal_sqlite_url).connect() as conn:
            query = sa.select(GOAL_TREE.c.status).where(GOAL_TREE.c.id == goal_id)
            return str(conn.execute(query).scalar_one())

    with store:
        store.create("flight", user_id="u1", session_id="s1", goal_id="g")
        store.transition("g", "active", actor="agent", trigger="slots filled")
        store.transition("g", "active", actor="agent", trigger="again")  # refused: no event
        store.complete("g", {"date": "2024-05-03"}, actor="agent", trigger="booked")
        store.complete("g", {"date": "2024-05-04"}, actor="agent", trigger="again")  # refused
    assert seen == [
        (
            GoalTransition("g", "flight", None, "pending", "agent", "created", "u1", "s1", T0),
            "pending",
        ),
        (
            GoalTransition(
                "g", "flight", "pending", "active", "agent", "slots filled", "u1", "s1", T0
            ),
            "active",
        ),
        (
            GoalTransition("g", "flight", "active", "completed", "agent", "booked", "u1", "s1", T0),
            "completed",
        ),
    ]


def test_a_raising_hook_is_logged_and_isolated(
    goal_sqlite_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def hook(event: GoalTransition) -> None:
        calls.append(event.to_status)
        raise RuntimeError("listener down")

    with (
        caplog.at_level(logging.ERROR, logger="charter.goals.store"),
        GoalStore(goal_sqlite_url, clock=FakeClock(), on_transition=hook) as store,
    ):
        store.create("flight", user_id="u1", session_id="s1", goal_id="g")
        first = store.transition("g", "active", actor="agent", trigger="go")
        second = store.transition("g", "completed", actor="agent", trigger="done")
        assert (first.ok, second.ok) == (True, True)
        assert [h.to_status for h in store.history("g")] == ["pending", "active", "completed"]
    assert calls == ["pending", "active", "completed"]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "on_transition raised for goal g (None -> pending)"),
        ("ERROR", "on_transition raised for goal g (pending -> active)"),
        ("ERROR", "on_transition raised for goal g (active -> completed)"),
    ]
    assert "RuntimeError: listener down" in caplog.text


def trip(store: GoalStore) -> None:
    store.create(
        "trip", user_id="u1", session_id="s1", slots={"city": "上海", "date": "?"}, goal_id="trip"
    )
    store.create("flight", user_id="u1", session_id="s1", parent_id="trip", goal_id="flight")
    store.create(
        "hotel",
        user_id="u1",
        session_id="s1",
        parent_id="trip",
        slots={"nights": 2},
        goal_id="hotel",
    )
    store.create("room", user_id="u1", session_id="s1", parent_id="hotel", goal_id="room")
    store.transition("flight", "active", actor="agent", trigger="go")


def test_a_completed_sub_goal_hands_its_result_to_its_siblings(store: GoalStore) -> None:
    trip(store)
    assert store.context("hotel") == {"city": "上海", "date": "?", "nights": 2}
    result = store.complete(
        "flight", {"date": "2024-05-03", "flight_no": "MU5101"}, actor="agent", trigger="booked"
    )
    assert result == TransitionResult(True, "flight", "active", "completed", "booked")
    # the parent's own slot "date" wins over what it inherited; the sibling sees the flight number
    assert store.context("trip") == {"city": "上海", "date": "?", "flight_no": "MU5101"}
    assert store.context("hotel") == {
        "city": "上海",
        "date": "?",
        "flight_no": "MU5101",
        "nights": 2,
    }
    assert store.context("room") == {
        "city": "上海",
        "date": "?",
        "flight_no": "MU5101",
        "nights": 2,
    }


def test_inherited_slots_reach_a_sibling_when_no_one_overrides_them(store: GoalStore) -> None:
    store.create("trip", user_id="u1", session_id="s1", slots={"city": "上海"}, goal_id="trip")
    store.create("flight", user_id="u1", session_id="s1", parent_id="trip", goal_id="flight")
    store.create("hotel", user_id="u1", session_id="s1", parent_id="trip", goal_id="hotel")
    store.transition("flight", "active", actor="agent", trigger="go")
    store.complete("flight", {"date": "2024-05-03"}, actor="agent", trigger="booked")
    assert store.context("hotel") == {"city": "上海", "date": "2024-05-03"}
    store.set_slots("hotel", {"date": "2024-05-04"})  # the hotel's own slot wins
    assert store.context("hotel") == {"city": "上海", "date": "2024-05-04"}


def test_results_of_two_siblings_are_both_kept(store: GoalStore) -> None:
    trip(store)
    store.transition("hotel", "active", actor="agent", trigger="go")
    store.complete("flight", {"flight_no": "MU5101"}, actor="agent", trigger="booked")
    store.complete("hotel", {"hotel": "和平饭店"}, actor="agent", trigger="booked")
    assert store.context("trip") == {
        "city": "上海",
        "date": "?",
        "flight_no": "MU5101",
        "hotel": "和平饭店",
    }


def test_a_refused_completion_hands_nothing_up(store: GoalStore) -> None:
    trip(store)
    assert store.complete("hotel", {"hotel": "x"}, actor="agent", trigger="t") == TransitionResult(
        False, "hotel", "pending", "completed", "invalid transition pending -> completed"
    )
    bad = store.complete("flight", {"at": T0}, actor="agent", trigger="t")
    assert (bad.ok, bad.reason.split(":")[0]) == (False, "result must be JSON-serialisable")
    assert store.context("trip") == {"city": "上海", "date": "?"}
    assert status(store, "flight") == "active"


def test_set_slots_merges_and_returns_them_all(store: GoalStore) -> None:
    store.create("trip", user_id="u1", session_id="s1", slots={"city": "上海"}, goal_id="g")
    assert store.set_slots("g", {"nights": 2}) == {"city": "上海", "nights": 2}
    assert store.set_slots("g", {"city": "北京"}) == {"city": "北京", "nights": 2}
    assert store.context("g") == {"city": "北京", "nights": 2}
    with pytest.raises(GoalNotFound):
        store.set_slots("nope", {})
    with pytest.raises(GoalNotFound):
        store.context("nope")


def test_tree_and_active_are_per_user_and_session_in_creation_order(
    store: GoalStore, clock: FakeClock
) -> None:
    for gid, user, session in [
        ("b", "u1", "s1"),
        ("a", "u1", "s2"),
        ("c", "u2", "s1"),
        ("d", "u1", "s1"),
    ]:
        clock.advance(1)
        store.create("x", user_id=user, session_id=session, goal_id=gid)
    store.transition("d", "active", actor="agent", trigger="t")
    assert [g.id for g in store.tree("u1")] == ["b", "a", "d"]
    assert [g.id for g in store.tree("u1", "s1")] == ["b", "d"]
    assert [g.id for g in store.active("u1", "s1")] == ["d"]
    assert store.active("u1", "s2") == [] and store.tree("nobody") == []
    assert store.get("nope") is None and store.history("nope") == []


def test_a_naive_clock_is_taken_as_utc(goal_sqlite_url: str) -> None:
    with GoalStore(goal_sqlite_url, clock=lambda: datetime(2024, 5, 1, 10, 0)) as store:
        assert store.create("x", user_id="u", session_id="s").created_at == T0


def test_bookkeeping_keys_are_a_goals_own(store: GoalStore) -> None:
    """A balance query opened under a transfer that awaits its yes does not await one: the
    ``_`` keys are not inherited, the slots are."""
    store.create(
        "transfer",
        user_id="u1",
        session_id="s1",
        slots={"payee": "王芳", "_awaiting": True},
        goal_id="transfer",
    )
    store.create("balance", user_id="u1", session_id="s1", parent_id="transfer", goal_id="balance")
    assert store.context("balance") == {"payee": "王芳"}
    assert store.context("transfer") == {"payee": "王芳", "_awaiting": True}
    held = store.session("u1", "s1")
    assert held.context("balance") == {"payee": "王芳"}
    assert held.context("transfer") == {"payee": "王芳", "_awaiting": True}
