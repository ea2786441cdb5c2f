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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from charter.memory.narrative.rows import quote

# ids per filter and per merge: keeps LanceDB's filter expressions short
CHUNK = 1000
# id -> (user, uses, last use as epoch seconds)
Pending = Mapping[str, tuple[str, int, float]]


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


def flush(table: Any, pending: Pending) -> int:
    """Write ``pending`` uses; return how many rows changed (rows gone since are skipped)."""
    if not pending:
        return 0
    import pyarrow as pa

    seen = _read(table, list(pending), ["access_count"])
    live = {i: p for i, p in pending.items() if i in seen and seen[i]["user_id"] == p[0]}
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
            done = (
                table.merge_insert(["id", "user_id"])
                .when_matched_update_all(
                    where=f"target.access_count + {uses} = source.access_count"
                )
                .execute(batch)
            )
            changed += done.num_updated_rows
            if done.num_updated_rows < len(chunk):
                changed += _increment_the_rest(table, chunk, live, seen, uses)
    return changed


def _increment_the_rest(
    table: Any, ids: Sequence[str], live: Pending, seen: Mapping[str, Any], uses: int
) -> int:
    """Rows the conditional merge left alone (another process wrote their count after it was
    read): the merged rows show exactly the count and last use written; the others get the
    atomic ``access_count + n`` update, one row at a time."""
    now = _read(table, ids, ["access_count", "last_used_at"])
    rest = 0
    for fid in ids:
        row = now.get(fid)
        if row is None:  # forgotten meanwhile
            continue
        wrote = int(seen[fid]["access_count"] or 0) + uses
        if row["access_count"] == wrote and row["last_used_at"] == live[fid][2]:
            continue
        uid, _, last = live[fid]
        table.update(
            where=f"id = {quote(fid)} AND user_id = {quote(uid)}",
            values_sql={"access_count": f"access_count + {uses}", "last_used_at": repr(last)},
        )
        rest += 1
    return rest
