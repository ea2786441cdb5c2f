"""The sweeper: aborts goals that stayed ``active`` longer than their timeout (seed 000 §4.3.2).

An asynchronous step that fails without reporting back leaves its goal ``active`` for ever; the
sweeper is what notices. It measures from ``activated_at`` (when the goal last became active),
against the goal's own ``timeout_s`` (the planner writes the pack's default when it creates the
goal; ``None`` never times out), and records why in the history, e.g.
``timeout: active 1800s > 900s``. An abort is a compare-and-set from ``active``: a goal that
completed between the query and the abort stays completed.

``sweep()`` is one pass, for ``charter goals sweep``, a cron job or a test; ``Sweeper`` runs it
in-process every N seconds on a daemon thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from charter.compile.specs.goal_states import Actor, Status
from charter.goals.store import TransitionResult
from charter.goals.tables import Goal
from charter.store.clock import Clock, as_utc, utcnow

log = logging.getLogger(__name__)

ACTOR: Actor = "sweeper"


class SweepableStore(Protocol):
    """What the sweeper needs from a goal store."""

    def overdue(self, now: datetime) -> list[Goal]: ...
    def transition(
        self,
        goal_id: str,
        to_status: Status,
        *,
        actor: Actor,
        trigger: str,
        expect: Status | None = None,
    ) -> TransitionResult: ...


def timeout_trigger(active_s: float, timeout_s: int) -> str:
    """What the history says about an abort: whole seconds, rounded down."""
    return f"timeout: active {int(active_s)}s > {timeout_s}s"


def sweep(store: SweepableStore, now: datetime | None = None) -> list[TransitionResult]:
    """Abort every goal active longer than its timeout at ``now`` (default: the current UTC
    time); one result per goal tried, ``ok=False`` for one that moved on meanwhile."""
    at = utcnow() if now is None else as_utc(now)
    results = []
    for goal in store.overdue(at):
        if goal.activated_at is None or goal.timeout_s is None:  # overdue() returns none such
            continue
        trigger = timeout_trigger((at - goal.activated_at).total_seconds(), goal.timeout_s)
        result = store.transition(goal.id, "aborted", actor=ACTOR, trigger=trigger, expect="active")
        if result.ok:
            log.info("goal %s (%s) aborted: %s", goal.id, goal.intent, trigger)
        results.append(result)
    return results


class Sweeper:
    """Runs ``sweep`` at start and then every ``interval_s`` seconds until ``stop()``.

    ``clock`` gives the time a pass sweeps at (tests pass a fake one); ``on_sweep`` receives
    each pass's results. A pass that raises is logged and the next one runs as planned.
    """

    def __init__(
        self,
        store: SweepableStore,
        *,
        interval_s: float = 60.0,
        clock: Clock = utcnow,
        on_sweep: Callable[[list[TransitionResult]], None] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self._store = store
        self._interval_s = interval_s
        self._clock = clock
        self._on_sweep = on_sweep
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run_once(self) -> list[TransitionResult]:
        results = sweep(self._store, self._clock())
        if self._on_sweep is not None:
            self._on_sweep(results)
        return results

    def start(self) -> None:
        if self.running:
            raise RuntimeError("the sweeper is already running")
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="charter-goal-sweeper", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Ask the thread to stop and wait for it (a pass in progress finishes first)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if not self._thread.is_alive():
                self._thread = None

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                self.run_once()
            except Exception:  # a database hiccup must not end the sweeping for good
                log.exception("goal sweep failed; retrying in %ss", self._interval_s)
            self._stopping.wait(self._interval_s)
