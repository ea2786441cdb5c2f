"""Shared memory and its federation: versions, the local cache, and on PostgreSQL a write in one
process refreshing the cache of another through LISTEN/NOTIFY (seed 000 §6.1)."""

from __future__ import annotations

import multiprocessing as mp
import threading
from typing import Any

from charter.memory.shared import SharedMemory


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_versions_grow_and_the_cache_answers(memory_sqlite_url: str) -> None:
    with SharedMemory(memory_sqlite_url) as pool:
        assert pool.get("product-x") is None
        first = pool.put("product-x", "在售", updated_by="sales-agent")
        second = pool.put("product-x", "已停产", updated_by="support-agent")
        assert (first.version, second.version) == (1, 2)
        got = pool.get("product-x")
        assert got is not None and (got.value, got.version, got.updated_by) == (
            "已停产",
            2,
            "support-agent",
        )


def test_without_notifications_a_cached_fact_expires(memory_sqlite_url: str) -> None:
    clock = Clock()
    with (
        SharedMemory(memory_sqlite_url, max_age_s=5, clock=clock) as reader,
        SharedMemory(memory_sqlite_url) as writer,
    ):
        writer.put("agreement", "V2.0", updated_by="legal")
        assert reader.get("agreement").value == "V2.0"  # type: ignore[union-attr]
        writer.put("agreement", "V3.0", updated_by="legal")
        clock.now = 4.9
        assert reader.get("agreement").value == "V2.0"  # type: ignore[union-attr]
        clock.now = 5.0
        assert reader.get("agreement").value == "V3.0"  # type: ignore[union-attr]


def test_listen_is_a_no_op_on_sqlite(memory_sqlite_url: str) -> None:
    with SharedMemory(memory_sqlite_url) as pool:
        pool.listen()
        assert pool._listener is None


def test_a_notification_refreshes_another_instance(memory_pg_url: str) -> None:
    refreshed = threading.Event()
    with (
        SharedMemory(memory_pg_url, max_age_s=3600, on_refresh=lambda k: refreshed.set()) as a,
        SharedMemory(memory_pg_url) as b,
    ):
        b.put("product-x", "在售", updated_by="sales")
        a.listen()
        assert a.get("product-x").value == "在售"  # type: ignore[union-attr]
        b.put("product-x", "已停产", updated_by="support")
        assert refreshed.wait(10), "no notification arrived"
        assert a.get("product-x").value == "已停产"  # type: ignore[union-attr]


def _listener(url: str, ready: Any, seen: Any) -> None:
    got = threading.Event()
    with SharedMemory(url, max_age_s=3600, on_refresh=lambda k: got.set()) as pool:
        pool.listen()
        ready.set()
        if got.wait(15):
            fact = pool.get("agreement")
            seen.put(None if fact is None else (fact.value, fact.version))
        else:
            seen.put("timeout")


def test_a_write_in_one_process_reaches_the_cache_of_another(memory_pg_url: str) -> None:
    ctx = mp.get_context("spawn")
    ready, seen = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_listener, args=(memory_pg_url, ready, seen))
    proc.start()
    try:
        assert ready.wait(30), "the listening process did not start"
        with SharedMemory(memory_pg_url) as writer:
            writer.put("agreement", "服务协议V3.0生效", updated_by="legal")
        assert seen.get(timeout=30) == ("服务协议V3.0生效", 1)
    finally:
        proc.join(timeout=30)
        if proc.is_alive():
            proc.terminate()
    assert proc.exitcode == 0
