"""The narrative store's privacy and maintenance: listing, export, forget (every byte of the
user gone), index creation, compaction (under the directory's lock: ``compaction``). A mixin of
``NarrativeStore``, kept apart so the store reads as what a turn does with it."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from charter.memory.crypto import FORGOTTEN
from charter.memory.facts.access import audit_row
from charter.memory.narrative import compaction, usage
from charter.memory.narrative.rows import TABLE, quote, to_summary
from charter.memory.narrative.upkeep import Upkeep
from charter.memory.narrative.usage import Buffer
from charter.memory.records import Accessor, Summary


class NarrativeAdmin:
    # provided by NarrativeStore
    table: Any
    _db: Any
    _usage: Buffer
    _compaction: Any
    writes_since_compaction: int
    _indexed: bool
    _index_lock: threading.Lock
    _flushing: threading.RLock
    upkeep: Upkeep | None
    _clock: Callable[[], datetime]
    _privileged: Callable[[Accessor, str], None]
    _record: Callable[[list[dict[str, Any]]], None]
    _rows: Callable[..., list[dict[str, Any]]]

    # ---- privacy -------------------------------------------------------------------------

    def list_summaries(self, accessor: Accessor, *, history: bool = False) -> list[Summary]:
        """A privileged listing of the user's summaries (every status with ``history``)."""
        self._privileged(accessor, "list")
        where = f"user_id = {quote(accessor.user_id)}"
        if not history:
            where += " AND status = 'active'"
        rows = sorted(self._rows(where), key=lambda r: (r["created_at"], r["id"]))
        self._record([audit_row(accessor, "list", self._clock(), None, f"narrative: {len(rows)}")])
        return [to_summary(r) for r in rows]

    def export(self, accessor: Accessor) -> list[dict[str, Any]]:
        """The user's summaries of every status as JSON-ready dicts (texts as stored: scrubbed)."""
        self._privileged(accessor, "export")
        rows = sorted(
            self._rows(f"user_id = {quote(accessor.user_id)}"), key=lambda r: r["created_at"]
        )
        out = []
        for r in rows:
            s = to_summary(r)
            out.append(
                {
                    **{k: getattr(s, k) for k in ("id", "session_id", "kind", "text", "domain")},
                    **{k: getattr(s, k) for k in ("memory_type", "intent_type", "status", "count")},
                    "merged_into": s.merged_into,
                    "created_at": s.created_at.isoformat(),
                    "valid_until": s.valid_until.isoformat() if s.valid_until else None,
                    "access_count": s.access_count,
                }
            )
        self._record([audit_row(accessor, "export", self._clock(), None, f"narrative: {len(out)}")])
        return out

    def forget(self, accessor: Accessor, *, forgotten_as: str = FORGOTTEN) -> int:
        """Delete every summary and vector of the user; return how many rows went. The audit
        row of the forget names the user ``forgotten_as``, as the fact store's does.

        A LanceDB delete only marks rows deleted: the data files, the indexes, older versions
        and the delete's own transaction record (which would hold the user id) keep them. So
        the table is rewritten without the user, its indexes rebuilt, and every older version
        dropped: afterwards no file of the directory holds a byte of the user's rows."""
        import pyarrow.compute as pc

        self._privileged(accessor, "forget")
        where = f"user_id = {quote(accessor.user_id)}"
        gone = int(self.table.count_rows(where))
        self._usage.drop_user(accessor.user_id)
        if gone:
            # no compaction in between: its commit would bring the user's rows back
            with compaction.holding(self._compaction, wait=True), self._flushing:
                self.flush_usage()
                data = self.table.to_arrow()
                keep = data.filter(pc.not_equal(data["user_id"], accessor.user_id))
                self.table = self._db.create_table(TABLE, keep, mode="overwrite")
                self._indexed = False
                self._purge()
        row = audit_row(accessor, "forget", self._clock(), None, f"narrative: {gone} summaries")
        actor = accessor.actor.replace(accessor.user_id, forgotten_as)  # no user id stays
        self._record([{**row, "user_id": forgotten_as, "actor": actor}])
        return gone

    # ---- maintenance ---------------------------------------------------------------------

    def flush_usage(self) -> int:
        """Write the collected uses (access count, last use) in a few batched commits
        (``usage.flush``); return how many rows changed. Uses it could not write stay
        collected, for the next flush."""
        with self._flushing:
            pending = self._usage.take()
            if not pending:
                return 0
            written: set[str] = set()
            try:
                changed = usage.flush(self.table, pending, written)
            except BaseException:
                self._usage.give_back({k: v for k, v in pending.items() if k not in written})
                raise
        self._wrote()
        return changed

    def usage_pending(self) -> tuple[int, float | None]:
        """(summaries with uses not yet written, ``time.monotonic()`` of the oldest use)."""
        return self._usage.pending()

    def _wrote(self) -> None:
        self.writes_since_compaction += 1
        if self.upkeep is not None:
            self.upkeep.nudge()

    def optimize(self) -> None:
        """Write pending uses, then ``compact``, waiting for a compaction of another process
        to end first. The lifecycle pass runs it."""
        self.flush_usage()
        self.compact(wait=True)

    def compact(self, *, wait: bool = True) -> bool:
        """Create the indexes when missing, compact small appends, fold new rows into the
        indexes and drop the versions older than 10 minutes (a reader of another process
        may still be on one), under the directory's compaction lock. False, having done
        nothing, when ``wait`` is False and another process or thread holds the lock."""
        with compaction.holding(self._compaction, wait) as held:
            if not held:
                return False
            writes = self.writes_since_compaction
            self.ensure_indexes()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.table.optimize(cleanup_older_than=timedelta(minutes=10))
            self.writes_since_compaction -= writes  # those made meanwhile count for the next
        return True

    def purge(self) -> None:
        """Compact and keep only the newest version: deleted rows leave the disk."""
        with compaction.holding(self._compaction, wait=True):
            self._purge()

    def _purge(self) -> None:
        self.ensure_indexes()
        with warnings.catch_warnings():  # dropping old versions: the point of forget
            warnings.simplefilter("ignore")
            self.table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    def ensure_indexes(self) -> None:
        """A BTree on ``user_id`` (the prefilter of every read) and a full-text index over
        character bigrams of ``text`` (Chinese has no spaces to split words on). Threads of
        this process take turns; another process creating the same index first is not an
        error (the index is there, which is all that is asked)."""
        if self._indexed:
            return
        with self._index_lock:
            if self._indexed or self.table.count_rows() == 0:
                return
            for column in ("user_id", "text"):
                try:
                    self._create_index(column)
                except (RuntimeError, ValueError, OSError):
                    if not self._has_index(column):
                        raise
            self._indexed = True

    def _has_index(self, column: str) -> bool:
        self.table.checkout_latest()
        return (column,) in {tuple(i.columns) for i in self.table.list_indices()}

    def _create_index(self, column: str) -> None:
        if self._has_index(column):
            return
        with warnings.catch_warnings():  # the older names are the ones that take a column
            warnings.simplefilter("ignore", DeprecationWarning)
            if column == "user_id":
                self.table.create_scalar_index("user_id", index_type="BTREE")
            else:
                self.table.create_fts_index(
                    "text",
                    base_tokenizer="ngram",
                    ngram_min_length=2,
                    ngram_max_length=2,
                    stem=False,
                    remove_stop_words=False,
                    ascii_folding=False,
                )
