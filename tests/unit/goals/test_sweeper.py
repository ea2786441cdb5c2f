"""The sweeper aborts goals active longer than their timeout, and only those (seed 000 §4.3.2).

Time is a fake clock throughout; the one test of the background thread waits for the pass it
needs through an event (with a generous deadlock guard), never for a duration."""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

import pytest

from charter.compile.specs.goal_states import Actor, Status
from charter.contracts.events import GoalTransition
from charter.goals.store import GoalStore, TransitionResult
from charter.goals.sweeper import Sweeper, sweep, timeout_trigger
from charter.goals.tables import Goal
from tests.support.goals import T0, FakeClock, status

GUARD_S = 30.0  # only against a hang; the test never depends on how long anything takes


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def activate(store: GoalStore, goal_id: str, timeout_s: int | None = 900) -> None:
    store.create("hotel", user_id="u1", session_id="s1", timeout_s=timeout_s, goal_id=goal_id)
    assert store.transition(goal_id, "active", actor="agent", trigger="go").ok


def test_the_trigger_says_how_long_against_what() -> None:
    assert timeout_trigger(1800.9, 900) == "timeout: active 1800s > 900s"
    assert timeout_trigger(901.0, 900) == "timeout: active 901s > 900s"


def test_a_goal_just_under_or_at_its_timeout_stays_active(store: GoalStore) -> None:
    activate(store, "g")
    assert sweep(store, at(899)) == []
    assert sweep(store, at(900)) == []  # "longer than": exactly the timeout is not yet
    assert status(store, "g") == "active"


def test_a_goal_just_over_its_timeout_is_aborted_and_the_history_says_why(
    store: GoalStore, events: list[GoalTransition]
) -> None:
    activate(store, "g")
    events.clear()
    assert sweep(store, at(901)) == [
        TransitionResult(True, "g", "active", "aborted", "timeout: active 901s > 900s")
    ]
    assert status(store, "g") == "aborted"
    last = store.history("g")[-1]
    assert (last.from_status, last.to_status, last.actor, last.trigger, last.at) == (
        "active",
        "aborted",
        "sweeper",
        "timeout: active 901s > 900s",
        T0,  # the store's clock stamps the row; the sweep's "now" only decides
    )
    assert events == [
        GoalTransition(
            "g",
            "hotel",
            "active",
            "aborted",
            "sweeper",
            "timeout: active 901s > 900s",
            "u1",
            "s1",
            T0,
        )
    ]
    assert sweep(store, at(5000)) == []  # aborted is final: nothing more to do


def test_pending_completed_and_untimed_goals_are_left_alone(store: GoalStore) -> None:
    store.create("flight", user_id="u1", session_id="s1", timeout_s=900, goal_id="pending")
    activate(store, "completed")
    store.transition("completed", "completed", actor="agent", trigger="done")
    activate(store, "untimed", timeout_s=None)
    activate(store, "overdue")
    assert [r.goal_id for r in sweep(store, at(86_400 * 365))] == ["overdue"]
    assert [(g.id, g.status) for g in store.tree("u1")] == [
        ("pending", "pending"),
        ("completed", "completed"),
        ("untimed", "active"),
        ("overdue", "aborted"),
    ]


def test_each_goal_is_measured_from_its_last_activation_against_its_own_timeout(
    store: GoalStore, clock: FakeClock
) -> None:
    activate(store, "short", timeout_s=60)
    activate(store, "long", timeout_s=3600)
    activate(store, "backed-off", timeout_s=60)
    clock.advance(50)
    store.transition("backed-off", "pending", actor="agent", trigger="slot lost")
    clock.advance(50)
    store.transition("backed-off", "active", actor="agent", trigger="go again")
    results = sweep(store, at(120))
    assert [(r.goal_id, r.reason) for r in results] == [("short", "timeout: active 120s > 60s")]
    results = sweep(store, at(200))
    assert [(r.goal_id, r.reason) for r in results] == [
        ("backed-off", "timeout: active 100s > 60s")
    ]


class CompletesMeanwhile:
    """A store where the goal completes between the sweeper's query and its abort."""

    def __init__(self, store: GoalStore) -> None:
        self.store = store

    def overdue(self, now: datetime) -> list[Goal]:
        found = self.store.overdue(now)
        for goal in found:
            self.store.transition(goal.id, "completed", actor="agent", trigger="done at last")
        return found

    def transition(
        self,
        goal_id: str,
        to_status: Status,
        *,
        actor: Actor,
        trigger: str,
        expect: Status | None = None,
    ) -> TransitionResult:
        return self.store.transition(
            goal_id, to_status, actor=actor, trigger=trigger, expect=expect
        )


def test_a_goal_that_completes_meanwhile_stays_completed(store: GoalStore) -> None:
    activate(store, "g")
    assert sweep(CompletesMeanwhile(store), at(901)) == [
        TransitionResult(False, "g", "completed", "aborted", "expected active, found completed")
    ]
    assert status(store, "g") == "completed"


def test_the_sweeper_thread_sweeps_with_its_clock_until_stopped(
    store: GoalStore, clock: FakeClock
) -> None:
    activate(store, "g")
    passes: list[list[TransitionResult]] = []
    aborted = threading.Event()

    def on_sweep(results: list[TransitionResult]) -> None:
        passes.append(results)
        if results:
            aborted.set()

    sweeper = Sweeper(store, interval_s=0.01, clock=clock, on_sweep=on_sweep)
    sweeper.start()
    try:
        assert sweeper.running
        with pytest.raises(RuntimeError, match="already running"):
            sweeper.start()
        clock.advance(901)
        assert aborted.wait(GUARD_S)
    finally:
        sweeper.stop(GUARD_S)
    assert not sweeper.running
    done = [r for results in passes for r in results]
    assert done == [TransitionResult(True, "g", "active", "aborted", "timeout: active 901s > 900s")]
    assert status(store, "g") == "aborted"


class FailsOnce:
    def __init__(self, store: GoalStore) -> None:
        self.store = store
        self.calls = 0

    def overdue(self, now: datetime) -> list[Goal]:
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("database went away")
        return self.store.overdue(now)

    def transition(
        self,
        goal_id: str,
        to_status: Status,
        *,
        actor: Actor,
        trigger: str,
        expect: Status | None = None,
    ) -> TransitionResult:
        return self.store.transition(
            goal_id, to_status, actor=actor, trigger=trigger, expect=expect
        )


def test_a_failing_pass_is_logged_and_the_next_one_runs(
    store: GoalStore, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    activate(store, "g")
    clock.advance(901)
    aborted = threading.Event()
    sweeper = Sweeper(
        FailsOnce(store),
        interval_s=0.01,
        clock=clock,
        on_sweep=lambda r: aborted.set() if r else None,
    )
    with caplog.at_level(logging.ERROR, logger="charter.goals.sweeper"):
        sweeper.start()
        try:
            assert aborted.wait(GUARD_S)
        finally:
            sweeper.stop(GUARD_S)
    assert status(store, "g") == "aborted"
    assert [r.getMessage() for r in caplog.records] == ["goal sweep failed; retrying in 0.01s"]


def test_run_once_and_a_bad_interval(store: GoalStore, clock: FakeClock) -> None:
    activate(store, "g")
    sweeper = Sweeper(store, clock=clock)
    assert sweeper.run_once() == []
    clock.advance(1000)
    assert [r.reason for r in sweeper.run_once()] == ["timeout: active 1000s > 900s"]
    with pytest.raises(ValueError, match="interval_s must be positive, got 0"):
        Sweeper(store, interval_s=0)
