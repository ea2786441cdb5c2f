"""Per-skill circuit breakers (ARCHITECTURE §8; seed 001 §4.2, 资源熔断层: three consecutive
calls slower than 2 s degrade the skill to its fallback).

A skill whose backend fails or slows down must stop being called for a while, so that requests
fall back at once instead of each one waiting for its own timeout. Each skill has a breaker:

``closed``     calls pass. A call is a *strike* when it failed or took longer than ``slow_s``;
               ``failures`` consecutive strikes open the breaker, a good call resets the count.
``open``       calls are refused (``BreakerOpenError``, with the seconds left) for ``cooldown_s``.
``half_open``  the first call after the cool-down is the probe; every other call is refused
               while it is out. Its outcome closes the breaker, or opens it for a new cool-down.

A guarded call::

    ticket = breaker.admit()  # or BreakerOpenError: run the fallback
    ...call the skill and time it...
    breaker.record(ticket, ok=..., elapsed_s=...)

Every admission carries the breaker's *epoch*, which moves on each transition and each probe, and
a record from another epoch is ignored: the thirty calls in flight when the breaker opens cannot
open it a second time, restart its cool-down, or count as strikes after it has closed again, and
a probe presumed lost cannot settle the breaker that a newer probe is testing.

Where the state lives is a ``BreakerState``: this process's memory by default (a decision takes
a couple of µs under one lock), or ``charter.skills.breaker_sql.SqlBreakerState``, which shares
it between processes through the database.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol, TypeVar

log = logging.getLogger(__name__)

State = Literal["closed", "open", "half_open"]
Clock = Callable[[], float]
OnTransition = Callable[[str, State, State, str], object]
"""``on_transition(name, old, new, reason)``, called after the change is stored."""

_T = TypeVar("_T")


@dataclass(frozen=True)
class BreakerSettings:
    """A skill contract's breaker. ``probe_lease_s`` is how long a probe may stay out before it
    is presumed lost (its process died) and another call may probe; ``None`` means the
    cool-down. Keep it above the skill's timeout, or two probes may run at once."""

    failures: int = 3
    slow_s: float = 2.0
    cooldown_s: float = 30.0
    probe_lease_s: float | None = None

    def __post_init__(self) -> None:
        if self.failures < 1:
            raise ValueError(f"failures must be at least 1, got {self.failures}")
        if self.slow_s <= 0:
            raise ValueError(f"slow_s must be positive, got {self.slow_s}")
        if self.cooldown_s < 0:
            raise ValueError(f"cooldown_s cannot be negative, got {self.cooldown_s}")
        if self.probe_lease_s is not None and self.probe_lease_s <= 0:
            raise ValueError(f"probe_lease_s must be positive, got {self.probe_lease_s}")

    @property
    def lease_s(self) -> float:
        return self.cooldown_s if self.probe_lease_s is None else self.probe_lease_s


@dataclass(frozen=True, slots=True)
class BreakerRow:
    """One breaker's state as a ``BreakerState`` keeps it; times are in the breaker's clock."""

    state: State = "closed"
    strikes: int = 0  # consecutive strikes since the last good call
    slow: int = 0  # how many of those were good but slow: only the reason's wording needs it
    epoch: int = 0
    opened_at: float | None = None
    probe_at: float | None = None  # when the probe now out was admitted
    reason: str = ""  # why the last transition happened


CLOSED = BreakerRow()


@dataclass(frozen=True, slots=True)
class Admission:
    """The token ``admit`` returns and ``record`` takes back."""

    probe: bool
    epoch: int


@dataclass(frozen=True, slots=True)
class Transition:
    old: State
    new: State
    reason: str


@dataclass(frozen=True, slots=True)
class _Refusal:
    state: State
    retry_in_s: float


class BreakerOpenError(RuntimeError):
    """The breaker refused the call: open and cooling down, or half-open with its probe out."""

    def __init__(self, name: str, state: State, retry_in_s: float) -> None:
        what = "open" if state == "open" else "half-open, probe in progress"
        super().__init__(f"skill {name!r} unavailable: circuit breaker {what}")
        self.name = name
        self.state = state
        self.retry_in_s = retry_in_s  # at the latest, for a half-open breaker


@dataclass(frozen=True)
class BreakerSnapshot:
    """What ``charter skills status`` shows of one breaker."""

    name: str
    state: State
    strikes: int
    opened_at: float | None  # in the breaker's clock: UNIX time when the state is in SQL
    retry_in_s: float  # 0.0 when a call would be admitted now
    probe_out: bool
    reason: str
    settings: BreakerSettings


class BreakerState(Protocol):
    """Where breakers keep their rows, one per name. ``change`` runs ``step`` on the current
    row atomically (no other change to that name in between, in any thread or process that
    shares the state), stores the row it returns unless that is the very row it was given, and
    returns the rest. ``step`` is pure and may be run more than once."""

    @property
    def wall_clock(self) -> bool:
        """Whether the rows must be stamped with UNIX time (shared beyond this process)."""
        ...

    def read(self, name: str) -> BreakerRow: ...

    def change(self, name: str, step: Callable[[BreakerRow], tuple[BreakerRow, _T]]) -> _T: ...


class LocalBreakerState:
    """This process's memory: a dictionary under one lock."""

    wall_clock = False

    def __init__(self) -> None:
        self._rows: dict[str, BreakerRow] = {}
        self._lock = threading.Lock()

    def read(self, name: str) -> BreakerRow:
        return self._rows.get(name, CLOSED)  # rows are immutable: no lock needed to read one

    def change(self, name: str, step: Callable[[BreakerRow], tuple[BreakerRow, _T]]) -> _T:
        with self._lock:
            row = self._rows.get(name, CLOSED)
            new, out = step(row)
            if new is not row:
                self._rows[name] = new
        return out


# ---- the decisions, pure functions of a row and the time -----------------------------------


def _left(since: float | None, span: float, now: float) -> float:
    if since is None:
        return 0.0
    left = since + span - now
    # a clock a little behind the one that stamped ``since`` (another machine's) still waits,
    # at most one span; one that is a span or more behind was stepped back and cannot tell how
    # long it has been: let a probe find out rather than stay shut until it catches up
    if left >= 2 * span:
        return 0.0
    return min(max(0.0, left), span)


def _admit(
    row: BreakerRow, now: float, s: BreakerSettings
) -> tuple[BreakerRow, tuple[Admission | _Refusal, Transition | None]]:
    if row.state == "closed":
        return row, (Admission(False, row.epoch), None)
    if row.state == "open":
        left = _left(row.opened_at, s.cooldown_s, now)
        if left > 0:
            return row, (_Refusal("open", left), None)
        reason = "cool-down over"
        new = replace(row, state="half_open", epoch=row.epoch + 1, probe_at=now, reason=reason)
        return new, (Admission(True, new.epoch), Transition("open", "half_open", reason))
    left = _left(row.probe_at, s.lease_s, now)
    if left > 0:
        return row, (_Refusal("half_open", left), None)
    # the probe never came back: this call probes instead, and the old one's word is void
    new = replace(row, epoch=row.epoch + 1, probe_at=now)
    return new, (Admission(True, new.epoch), None)


def _seconds(s: BreakerSettings) -> str:
    return f"{s.slow_s:g} s"


def _opening_reason(strikes: int, slow: int, s: BreakerSettings) -> str:
    if strikes == 1:  # a contract that says ``failures: 1``
        return "1 failure" if slow == 0 else f"1 call slower than {_seconds(s)}"
    if slow == 0:
        return f"{strikes} consecutive failures"
    if slow == strikes:
        return f"{strikes} consecutive calls slower than {_seconds(s)}"
    failed = strikes - slow
    return f"{strikes} consecutive failed or slow calls ({failed} failed, {slow} slow)"


def _record(
    row: BreakerRow, ticket: Admission, ok: bool, elapsed_s: float, now: float, s: BreakerSettings
) -> tuple[BreakerRow, Transition | None]:
    if ticket.epoch != row.epoch or row.state != ("half_open" if ticket.probe else "closed"):
        return row, None
    slow = ok and elapsed_s > s.slow_s
    if ticket.probe:
        if ok and not slow:
            new = BreakerRow(epoch=row.epoch + 1, reason="probe succeeded")
        else:
            reason = "probe failed" if not ok else f"probe slower than {_seconds(s)}"
            new = BreakerRow(
                "open", row.strikes + 1, row.slow + slow, row.epoch + 1, now, None, reason
            )
        return new, Transition("half_open", new.state, new.reason)
    if ok and not slow:
        return (row, None) if row.strikes == 0 else (replace(row, strikes=0, slow=0), None)
    strikes, slows = row.strikes + 1, row.slow + slow
    if strikes < s.failures:
        return replace(row, strikes=strikes, slow=slows), None
    reason = _opening_reason(strikes, slows, s)
    new = BreakerRow("open", strikes, slows, row.epoch + 1, now, None, reason)
    return new, Transition("closed", "open", reason)


# ---- the breaker ---------------------------------------------------------------------------


class CircuitBreaker:
    """One skill's breaker; safe to share between threads, and between processes through a
    shared ``state``. ``clock`` defaults to ``time.monotonic``, or to ``time.time`` when the
    state is shared beyond this process: other processes, perhaps on other machines, compare
    the stored times with their own clocks, and monotonic clocks only mean something inside
    one machine's boot (a wall clock stepped back is survived: see ``_left``)."""

    def __init__(
        self,
        name: str,
        settings: BreakerSettings | None = None,
        *,
        clock: Clock | None = None,
        state: BreakerState | None = None,
        on_transition: OnTransition | None = None,
    ) -> None:
        self.name = name
        self._settings = BreakerSettings() if settings is None else settings
        self._state: BreakerState = LocalBreakerState() if state is None else state
        if clock is None:
            clock = time.time if self._state.wall_clock else time.monotonic
        elif self._state.wall_clock and clock in (time.monotonic, time.perf_counter):
            raise ValueError("a breaker whose state is shared between processes needs wall-clock")
        self._clock = clock
        self._on_transition = on_transition

    @property
    def settings(self) -> BreakerSettings:
        return self._settings

    def reconfigure(self, settings: BreakerSettings) -> None:
        """New settings (a reloaded contract); the state carries over."""
        self._settings = settings

    def admit(self) -> Admission:
        """Let a call through, or raise ``BreakerOpenError``; ``Admission.probe`` says whether
        this call is the half-open probe."""
        s, clock = self._settings, self._clock
        verdict, moved = self._state.change(self.name, lambda row: _admit(row, clock(), s))
        if moved is not None:
            self._report(moved)
        if isinstance(verdict, _Refusal):
            raise BreakerOpenError(self.name, verdict.state, verdict.retry_in_s)
        return verdict

    def record(self, admission: Admission, *, ok: bool, elapsed_s: float) -> None:
        """Report how the admitted call went: failed (``ok=False``), or how long it took."""
        s, clock = self._settings, self._clock
        moved = self._state.change(
            self.name, lambda row: _record(row, admission, ok, elapsed_s, clock(), s)
        )
        if moved is not None:
            self._report(moved)

    def snapshot(self) -> BreakerSnapshot:
        row, s = self._state.read(self.name), self._settings
        now = self._clock()
        if row.state == "open":
            retry = _left(row.opened_at, s.cooldown_s, now)
        elif row.state == "half_open":
            retry = _left(row.probe_at, s.lease_s, now)
        else:
            retry = 0.0
        return BreakerSnapshot(
            name=self.name,
            state=row.state,
            strikes=row.strikes,
            opened_at=row.opened_at,
            retry_in_s=retry,
            probe_out=row.state == "half_open",
            reason=row.reason,
            settings=s,
        )

    def _report(self, moved: Transition) -> None:
        # outside the lock, so a hook may read the breaker; after the change is stored, so a
        # failing hook cannot undo it or lose the probe it admitted: hence log, never raise
        log.info("breaker %s: %s -> %s (%s)", self.name, moved.old, moved.new, moved.reason)
        if self._on_transition is None:
            return
        try:
            self._on_transition(self.name, moved.old, moved.new, moved.reason)
        except Exception:
            log.exception("breaker %s: on_transition failed", self.name)


class BreakerRegistry:
    """The breakers of a runtime, one per skill, made on first use; safe across threads."""

    def __init__(
        self,
        state: BreakerState | None = None,
        *,
        clock: Clock | None = None,
        on_transition: OnTransition | None = None,
    ) -> None:
        # without a shared state each breaker keeps its own, under its own lock
        self._state = state
        self._clock = clock
        self._on_transition = on_transition
        self._breakers: dict[str, CircuitBreaker] = {}
        self._lock = threading.Lock()

    def get(self, name: str, settings: BreakerSettings | None = None) -> CircuitBreaker:
        """The breaker of skill ``name``; ``settings`` (the contract's) replace those it has."""
        breaker = self._breakers.get(name)
        if breaker is None:
            with self._lock:
                breaker = self._breakers.get(name)
                if breaker is None:
                    breaker = CircuitBreaker(
                        name,
                        settings,
                        clock=self._clock,
                        state=self._state,
                        on_transition=self._on_transition,
                    )
                    self._breakers[name] = breaker
                    return breaker
        if settings is not None and settings != breaker.settings:
            breaker.reconfigure(settings)
        return breaker

    def snapshots(self) -> list[BreakerSnapshot]:
        """Every breaker made so far, by name."""
        with self._lock:
            breakers = sorted(self._breakers.items())
        return [b.snapshot() for _, b in breakers]
