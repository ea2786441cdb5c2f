"""The narrative store's deferred writes, done as the store is written rather than at the
hourly lifecycle pass or at shutdown (issue 33): compaction, and the collected uses.

**Compaction.** Every append (one per turn) and every write of uses leaves a small LanceDB
fragment and a table version; a read opens every fragment, so unmaintained a server slowed
from 8.8 to 3.5 turns/s over ~1,200 turns (30 users). After ``compact_every`` such writes the
store is compacted and its indexes brought up to date (``NarrativeAdmin.compact``), here, on a
thread of the store's own: a turn never waits for it. Compaction commits a new version like
any write (LanceDB versions the table): turns keep appending and reading meanwhile, and an
append that commits first is folded into the compacted version, not lost. Several processes
on one directory (workers) never compact at once: a pass takes the directory's compaction
lock without waiting, and when another process holds it leaves the compaction to that one
and tries again at the next write.

**Uses.** A recall records a use of each summary it returns (access count, last use) in a
buffer; the buffer is written here in one batch (``usage.flush``: one conditional merge per
distinct number of uses) once it holds ``usage_batch`` summaries or its oldest use has waited
``usage_flush_after_s``. Shutdown (``NarrativeStore.close``) writes only what is left: one
batch, not the whole history's uses (minutes of shutdown after ~1,000 turns before). A
process killed without a shutdown (SIGKILL) loses the uses not yet written: at most one batch,
``usage_batch`` summaries or ``usage_flush_after_s`` seconds of uses, while the writes keep up
(a batch that is still being written when the next fills is followed by one batch of all
that came meanwhile).

A pass that fails (a conflict with another process's commit, a full disk) is logged: uses not
written go back to the buffer and are tried again a second later, a compaction after
``compact_every`` more writes.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)
RETRY_S = 1.0  # after a failed pass, before the next attempt


@dataclass(frozen=True)
class UpkeepSettings:
    """When the store writes what it deferred (``[memory]`` of ``charter.toml``)."""

    compact_every: int = 100  # appends and batches of uses between compactions; 0: never here
    usage_batch: int = 200  # summaries whose uses are written together
    usage_flush_after_s: float = 5.0  # the longest a use waits to be written


class Maintained(Protocol):
    """What the upkeep thread asks of the store."""

    writes_since_compaction: int

    def usage_pending(self) -> tuple[int, float | None]: ...  # (summaries, oldest's monotonic)

    def flush_usage(self) -> int: ...

    def compact(self, *, wait: bool) -> bool: ...


class Upkeep:
    """One daemon thread per store, started by the first write or use it is told of."""

    def __init__(self, store: Maintained, settings: UpkeepSettings) -> None:
        self._store = store
        self.settings = settings
        self._wake = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        # the writes at which to compact: compact_every, or one more write when another
        # process held the lock at the last attempt
        self._compact_at = settings.compact_every
        self.passes = {"compactions": 0, "flushes": 0}  # for tests and benchmarks

    def nudge(self) -> None:
        """A write or a use happened: the thread looks at what is due."""
        with self._wake:
            if self._stopping:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="charter narrative upkeep", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def stop(self, timeout_s: float) -> None:
        """Let a pass in progress finish, within ``timeout_s``; no pass starts after."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            if thread.is_alive():
                log.warning("narrative upkeep still running at close (%.0f s)", timeout_s)

    def _due(self, now: float) -> tuple[bool, bool, float | None]:
        """(flush due, compaction due, seconds until the oldest use is due)."""
        s = self.settings
        count, oldest = self._store.usage_pending()
        wait = None if oldest is None else max(0.0, oldest + s.usage_flush_after_s - now)
        flush = count >= s.usage_batch or wait == 0.0
        compact = s.compact_every > 0 and self._store.writes_since_compaction >= self._compact_at
        return flush, compact, wait

    def _run(self) -> None:
        while True:
            with self._wake:
                while True:
                    if self._stopping:
                        return
                    flush, compact, wait = self._due(time.monotonic())
                    if flush or compact:
                        break
                    self._wake.wait(wait)
            if not self._pass(flush, compact):
                with self._wake:
                    if not self._stopping:
                        self._wake.wait(RETRY_S)

    def _pass(self, flush: bool, compact: bool) -> bool:
        """One pass; False when the uses could not be written (tried again in ``RETRY_S``).
        A compaction that fails is tried again after ``compact_every`` more writes."""
        if flush:
            try:
                self._store.flush_usage()
                self.passes["flushes"] += 1
            except Exception:  # the buffer kept the uses not written
                log.exception("writing narrative uses failed; next attempt in %.0f s", RETRY_S)
                return False
        if compact:
            writes = self._store.writes_since_compaction
            try:
                done = self._store.compact(wait=False)
            except Exception:  # a conflict with another process's commit, a full disk
                log.exception("compacting the narrative store failed")
                self._compact_at = writes + self.settings.compact_every
                return True
            if done:
                self.passes["compactions"] += 1
                self._compact_at = self.settings.compact_every
            else:  # another process is compacting: try again after the next write
                self._compact_at = writes + 1
        return True
