"""Uses of narrative rows written in a few commits (``charter.memory.narrative.usage``): every
use of a flush lands in one merge per distinct number of uses instead of one table version
per row; a row another process changed between the read and the merge keeps both writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.embedders import HashEmbedder
from charter.memory.narrative import NarrativeStore, usage
from charter.memory.narrative.rows import epoch
from charter.memory.records import Accessor, PreparedSummary
from tests.support.memory import T0, FakeClock

ADMIN = Accessor("u1", "ops", role="admin")


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[NarrativeStore]:
    s = NarrativeStore(tmp_path / "narrative", HashEmbedder(), MemoryPolicy(), clock=clock)
    yield s
    s.close()


def add(store: NarrativeStore, users: int, per_user: int) -> dict[str, str]:
    """Summaries of ``users`` users; their ids -> user."""
    owners: dict[str, str] = {}
    for u in range(users):
        me = Accessor(f"u{u}", "agent")
        texts = [PreparedSummary(me.user_id, f"第{n}件事", "default") for n in range(per_user)]
        owners.update((s.id, s.user_id) for s in store.add(me, texts))
    return owners


def counts(store: NarrativeStore) -> dict[str, tuple[int, float | None]]:
    rows = store.table.search().select(["id", "access_count", "last_used_at"]).limit(10_000)
    return {r["id"]: (r["access_count"], r["last_used_at"]) for r in rows.to_list()}


def test_a_flush_of_many_uses_is_one_commit_per_distinct_number_of_uses(
    store: NarrativeStore,
) -> None:
    owners = add(store, users=6, per_user=50)
    ids = sorted(owners)
    at = epoch(T0)
    pending = {fid: (owners[fid], 1 + (n % 3 == 0), at + n) for n, fid in enumerate(ids[:200])}
    before = store.table.version
    assert usage.flush(store.table, pending) == 200
    assert store.table.version - before == 2  # uses 1 and uses 2: two merges, not 200 updates
    got = counts(store)
    assert {fid: got[fid] for fid in pending} == {
        fid: (uses, last) for fid, (_, uses, last) in pending.items()
    }
    assert {got[fid] for fid in ids[200:]} == {(0, None)}


def test_rows_gone_or_of_another_user_are_skipped(store: NarrativeStore) -> None:
    owners = add(store, users=2, per_user=2)
    mine, theirs = sorted(f for f, u in owners.items() if u == "u0")[0], "no-such-row"
    other = next(f for f, u in owners.items() if u == "u1")
    pending = {mine: ("u0", 1, 5.0), theirs: ("u0", 1, 5.0), other: ("u0", 1, 5.0)}
    assert usage.flush(store.table, pending) == 1
    assert counts(store)[mine] == (1, 5.0)
    assert counts(store)[other] == (0, None)


class Interleaved:
    """The table, with another process's increment of one row right after the counts were
    read and before the merge."""

    def __init__(self, table: Any, row: str) -> None:
        self._table = table
        self._row = row
        self._done = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def merge_insert(self, on: Any) -> Any:
        if not self._done:
            self._done = True
            self._table.update(
                where=f"id = '{self._row}'", values_sql={"access_count": "access_count + 10"}
            )
        return self._table.merge_insert(on)


def test_a_row_changed_by_another_process_keeps_both_counts(store: NarrativeStore) -> None:
    owners = add(store, users=1, per_user=5)
    ids = sorted(owners)
    pending = {fid: ("u0", 1, 9.0) for fid in ids}
    assert usage.flush(Interleaved(store.table, ids[0]), pending) == 5
    got = counts(store)
    assert got[ids[0]] == (11, 9.0)  # the other process's 10 and this flush's 1
    assert {got[fid] for fid in ids[1:]} == {(1, 9.0)}


def test_the_store_flushes_through_it(store: NarrativeStore, clock: FakeClock) -> None:
    add(store, users=1, per_user=3)
    me = Accessor("u0", "agent")
    for _ in range(3):
        assert len(store.search_keywords(me, ["件事"])) == 3
    before = store.table.version
    assert store.flush_usage() == 3
    assert store.table.version - before == 1
    assert {c for c, _ in counts(store).values()} == {3}
