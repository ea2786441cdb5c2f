"""Writing collected uses (access count, last use) to the narrative table in a few commits.

One ``update`` per used row makes one table version per row: thousands of uses cost
thousands of commits, at every ``optimize`` and at shutdown. Instead the rows' counts are
read once and written back by one merge per distinct number of uses (almost always one: a
row is used once between flushes), keyed on id and user.

Several processes may share the directory (workers of one service), so the merge is
conditional: a row is written only when its count is still the one read plus the uses
(``target.access_count + n = source.access_count``). A row another process changed between
the read and the merge is left alone by the merge and gets the atomic per-row increment
instead, so its use is not lost.

The uses wait in a ``Buffer``, shared by the turns that record them and the thread that writes
them (``upkeep``); a write that fails gives back the uses it had not written.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from charter.memory.narrative.rows import quote

# ids per filter and per merge: keeps LanceDB's filter expressions short
CHUNK = 1000
# id -> (user, uses, last use as epoch seconds)
Pending = Mapping[str, tuple[str, int, float]]


class Buffer:
    """The uses recorded and not yet written, with the time the oldest was recorded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, int, float]] = {}
        self._since: float | None = None  # time.monotonic() of the oldest pending use

    def record(self, used: Iterable[tuple[str, str]], at: float) -> None:
        """One use of each ``(summary id, user)`` at ``at`` (epoch seconds)."""
        with self._lock:
            for fid, user in used:
                _, uses, _ = self._pending.get(fid, (user, 0, 0.0))
                self._pending[fid] = (user, uses + 1, at)
            if self._pending and self._since is None:
                self._since = time.monotonic()

    def pending(self) -> tuple[int, float | None]:
        """(summaries with uses pending, when the oldest was recorded)."""
        with self._lock:
            return len(self._pending), self._since

    def take(self) -> dict[str, tuple[str, int, float]]:
        """Every pending use, the buffer emptied."""
        with self._lock:
            taken, self._pending, self._since = self._pending, {}, None
            return taken

    def give_back(self, pending: Pending) -> None:
        """Uses taken and not written, added to those recorded meanwhile."""
        with self._lock:
            for fid, (user, uses, last) in pending.items():
                _, now_uses, now_last = self._pending.get(fid, (user, 0, 0.0))
                self._pending[fid] = (user, uses + now_uses, max(last, now_last))
            if self._pending and self._since is None:
                self._since = time.monotonic()

    def drop_user(self, user_id: str) -> None:
        with self._lock:
            self._pending = {k: v for k, v in self._pending.items() if v[0] != user_id}
            if not self._pending:
                self._since = None


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def _read(table: Any, ids: Sequence[str], columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        rows = (
            table.search()
            .where(f"id IN ({', '.join(quote(i) for i in chunk)})")
            .select(["id", "user_id", *columns])
            .limit(len(chunk))
            .to_list()
        )
        found.update((r["id"], r) for r in rows)
    return found


def flush(table: Any, pending: Pending, written: set[str] | None = None) -> int:
    """Write ``pending`` uses; return how many rows changed (rows gone since are skipped).
    ``written`` receives the ids whose uses are written (or whose row is gone) as they are:
    what a failure midway has not written is ``pending`` less ``written``."""
    if not pending:
        return 0
    done: set[str] = set() if written is None else written
    import pyarrow as pa

    seen = _read(table, list(pending), ["access_count"])
    live = {i: p for i, p in pending.items() if i in seen and seen[i]["user_id"] == p[0]}
    done.update(i for i in pending if i not in live)
    by_uses: dict[int, list[str]] = defaultdict(list)
    for fid, (_, uses, _) in live.items():
        by_uses[uses].append(fid)
    changed = 0
    for uses, ids in sorted(by_uses.items()):
        for chunk in _chunks(ids):
            batch = pa.table(
                {
                    "id": pa.array(chunk, pa.string()),
                    "user_id": pa.array([live[i][0] for i in chunk], pa.string()),
                    "access_count": pa.array(
                        [int(seen[i]["access_count"] or 0) + uses for i in chunk], pa.int64()
                    ),
                    "last_used_at": pa.array([live[i][2] for i in chunk], pa.float64()),
                }
            )
            merged = (
                table.merge_insert(["id", "user_id"])
                .when_matched_update_all(
                    where=f"target.access_count + {uses} = source.access_count"
                )
                .execute(batch)
            )
            changed += merged.num_updated_rows
            if merged.num_updated_rows < len(chunk):
                changed += _increment_the_rest(table, chunk, live, seen, uses, done)
            done.update(chunk)
    return changed


def _increment_the_rest(
    table: Any,
    ids: Sequence[str],
    live: Pending,
    seen: Mapping[str, Any],
    uses: int,
    done: set[str],
) -> int:
    """Rows the conditional merge left alone (another process wrote their count after it was
    read): the merged rows show exactly the count and last use written; the others get the
    atomic ``access_count + n`` update, one row at a time."""
    now = _read(table, ids, ["access_count", "last_used_at"])
    rest = 0
    for fid in ids:
        row = now.get(fid)
        wrote = int(seen[fid]["access_count"] or 0) + uses
        if row is None or (row["access_count"] == wrote and row["last_used_at"] == live[fid][2]):
            done.add(fid)  # forgotten meanwhile, or written by the merge
            continue
        uid, _, last = live[fid]
        table.update(
            where=f"id = {quote(fid)} AND user_id = {quote(uid)}",
            values_sql={"access_count": f"access_count + {uses}", "last_used_at": repr(last)},
        )
        done.add(fid)
        rest += 1
    return rest
