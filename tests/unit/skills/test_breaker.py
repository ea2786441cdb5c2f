"""The per-skill circuit breaker in this process (ARCHITECTURE §8, seed 001 §4.2: three
consecutive calls slower than 2 s degrade the skill): every transition, stale reports, the
probe's lease, clocks that disagree, the registry, and 32 threads racing through one breaker."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from charter.skills.breaker import (
    Admission,
    BreakerOpenError,
    BreakerRegistry,
    BreakerRow,
    BreakerSettings,
    BreakerSnapshot,
    CircuitBreaker,
    LocalBreakerState,
)

T0 = 1000.0
Event = tuple[str, str, str, str]


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Events(list[Event]):
    def __call__(self, name: str, old: str, new: str, reason: str) -> None:
        self.append((name, old, new, reason))  # list.append is atomic: threads may share it


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def breaker(clock: FakeClock, events: Events) -> CircuitBreaker:
    return CircuitBreaker("policy_search", BreakerSettings(), clock=clock, on_transition=events)


def call(b: CircuitBreaker, *, ok: bool = True, elapsed_s: float = 0.1) -> Admission:
    ticket = b.admit()
    b.record(ticket, ok=ok, elapsed_s=elapsed_s)
    return ticket


def open_it(b: CircuitBreaker) -> None:
    for _ in range(b.settings.failures):
        call(b, ok=False)


def refusal(b: CircuitBreaker) -> tuple[str, float]:
    with pytest.raises(BreakerOpenError) as caught:
        b.admit()
    return caught.value.state, caught.value.retry_in_s


# ---- settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"failures": 0}, "failures must be at least 1, got 0"),
        ({"slow_s": 0.0}, "slow_s must be positive, got 0.0"),
        ({"cooldown_s": -1.0}, "cooldown_s cannot be negative, got -1.0"),
        ({"probe_lease_s": 0.0}, "probe_lease_s must be positive, got 0.0"),
    ],
)
def test_settings_are_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        BreakerSettings(**fields)
    assert str(caught.value) == message


def test_the_default_settings_are_the_seeds() -> None:
    s = BreakerSettings()
    assert (s.failures, s.slow_s, s.cooldown_s, s.lease_s) == (3, 2.0, 30.0, 30.0)
    assert BreakerSettings(probe_lease_s=90.0).lease_s == 90.0


# ---- closed -> open ------------------------------------------------------------------------


def test_three_consecutive_failures_open_the_breaker(
    breaker: CircuitBreaker, events: Events
) -> None:
    call(breaker, ok=False)
    call(breaker, ok=False)
    assert (breaker.snapshot().state, breaker.snapshot().strikes, events) == ("closed", 2, [])
    call(breaker, ok=False)
    assert events == [("policy_search", "closed", "open", "3 consecutive failures")]
    assert breaker.snapshot() == BreakerSnapshot(
        name="policy_search",
        state="open",
        strikes=3,
        opened_at=T0,
        retry_in_s=30.0,
        probe_out=False,
        reason="3 consecutive failures",
        settings=BreakerSettings(),
    )


# each call is (ok, elapsed_s); slow means strictly more than slow_s (2 s)
CLOSED_AFTER = [
    ("a success resets the count", [(False, 0.1), (False, 0.1), (True, 0.1), (False, 0.1)], 1),
    ("exactly 2 s is not slow", [(True, 2.0)] * 3, 0),
    ("a fast success between slow calls", [(True, 2.01), (True, 2.5), (True, 0.1), (True, 9)], 1),
    ("strikes accumulate up to the limit", [(False, 0.1), (True, 3.0)], 2),
]


@pytest.mark.parametrize(
    ("calls", "strikes"), [c[1:] for c in CLOSED_AFTER], ids=[c[0] for c in CLOSED_AFTER]
)
def test_calls_that_leave_the_breaker_closed(
    breaker: CircuitBreaker, events: Events, calls: list[tuple[bool, float]], strikes: int
) -> None:
    for ok, elapsed in calls:
        call(breaker, ok=ok, elapsed_s=elapsed)
    assert (breaker.snapshot().state, breaker.snapshot().strikes, events) == ("closed", strikes, [])


OPENING = [
    ("slow", [(True, 2.5)] * 3, "3 consecutive calls slower than 2 s"),
    ("failed and slow counts as failed", [(False, 5.0)] * 3, "3 consecutive failures"),
    (
        "mixed",
        [(False, 0.1), (True, 2.5), (False, 0.1)],
        "3 consecutive failed or slow calls (2 failed, 1 slow)",
    ),
    (
        "after a reset",
        [(True, 2.5), (True, 0.1), (True, 2.5), (True, 3.0), (False, 0.2)],
        "3 consecutive failed or slow calls (1 failed, 2 slow)",
    ),
]


@pytest.mark.parametrize(("calls", "reason"), [c[1:] for c in OPENING], ids=[c[0] for c in OPENING])
def test_strikes_that_open_the_breaker(
    breaker: CircuitBreaker, events: Events, calls: list[tuple[bool, float]], reason: str
) -> None:
    for ok, elapsed in calls:
        call(breaker, ok=ok, elapsed_s=elapsed)
    assert events == [("policy_search", "closed", "open", reason)]
    assert (breaker.snapshot().state, breaker.snapshot().reason) == ("open", reason)


@pytest.mark.parametrize(
    ("ok", "elapsed_s", "reason"),
    [(False, 0.1, "1 failure"), (True, 0.6, "1 call slower than 0.5 s")],
)
def test_a_breaker_of_one_failure(
    clock: FakeClock, ok: bool, elapsed_s: float, reason: str
) -> None:
    b = CircuitBreaker("s", BreakerSettings(failures=1, slow_s=0.5), clock=clock)
    call(b, ok=ok, elapsed_s=elapsed_s)
    assert (b.snapshot().state, b.snapshot().reason) == ("open", reason)


# ---- open, half-open -----------------------------------------------------------------------


def test_an_open_breaker_refuses_with_the_seconds_left(
    breaker: CircuitBreaker, clock: FakeClock
) -> None:
    open_it(breaker)
    clock.now = T0 + 10
    with pytest.raises(BreakerOpenError) as caught:
        breaker.admit()
    err = caught.value
    assert (err.name, err.state, err.retry_in_s) == ("policy_search", "open", 20.0)
    assert str(err) == "skill 'policy_search' unavailable: circuit breaker open"
    assert breaker.snapshot().retry_in_s == 20.0


def test_after_the_cool_down_one_call_probes(
    breaker: CircuitBreaker, clock: FakeClock, events: Events
) -> None:
    open_it(breaker)
    clock.now = T0 + 29.5
    assert refusal(breaker) == ("open", 0.5)
    clock.now = T0 + 30
    assert breaker.snapshot().retry_in_s == 0.0
    assert breaker.admit() == Admission(probe=True, epoch=2)
    assert events[1:] == [("policy_search", "open", "half_open", "cool-down over")]
    snap = breaker.snapshot()
    assert (snap.state, snap.probe_out, snap.retry_in_s, snap.opened_at) == (
        "half_open",
        True,
        30.0,
        T0,
    )


def test_a_second_caller_during_the_probe_is_refused(
    breaker: CircuitBreaker, clock: FakeClock
) -> None:
    open_it(breaker)
    clock.now = T0 + 30
    assert breaker.admit().probe
    clock.now = T0 + 31
    assert refusal(breaker) == ("half_open", 29.0)
    with pytest.raises(BreakerOpenError) as caught:
        breaker.admit()
    assert str(caught.value) == (
        "skill 'policy_search' unavailable: circuit breaker half-open, probe in progress"
    )


def test_a_good_probe_closes_the_breaker(
    breaker: CircuitBreaker, clock: FakeClock, events: Events
) -> None:
    open_it(breaker)
    clock.now = T0 + 30
    probe = breaker.admit()
    breaker.record(probe, ok=True, elapsed_s=1.9)
    assert events[2:] == [("policy_search", "half_open", "closed", "probe succeeded")]
    snap = breaker.snapshot()
    assert (snap.state, snap.strikes, snap.opened_at, snap.probe_out) == ("closed", 0, None, False)
    assert breaker.admit() == Admission(probe=False, epoch=3)
    # the count starts again from nothing
    call(breaker, ok=False)
    call(breaker, ok=False)
    assert breaker.snapshot().state == "closed"


@pytest.mark.parametrize(
    ("ok", "elapsed_s", "reason"),
    [(False, 0.1, "probe failed"), (True, 2.5, "probe slower than 2 s")],
)
def test_a_bad_probe_opens_the_breaker_for_a_new_cool_down(
    breaker: CircuitBreaker,
    clock: FakeClock,
    events: Events,
    ok: bool,
    elapsed_s: float,
    reason: str,
) -> None:
    open_it(breaker)
    clock.now = T0 + 30
    probe = breaker.admit()
    clock.now = T0 + 32
    breaker.record(probe, ok=ok, elapsed_s=elapsed_s)
    assert events[2:] == [("policy_search", "half_open", "open", reason)]
    snap = breaker.snapshot()
    assert (snap.state, snap.strikes, snap.opened_at, snap.retry_in_s, snap.reason) == (
        "open",
        4,
        T0 + 32,
        30.0,
        reason,
    )
    clock.now = T0 + 61.5
    assert refusal(breaker) == ("open", 0.5)
    clock.now = T0 + 62
    assert breaker.admit().probe


# ---- reports that come too late ------------------------------------------------------------


def test_calls_in_flight_when_it_opens_change_nothing(
    breaker: CircuitBreaker, clock: FakeClock, events: Events
) -> None:
    late = [breaker.admit() for _ in range(5)]
    open_it(breaker)
    clock.now = T0 + 10
    for ticket in late[:3]:  # would open it again and restart the cool-down
        breaker.record(ticket, ok=False, elapsed_s=0.1)
    assert (breaker.snapshot().opened_at, breaker.snapshot().strikes) == (T0, 3)
    breaker.record(late[3], ok=True, elapsed_s=0.1)  # would close it without a probe
    assert breaker.snapshot().state == "open"
    clock.now = T0 + 30
    breaker.record(breaker.admit(), ok=True, elapsed_s=0.1)
    breaker.record(late[4], ok=False, elapsed_s=0.1)  # would count against the new run
    assert (breaker.snapshot().state, breaker.snapshot().strikes) == ("closed", 0)
    assert [e[2] for e in events] == ["open", "half_open", "closed"]


def test_a_probe_that_never_reports_is_replaced_after_its_lease(
    clock: FakeClock, events: Events
) -> None:
    b = CircuitBreaker("s", BreakerSettings(probe_lease_s=50.0), clock=clock, on_transition=events)
    open_it(b)
    clock.now = T0 + 30
    lost = b.admit()
    clock.now = T0 + 79
    assert refusal(b) == ("half_open", 1.0)
    clock.now = T0 + 80
    second = b.admit()
    assert (lost, second) == (Admission(True, 2), Admission(True, 3))
    b.record(lost, ok=False, elapsed_s=0.1)  # its process is back, too late to count
    assert b.snapshot().state == "half_open"
    b.record(second, ok=True, elapsed_s=0.1)
    assert [e[1:3] for e in events] == [
        ("closed", "open"),
        ("open", "half_open"),
        ("half_open", "closed"),
    ]


@pytest.mark.parametrize(
    ("now", "outcome"),
    [
        (T0 - 10, ("open", 30.0)),  # another machine's clock, a little behind: wait, at most 30 s
        (T0 - 29.5, ("open", 30.0)),
        (T0 - 30, "probe"),  # stepped back a whole cool-down: it cannot tell, so probe
    ],
)
def test_a_clock_behind_the_opening(
    breaker: CircuitBreaker, clock: FakeClock, now: float, outcome: object
) -> None:
    open_it(breaker)
    clock.now = now
    if outcome == "probe":
        assert breaker.admit().probe
    else:
        assert refusal(breaker) == outcome


# ---- reporting -----------------------------------------------------------------------------


def test_a_failing_transition_hook_is_logged_and_changes_nothing(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    def hook(*_: object) -> None:
        raise RuntimeError("trace sink down")

    b = CircuitBreaker("s", clock=clock, on_transition=hook)
    open_it(b)
    clock.now = T0 + 30
    caplog.clear()  # the opening's failed hook
    with caplog.at_level(logging.INFO, logger="charter.skills.breaker"):
        assert b.admit().probe
    assert [r.getMessage() for r in caplog.records] == [
        "breaker s: open -> half_open (cool-down over)",
        "breaker s: on_transition failed",
    ]
    assert b.snapshot().state == "half_open"


def test_the_hook_may_read_the_breaker(clock: FakeClock) -> None:
    seen: list[str] = []
    b = CircuitBreaker("s", clock=clock, on_transition=lambda *_: seen.append(b.snapshot().state))
    open_it(b)
    assert seen == ["open"]


def test_a_shared_state_needs_a_wall_clock(clock: FakeClock) -> None:
    class Shared(LocalBreakerState):
        wall_clock = True

    with pytest.raises(ValueError, match="needs wall-clock"):
        CircuitBreaker("s", state=Shared(), clock=time.monotonic)
    b = CircuitBreaker("s", state=Shared())
    before = time.time()
    open_it(b)
    after = time.time()
    opened = b.snapshot().opened_at
    assert opened is not None and before <= opened <= after


def test_breakers_sharing_a_state_keep_separate_rows(clock: FakeClock) -> None:
    state = LocalBreakerState()
    a = CircuitBreaker("a", clock=clock, state=state)
    b = CircuitBreaker("b", clock=clock, state=state)
    open_it(a)
    assert (a.snapshot().state, b.snapshot().state) == ("open", "closed")
    assert state.read("a") == BreakerRow("open", 3, 0, 1, T0, None, "3 consecutive failures")


# ---- the registry --------------------------------------------------------------------------


def test_the_registry_makes_one_breaker_per_skill(clock: FakeClock, events: Events) -> None:
    reg = BreakerRegistry(clock=clock, on_transition=events)
    tight = BreakerSettings(failures=1)
    a = reg.get("policy_search", tight)
    assert reg.get("policy_search") is a and a.settings == tight
    b = reg.get("faq")
    assert b.settings == BreakerSettings()
    call(a, ok=False)
    assert [(s.name, s.state) for s in reg.snapshots()] == [
        ("faq", "closed"),
        ("policy_search", "open"),
    ]
    assert events == [("policy_search", "closed", "open", "1 failure")]
    # a reloaded contract: new settings, same state
    reg.get("policy_search", BreakerSettings(failures=5))
    assert (a.settings.failures, a.snapshot().state) == (5, "open")


def test_threads_asking_the_registry_at_once_get_one_breaker() -> None:
    reg = BreakerRegistry()
    start = threading.Barrier(32)

    def get(_: int) -> CircuitBreaker:
        start.wait(timeout=30)
        return reg.get("policy_search")

    with ThreadPoolExecutor(32) as pool:
        got = list(pool.map(get, range(32)))
    assert len({id(b) for b in got}) == 1
    assert len(reg.snapshots()) == 1


# ---- threads -------------------------------------------------------------------------------


@pytest.fixture
def eager_switching() -> Iterator[None]:
    # switch threads as often as possible, so that a missing lock shows
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def race(n: int, fn: Callable[[], str]) -> list[str]:
    start = threading.Barrier(n)

    def run(_: int) -> str:
        start.wait(timeout=30)
        return fn()

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


@pytest.mark.usefixtures("eager_switching")
def test_32_threads_open_it_once_and_one_of_them_probes(
    breaker: CircuitBreaker, clock: FakeClock, events: Events
) -> None:
    n = 32
    all_in = threading.Barrier(n)

    def fail() -> str:
        ticket = breaker.admit()
        all_in.wait(timeout=30)  # every call is in flight before the first one fails
        breaker.record(ticket, ok=False, elapsed_s=0.1)
        return "failed"

    assert race(n, fail) == ["failed"] * n
    assert events == [("policy_search", "closed", "open", "3 consecutive failures")]
    assert (breaker.snapshot().strikes, breaker.snapshot().opened_at) == (3, T0)

    clock.now = T0 + 30
    probes: list[Admission] = []

    def try_once() -> str:
        try:
            probes.append(breaker.admit())
        except BreakerOpenError as err:
            return f"refused while {err.state}"
        return "probe"

    outcomes = race(n, try_once)
    assert sorted(outcomes) == ["probe"] + ["refused while half_open"] * (n - 1)
    assert [e[1:3] for e in events] == [("closed", "open"), ("open", "half_open")]
    breaker.record(probes[0], ok=True, elapsed_s=0.1)
    assert breaker.snapshot().state == "closed"
    assert len(events) == 3
