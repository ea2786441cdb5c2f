"""Recording a turn: ``TraceRecorder`` times each step and collects what the turn loop says
about it, then ``finish`` hands back the frozen ``Trace``.

::

    rec = TraceRecorder(user_id, session_id, pack.name)
    with rec.step("recall", inputs={"text": text}) as s:
        hit = ladder.recall(...)
        s.outputs["step"] = hit.step
        s.decision = f"ladder: {hit.step}"
    trace = rec.finish(reply.text, verdict)

A step that raises keeps the exception as ``outputs["error"]`` and the exception goes on: the
trace records what happened, the loop decides what to do about it. Durations come from
``clock`` (``time.perf_counter``: monotonic, so a wall-clock jump never makes a step negative)
and the trace's start from ``wall``; tests pass fakes of both.

Trace ids (``TraceIds``) are ``tr-`` and 19 lowercase Crockford base32 characters: 9 for the
wall time in milliseconds (enough until the year 3084), 10 random (50 bits). They are made by
the process, not by the database, because the reply carries the id before (and even if not) the
trace is saved, and several ``charter serve`` workers make them at once without talking to each
other; a database sequence (as tickets have) would serialise every turn. The time prefix makes
them sort by when the turn started, as text, in SQL and in a terminal; within one generator they
only grow, even within one millisecond or when the wall clock steps back. 50 random bits make a
clash between workers in the same millisecond about a one-in-10^15 event per pair. A ULID (26
characters) or a UUID (36) would do as well, only longer to read and to paste.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any

from charter.store.clock import utcnow
from charter.text.masking import mask_text
from charter.traces.model import Default, Trace, TraceStep, jsonable, opaque

Clock = Callable[[], float]
Wall = Callable[[], datetime]

ID_PREFIX = "tr-"
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base32, in ASCII order
_TIME_CHARS, _RANDOM_CHARS = 9, 10
_RANDOM_BITS = 5 * _RANDOM_CHARS


def _base32(n: int, width: int) -> str:
    chars = []
    for _ in range(width):
        n, digit = divmod(n, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class TraceIds:
    """A generator of trace ids (see the module's docstring); thread-safe."""

    def __init__(
        self,
        *,
        now_ms: Callable[[], int] = _wall_ms,
        randbits: Callable[[int], int] = secrets.randbits,
    ) -> None:
        self._now_ms = now_ms
        self._randbits = randbits
        self._last = (-1, 0)
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            ms, rnd = self._now_ms(), self._randbits(_RANDOM_BITS)
            last_ms, last_rnd = self._last
            if ms <= last_ms:  # same millisecond, or the clock stepped back: count on
                ms, rnd = last_ms, last_rnd + 1
                if rnd >> _RANDOM_BITS:
                    ms, rnd = ms + 1, 0
            self._last = (ms, rnd)
        return ID_PREFIX + _base32(ms, _TIME_CHARS) + _base32(rnd, _RANDOM_CHARS)


new_trace_id = TraceIds()


class StepHandle:
    """One step being recorded: set ``outputs[...]``, ``decision`` (and more ``inputs``) in
    the ``with`` block; they are copied as JSON when it ends."""

    def __init__(
        self, recorder: TraceRecorder, name: str, inputs: Mapping[str, Any], decision: str
    ) -> None:
        self.name = name
        self.inputs: dict[str, Any] = dict(inputs)
        self.outputs: dict[str, Any] = {}
        self.decision = decision
        self._recorder = recorder
        self._start: float | None = None
        self._step: TraceStep | None = None

    def __enter__(self) -> StepHandle:
        if self._start is not None:
            raise RuntimeError(f"step {self.name!r} has already been entered")
        self._start = self._recorder._enter(self)
        return self

    def __exit__(
        self, t: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        end = self._recorder._clock()
        if exc is not None:
            kind, message = type(exc).__name__, str(exc)
            # an error text may quote a credential (a server's 401 names the key): masked
            self.outputs["error"] = mask_text(f"{kind}: {message}" if message else kind)
        assert self._start is not None
        default = self._recorder._default
        self._step = TraceStep(
            name=self.name,
            started_ms=self._recorder._offset_ms(self._start),
            duration_ms=(end - self._start) * 1000,
            inputs=jsonable(self.inputs, default=default),
            outputs=jsonable(self.outputs, default=default),
            decision=self.decision,
        )

    @property
    def step(self) -> TraceStep | None:
        """The recorded step once the ``with`` block has ended, None before."""
        return self._step


class TraceRecorder:
    """Records one turn; use it from the turn's own thread or task (steps of concurrent
    sub-tasks may overlap: they are kept in the order they started)."""

    def __init__(
        self,
        user_id: str,
        session_id: str,
        domain: str,
        *,
        tenant: str | None = None,
        clock: Clock = time.perf_counter,
        wall: Wall = utcnow,
        ids: Callable[[], str] = new_trace_id,
        default: Default = opaque,
    ) -> None:
        self.user_id = user_id
        self.session_id = session_id
        self.domain = domain
        self.tenant = tenant
        self._clock = clock
        self._default = default
        self._id = ids()
        self._started_at = wall()
        self._t0 = clock()
        self._handles: list[StepHandle] = []
        self._trace: Trace | None = None

    @property
    def id(self) -> str:
        """Known from the start, so logs and the reply can carry it before the trace is saved."""
        return self._id

    @property
    def started_at(self) -> datetime:
        return self._started_at

    @property
    def finished(self) -> bool:
        return self._trace is not None

    @property
    def running(self) -> bool:
        """A step was entered and has not ended (the turn failed inside it)."""
        return any(h.step is None for h in self._handles)

    def step(
        self, name: str, inputs: Mapping[str, Any] | None = None, *, decision: str = ""
    ) -> StepHandle:
        """A context manager that records one step named ``name``."""
        return StepHandle(self, name, inputs or {}, decision)

    def _enter(self, handle: StepHandle) -> float:
        if self._trace is not None:
            raise RuntimeError(f"trace {self._id} is finished: step {handle.name!r} comes too late")
        self._handles.append(handle)
        return self._clock()

    def _offset_ms(self, at: float) -> float:
        return (at - self._t0) * 1000

    def finish(self, reply: str, verdict: str) -> Trace:
        """The trace of the turn. Raises RuntimeError when a step is still running or the
        trace was finished already: both are bugs in the turn loop, not states to store."""
        if self._trace is not None:
            raise RuntimeError(f"trace {self._id} is finished already")
        duration = self._offset_ms(self._clock())
        steps = []
        for handle in self._handles:
            if handle.step is None:
                raise RuntimeError(f"trace {self._id}: step {handle.name!r} is still running")
            steps.append(handle.step)
        self._trace = Trace(
            id=self._id,
            user_id=self.user_id,
            session_id=self.session_id,
            domain=self.domain,
            started_at=self._started_at,
            duration_ms=duration,
            steps=tuple(steps),
            reply=reply,
            verdict=verdict,
            tenant=self.tenant,
        )
        return self._trace
