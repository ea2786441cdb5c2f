"""Shared memory and its federation: versions, the local cache, namespaces and the listing a
turn reads, and on PostgreSQL a write in one process refreshing the cache of another through
LISTEN/NOTIFY (seed 000 §6.1)."""

from __future__ import annotations

import multiprocessing as mp
import threading
from typing import Any

import pytest

from charter.memory.shared import SharedMemory, SharedSettings


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


def test_namespaces_keep_their_facts_apart(memory_sqlite_url: str) -> None:
    with (
        SharedMemory(memory_sqlite_url, namespace="acme") as acme,
        SharedMemory(memory_sqlite_url, namespace="globex") as globex,
        SharedMemory(memory_sqlite_url) as bare,
    ):
        acme.put("保温杯", "已停产", updated_by="ops")
        bare.put("保温杯", "在售", updated_by="ops")
        assert globex.get("保温杯") is None
        assert globex.facts() == ()
        assert acme.get("保温杯").value == "已停产"  # type: ignore[union-attr]
        assert [(f.key, f.value) for f in acme.facts()] == [("保温杯", "已停产")]
        assert [(f.key, f.value) for f in bare.facts()] == [("保温杯", "在售")]


def test_mentioned_finds_keys_in_the_text_and_among_the_names(memory_sqlite_url: str) -> None:
    with SharedMemory(memory_sqlite_url, namespace="acme") as pool:
        for key, value in (
            ("保温杯", "已停产"),
            ("智能手表", "新品上市"),
            ("服务协议", "V3.0生效"),
            ("coupon", "满300减30"),
            ("杯", "one character: only by name"),
        ):
            pool.put(key, value, updated_by="ops")
        got = pool.mentioned("保温杯和服务协议的事", ["coupon", "杯", "SKU-A100"])
        assert [f.key for f in got] == ["coupon", "服务协议", "保温杯", "杯"]  # longest first
        assert pool.mentioned("你好") == ()


def test_the_listing_follows_writes_and_expires_like_get(memory_sqlite_url: str) -> None:
    clock = Clock()
    with (
        SharedMemory(memory_sqlite_url, namespace="acme", max_age_s=5, clock=clock) as reader,
        SharedMemory(memory_sqlite_url, namespace="acme") as writer,
    ):
        assert reader.facts() == ()
        writer.put("保温杯", "已停产", updated_by="ops")
        clock.now = 4.9
        assert reader.facts() == ()
        clock.now = 5.0
        assert [f.key for f in reader.facts()] == ["保温杯"]
        reader.put("智能手表", "新品", updated_by="ops")  # its own write is listed at once
        assert [f.key for f in reader.facts()] == ["保温杯", "智能手表"]


def test_keys_and_namespaces_are_checked(memory_sqlite_url: str) -> None:
    with pytest.raises(ValueError, match="a shared-memory namespace is a name such as"):
        SharedMemory(memory_sqlite_url, namespace="Acme Support")
    with SharedMemory(memory_sqlite_url, namespace="acme") as pool:
        with pytest.raises(ValueError, match="a shared fact needs a key"):
            pool.put(" ", "x", updated_by="ops")
        with pytest.raises(ValueError, match="may not hold a control character"):
            pool.put("a\x1fb", "x", updated_by="ops")
        with pytest.raises(ValueError, match="at most 200 characters, not 201"):
            pool.put("k" * 201, "x", updated_by="ops")


def test_settings_from_the_configuration() -> None:
    assert SharedSettings.from_config("", "acme", "coupon") is None
    got = SharedSettings.from_config(
        " sqlite:///shared.db ", "acme", "price-query.product, coupon,"
    )
    assert got == SharedSettings(
        "sqlite:///shared.db", "acme", frozenset({"price-query.product", "coupon"})
    )


def test_a_notification_of_another_namespace_is_ignored(memory_pg_url: str) -> None:
    refreshed: list[str] = []
    seen = threading.Event()

    def note(key: str) -> None:
        refreshed.append(key)
        seen.set()

    with (
        SharedMemory(memory_pg_url, namespace="acme", max_age_s=3600, on_refresh=note) as a,
        SharedMemory(memory_pg_url, namespace="globex") as other,
        SharedMemory(memory_pg_url, namespace="acme") as writer,
    ):
        a.listen()
        assert a.facts() == ()
        other.put("保温杯", "在售", updated_by="ops")
        writer.put("保温杯", "已停产", updated_by="ops")
        assert seen.wait(10), "no notification arrived"
        assert refreshed == ["保温杯"]
        assert [(f.key, f.value) for f in a.facts()] == [("保温杯", "已停产")]
