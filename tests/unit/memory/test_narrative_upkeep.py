"""The narrative store's deferred writes done as it is written (``charter.memory.narrative.
upkeep``, issue 33): it compacts itself after ``compact_every`` writes, off the writing thread
and never while another process holds the directory's compaction lock; collected uses are
written in batches bounded in count and age, a failed write gives back what it did not write,
and ``close`` writes the last batch."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from charter.compile.specs.memory import MemoryPolicy
from charter.memory import narrative
from charter.memory.embedders import HashEmbedder
from charter.memory.narrative import NarrativeStore, compaction
from charter.memory.narrative.upkeep import Upkeep, UpkeepSettings
from charter.memory.narrative.usage import Buffer
from charter.memory.records import Accessor, PreparedSummary
from tests.support.memory import FakeClock

ME = Accessor("张伟", "agent")
TEXTS = [f"我想问一下第{n}个订单的物流" for n in range(12)]
QUIET = UpkeepSettings(compact_every=0, usage_batch=10_000, usage_flush_after_s=3600.0)


def until(done: Callable[[], bool], what: str) -> None:
    """Wait for the upkeep thread (a readiness wait, not a timing assertion)."""
    deadline = time.monotonic() + 60
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"the upkeep thread never {what}")
        time.sleep(0.02)


@pytest.fixture
def open_store(tmp_path: Path, clock: FakeClock) -> Iterator[Callable[..., NarrativeStore]]:
    made: list[NarrativeStore] = []

    def make(settings: UpkeepSettings | None) -> NarrativeStore:
        store = NarrativeStore(
            tmp_path / "narrative", HashEmbedder(), MemoryPolicy(), clock=clock, upkeep=settings
        )
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def add_each(store: NarrativeStore, texts: list[str]) -> None:
    """One append per text, as turns write them."""
    for text in texts:
        store.add(ME, [PreparedSummary(ME.user_id, text, "default")])


def fragments(store: NarrativeStore) -> int:
    return int(store.table.stats()["fragment_stats"]["num_fragments"])


def flushes(store: NarrativeStore) -> int:
    assert store.upkeep is not None
    return store.upkeep.passes["flushes"]


def access_counts(store: NarrativeStore) -> list[int]:
    return sorted(store.table.to_arrow().column("access_count").to_pylist())


def test_the_store_compacts_itself_after_compact_every_writes(
    open_store: Callable[..., NarrativeStore],
) -> None:
    store = open_store(UpkeepSettings(compact_every=5, usage_batch=10_000))
    upkeep = store.upkeep
    assert upkeep is not None
    add_each(store, TEXTS[:4])
    assert (fragments(store), upkeep.passes["compactions"]) == (4, 0)
    add_each(store, TEXTS[4:5])
    until(lambda: upkeep.passes["compactions"] == 1, "compacted")
    # LanceDB compacts the rows its indexes cover (the first append) apart from the others
    assert fragments(store) == 2
    assert store.writes_since_compaction == 0
    assert len(store.search_keywords(ME, ["订单"], limit=20)) == 5


def test_without_settings_no_thread_compacts(open_store: Callable[..., NarrativeStore]) -> None:
    store = open_store(None)
    add_each(store, TEXTS[:6])
    assert store.upkeep is None
    assert (fragments(store), store.writes_since_compaction) == (6, 6)
    store.optimize()
    assert (fragments(store), store.writes_since_compaction) == (2, 0)


def test_uses_are_written_once_usage_batch_summaries_wait(
    open_store: Callable[..., NarrativeStore],
) -> None:
    store = open_store(UpkeepSettings(compact_every=0, usage_batch=3, usage_flush_after_s=3600))
    add_each(store, TEXTS[:3])
    assert len(store.search_keywords(ME, ["第0个"])) == 1
    assert store.usage_pending()[0] == 1  # one summary: below the batch, nothing written
    assert len(store.search_keywords(ME, ["订单"], limit=3)) == 3
    until(lambda: flushes(store) == 1, "wrote the batch")
    assert store.usage_pending() == (0, None)
    assert access_counts(store) == [1, 1, 2]


def test_uses_are_written_once_the_oldest_waited_usage_flush_after(
    open_store: Callable[..., NarrativeStore],
) -> None:
    store = open_store(UpkeepSettings(compact_every=0, usage_batch=10_000, usage_flush_after_s=0.2))
    add_each(store, TEXTS[:2])
    assert len(store.search_keywords(ME, ["第1个"])) == 1
    until(lambda: flushes(store) == 1, "wrote the aged use")
    assert store.usage_pending() == (0, None)
    assert access_counts(store) == [0, 1]


def test_close_writes_the_uses_still_collected(
    open_store: Callable[..., NarrativeStore], tmp_path: Path
) -> None:
    store = open_store(QUIET)
    add_each(store, TEXTS[:3])
    for _ in range(4):
        store.search_keywords(ME, ["订单"], limit=3)
    assert store.usage_pending()[0] == 3
    store.close()
    assert access_counts(open_store(None)) == [4, 4, 4]


class FailingTable:
    """The table, whose second merge fails (a conflict, a full disk): the first is written."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self.merges = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def merge_insert(self, on: Any) -> Any:
        self.merges += 1
        if self.merges == 2:
            raise OSError("No space left on device")
        return self._table.merge_insert(on)


def test_a_failed_flush_gives_back_what_it_did_not_write(
    open_store: Callable[..., NarrativeStore],
) -> None:
    store = open_store(QUIET)
    add_each(store, TEXTS[:3])
    store.search_keywords(ME, ["订单"], limit=3)
    store.search_keywords(ME, ["第0个"])  # one summary used twice: a second merge
    real = store.table
    store.table = FailingTable(real)
    with pytest.raises(OSError, match="No space left"):
        store.flush_usage()
    store.table = real
    assert access_counts(store) == [0, 1, 1]  # the once-used pair: the first merge
    assert store.usage_pending()[0] == 1  # the twice-used summary, not written
    assert store.flush_usage() == 1
    assert access_counts(store) == [1, 1, 2]


@pytest.mark.parametrize(
    ("given_back", "meanwhile", "pending"),
    [
        ({"a": ("张伟", 2, 10.0)}, [], {"a": ("张伟", 2, 10.0)}),
        ({"a": ("张伟", 2, 10.0)}, [("a", "张伟")], {"a": ("张伟", 3, 20.0)}),
        (
            {"a": ("张伟", 1, 10.0)},
            [("b", "李娜")],
            {"a": ("张伟", 1, 10.0), "b": ("李娜", 1, 20.0)},
        ),
    ],
)
def test_uses_given_back_add_to_those_recorded_meanwhile(
    given_back: dict[str, tuple[str, int, float]],
    meanwhile: list[tuple[str, str]],
    pending: dict[str, tuple[str, int, float]],
) -> None:
    buffer = Buffer()
    buffer.record(meanwhile, 20.0)
    buffer.give_back(given_back)
    assert buffer.take() == pending
    assert buffer.pending() == (0, None)


class FakeStore:
    def __init__(self, count: int, oldest: float | None, writes: int) -> None:
        self._pending = (count, oldest)
        self.writes_since_compaction = writes
        self.compacted = False
        self.fails: type[Exception] | None = None

    def usage_pending(self) -> tuple[int, float | None]:
        return self._pending

    def flush_usage(self) -> int:
        if self.fails is not None:
            raise self.fails("Commit conflict for version 12")
        return 0

    def compact(self, *, wait: bool) -> bool:
        if self.fails is not None:
            raise self.fails("Commit conflict for version 12")
        return self.compacted


SETTINGS = UpkeepSettings(compact_every=100, usage_batch=200, usage_flush_after_s=5.0)


@pytest.mark.parametrize(
    ("count", "oldest", "writes", "due"),
    [
        (0, None, 0, (False, False, None)),
        (199, 1000.0, 99, (False, False, 3.0)),  # at 1002: the oldest is due in 3 s
        (200, 1000.0, 0, (True, False, 3.0)),  # a full batch
        (1, 997.0, 0, (True, False, 0.0)),  # the oldest waited 5 s
        (1, 990.0, 0, (True, False, 0.0)),
        (0, None, 100, (False, True, None)),  # compact_every writes
        (0, None, 250, (False, True, None)),
    ],
)
def test_what_is_due(
    count: int, oldest: float | None, writes: int, due: tuple[bool, bool, float | None]
) -> None:
    assert Upkeep(FakeStore(count, oldest, writes), SETTINGS)._due(1002.0) == due


def test_compact_every_0_never_compacts_here() -> None:
    off = UpkeepSettings(compact_every=0)
    assert Upkeep(FakeStore(0, None, 10_000), off)._due(0.0) == (False, False, None)


HOLD = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
"""


def test_no_compaction_while_another_process_holds_the_lock(
    open_store: Callable[..., NarrativeStore], tmp_path: Path
) -> None:
    store = open_store(None)
    add_each(store, TEXTS[:3])
    lock_file = tmp_path / "narrative" / compaction.LOCK_FILE
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        assert store.compact(wait=False) is False
        assert (fragments(store), store.writes_since_compaction) == (3, 3)
    finally:
        other.communicate("\n")
    assert store.compact(wait=False) is True
    assert (fragments(store), store.writes_since_compaction) == (2, 0)


def test_threads_of_one_process_exclude_each_other_too(tmp_path: Path) -> None:
    lock = compaction.lock_for(str(tmp_path / "narrative"))
    seen: list[bool] = []

    def try_it() -> None:
        with compaction.holding(lock, wait=False) as held:
            seen.append(held)

    with compaction.holding(lock, wait=True) as held:
        other = threading.Thread(target=try_it)
        other.start()
        other.join()
    try_it()
    assert (held, seen) == (True, [False, True])


def test_a_url_has_no_lock_file() -> None:
    assert compaction.lock_for("s3://bucket/narrative") is None
    with compaction.holding(None, wait=False) as held:
        assert held is True


def test_another_process_compacting_defers_the_upkeep_to_the_next_write() -> None:
    fake = FakeStore(0, None, 100)
    upkeep = Upkeep(fake, SETTINGS)
    assert upkeep._pass(flush=False, compact=True)
    assert upkeep._due(0.0)[1] is False  # 100 writes: wait for one more
    fake.writes_since_compaction = 101
    assert upkeep._due(0.0)[1] is True
    fake.compacted = True
    assert upkeep._pass(flush=False, compact=True)
    assert upkeep.passes["compactions"] == 1
    fake.writes_since_compaction = 99
    assert upkeep._due(0.0)[1] is False


def test_turns_write_and_read_while_the_table_compacts(
    open_store: Callable[..., NarrativeStore],
) -> None:
    store = open_store(None)
    add_each(store, TEXTS[:6])
    errors: list[BaseException] = []

    def compact_repeatedly() -> None:
        try:
            for _ in range(3):
                store.compact(wait=True)
        except BaseException as e:
            errors.append(e)

    worker = threading.Thread(target=compact_repeatedly)
    worker.start()
    add_each(store, TEXTS[6:])
    found = len(store.search_keywords(ME, ["订单"], limit=20))
    worker.join()
    assert errors == []
    assert found >= 6
    assert len(store.search_keywords(ME, ["订单"], limit=20)) == 12
    assert store.table.count_rows() == 12


def test_a_failed_pass_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeStore(200, 0.0, 100)
    fake.fails = RuntimeError
    upkeep = Upkeep(fake, SETTINGS)
    assert upkeep._pass(flush=True, compact=False) is False  # the uses: again in RETRY_S
    assert upkeep._pass(flush=False, compact=True) is True
    assert upkeep._due(0.0)[1] is False  # the compaction: after compact_every more writes
    fake.writes_since_compaction = 200
    assert upkeep._due(0.0)[1] is True
    assert [r.getMessage() for r in caplog.records] == [
        "writing narrative uses failed; next attempt in 1 s",
        "compacting the narrative store failed",
    ]
    assert upkeep.passes == {"compactions": 0, "flushes": 0}


def test_a_store_sees_what_another_process_wrote(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(narrative, "READ_CONSISTENCY_S", 0.0)  # every read checks
    stores = [
        NarrativeStore(tmp_path / "narrative", HashEmbedder(), MemoryPolicy(), clock=clock)
        for _ in range(2)
    ]
    try:
        assert stores[1].search_keywords(ME, ["订单"]) == []
        add_each(stores[0], TEXTS[:3])
        stores[0].compact()
        got = stores[1].search_keywords(ME, ["订单"], limit=20)
        assert sorted(h.summary.text for h in got) == sorted(TEXTS[:3])
    finally:
        for store in stores:
            store.close()
