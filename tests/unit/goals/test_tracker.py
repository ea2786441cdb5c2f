"""Planner and store together, turn after turn, on a fake clock: splits, questions and answers,
corrections, cancellations, inheritance through completion, the sweeper, the hook."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.specs.goals import GoalsSpec
from charter.contracts.events import GoalTransition
from charter.contracts.registry import Registry
from charter.goals.store import GoalStore
from charter.goals.sweeper import sweep
from charter.goals.tracker import GoalTracker

ROOT = Path(__file__).resolve().parents[3]
TRAVEL = ROOT / "tests" / "fixtures" / "goals" / "travel"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 7, 9, 0, tzinfo=UTC)  # a Wednesday

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)


@pytest.fixture(scope="module")
def spec(registry: Registry) -> GoalsSpec:
    pack, diags = compile_path(TRAVEL, registry, cache_dir=None)
    assert pack is not None and pack.goals is not None, diags
    return pack.goals


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def events() -> list[GoalTransition]:
    return []


@pytest.fixture
def store(goal_sqlite_url: str, clock: Clock, events: list[GoalTransition]) -> Iterator[GoalStore]:
    with GoalStore(goal_sqlite_url, on_transition=events.append, clock=clock) as s:
        yield s


@pytest.fixture
def tracker(spec: GoalsSpec, registry: Registry, store: GoalStore, clock: Clock) -> GoalTracker:
    return GoalTracker(spec, registry, store, clock=clock)


def statuses(store: GoalStore) -> list[tuple[str, str, str]]:
    return [(g.intent, g.status, g.description) for g in store.tree("u1", "s1")]


def test_a_conversation(tracker: GoalTracker, store: GoalStore, clock: Clock) -> None:
    turn = tracker.handle("u1", "s1", "帮我订机票，顺便查下国贸附近评分4.5以上的酒店")
    assert turn.questions == ("请问您哪天出发？",)
    assert statuses(store) == [
        ("root", "active", "差旅安排"),
        ("flight-booking", "pending", "预订？从？到？的机票"),
        ("hotel-search", "active", "查询国贸附近评分4.5以上的酒店，入住？"),
    ]
    flight = store.tree("u1", "s1")[1]

    clock.advance(1)
    turn = tracker.handle("u1", "s1", "下周二")
    assert turn.questions == ("请问从哪个城市出发？",)
    assert store.context(flight.id)["date"] == "2026-01-13"

    clock.advance(1)
    tracker.handle("u1", "s1", "从上海到北京")
    assert store.get(flight.id).status == "active"  # type: ignore[union-attr]
    # the answers are in the description too: the prompt's task line names them
    assert store.get(flight.id).description == "预订2026-01-13从上海到北京的机票"  # type: ignore[union-attr]

    clock.advance(1)
    turn = tracker.handle("u1", "s1", "改成周五出发")
    assert [(u.slot, u.value) for u in turn.plan.updates] == [("date", "2026-01-09")]
    assert store.context(flight.id)["date"] == "2026-01-09"
    assert store.get(flight.id).description == "预订2026-01-09从上海到北京的机票"  # type: ignore[union-attr]
    assert len(store.tree("u1", "s1")) == 3  # no new goal

    clock.advance(1)
    tracker.handle("u1", "s1", "酒店不用了")
    assert [g.status for g in store.tree("u1", "s1")] == ["active", "active", "aborted"]
    hotel = store.tree("u1", "s1")[2]
    assert [(h.from_status, h.to_status, h.actor) for h in store.history(hotel.id)] == [
        (None, "pending", "agent"),
        ("pending", "active", "agent"),
        ("active", "aborted", "user"),
    ]


def test_completing_a_sub_goal_hands_its_result_to_later_goals(
    tracker: GoalTracker, store: GoalStore
) -> None:
    tracker.handle("u1", "s1", "订下周二从上海到北京的机票，再租辆车")
    root, flight, car = store.tree("u1", "s1")
    assert store.complete(flight.id, {"flight_no": "MU5101"}, actor="agent", trigger="booked").ok
    assert store.context(car.id)["flight_no"] == "MU5101"
    turn = tracker.handle("u1", "s1", "再订个国贸附近的酒店")
    hotel = store.get(turn.created["n1"])
    assert hotel is not None and hotel.parent_id == root.id
    assert store.context(hotel.id)["flight_no"] == "MU5101"


def test_the_sweeper_aborts_what_stayed_active_too_long(
    tracker: GoalTracker, store: GoalStore, clock: Clock
) -> None:
    tracker.handle("u1", "s1", "订下周二从上海到北京的机票")  # flight timeout 15m
    clock.advance(15)
    assert sweep(store, clock.now) == []
    clock.advance(1)
    (result,) = sweep(store, clock.now)
    assert result.ok and result.reason == "timeout: active 960s > 900s"
    assert [g.status for g in store.tree("u1", "s1")] == ["aborted"]


def test_every_transition_reaches_the_hook_once(
    tracker: GoalTracker, store: GoalStore, events: list[GoalTransition]
) -> None:
    tracker.handle("u1", "s1", "查下北京的天气")
    tracker.handle("u1", "s1", "算了，取消吧")
    assert [(e.intent, e.from_status, e.to_status, e.actor) for e in events] == [
        ("weather", None, "pending", "agent"),
        ("weather", "pending", "active", "agent"),
        ("weather", "active", "aborted", "user"),
    ]


def test_a_split_awaiting_confirmation(
    spec: GoalsSpec, registry: Registry, store: GoalStore, clock: Clock
) -> None:
    from dataclasses import replace

    tracker = GoalTracker(replace(spec, confirm_split_over=1), registry, store, clock=clock)
    turn = tracker.handle("u1", "s1", "租辆车，再问下签证")
    assert turn.confirm == "检测到您可能需要同时处理2件事：租车、签证咨询，是否继续？（Y/N）"
    assert [g.status for g in store.tree("u1", "s1")] == ["active", "pending", "pending"]
    tracker.handle("u1", "s1", "好的")
    assert [g.status for g in store.tree("u1", "s1")] == ["active", "active", "active"]
