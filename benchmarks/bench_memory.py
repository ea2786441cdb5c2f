"""How fast does ``FactStore.get`` find a user's fact by key among 1,000,000, against raw
``sqlite3`` doing the same on the same file?

A temporary SQLite file gets its schema from the store's migrations, then N facts (U users x K
keys, the store's columns and indexes) loaded with one ``executemany`` in one transaction. Then
L lookups of seeded random (user, key) pairs, each timed on its own (``perf_counter_ns``, the
garbage collector off), through three sides that take turns round by round (which goes first
rotates):

* ``FactStore.get``: what a read is: the indexed lookup, the policy check, the use bump
  (``access_count``, ``last_used_at``) and the audit row, in one transaction;
* raw ``sqlite3``, the same statements: ``BEGIN IMMEDIATE``; the same indexed ``SELECT``; the
  same ``UPDATE``; the same audit ``INSERT``; ``COMMIT``; with the store's pragmas;
* raw ``sqlite3``, the ``SELECT`` alone, no transaction: what the lookup costs without the audit
  and the use bump every read must write; reported for scale, not a target.

Before anything is reported it asserts that the three sides found the same value for every
lookup. Targets: the store's p99 <= 2 ms; the store's p50 within 3x of the same statements'.

    python benchmarks/bench_memory.py [--quick] [--check] [--json FILE]

``--check`` exits 1 when a target is missed (otherwise the exit status is 0: it is a report);
``--quick`` loads few facts and runs one round (for the smoke test); ``--json`` writes the
figures. It also measures write throughput through the whole write pipeline (target ≥ 1,000
facts/s without embedding), narrative recall at 100,000 summaries of 1,000 users against numpy
brute force (target p99 ≤ 15 ms, the same top-1 for every query) and the embedder's throughput
(reported): see ``bench_narrative.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy
from bench_narrative import embedding_throughput, narrative_recall
from bench_support import Section

from charter.memory.facts import FactStore
from charter.memory.records import Accessor
from charter.store.migrations import SQLITE_BUSY_TIMEOUT_MS

TARGET_P99_MS = 2.0
TARGET_RATIO = 3.0  # store p50 / raw same-statements p50
SEED = 20240501
T0 = "2024-05-01 10:00:00.000000"  # how SQLAlchemy writes an aware UTC time on SQLite


@dataclass(frozen=True)
class Settings:
    facts: int
    users: int
    lookups: int
    rounds: int

    @property
    def keys(self) -> int:
        return self.facts // self.users


FULL = Settings(facts=1_000_000, users=10_000, lookups=20_000, rounds=3)
QUICK = Settings(facts=5_000, users=100, lookups=500, rounds=1)


# ---- write throughput through the whole pipeline -------------------------------------------

TARGET_WRITES_PER_S = 1000.0
_SENTENCES = (
    "请把发票寄到浙江省杭州市西湖区文三路{n}号，联系电话13812345678",
    "我的尺码是M，颜色要黑色，第{n}次下单",
    "下周二下午三点前给我回电，号码是13900001234",
    "我对青霉素过敏，第{n}次就诊时医生说过",
    "以后都用尾号{n:04d}的卡付款",
)


def pipeline_throughput(settings: Settings) -> Section:
    """Facts per second from what the user said to a committed row: the write pipeline (intent
    filter, PII recognizers and the policy's redaction, AES-GCM at L2+, value score, validity)
    then ``FactStore.write`` (supersede check, insert, audit row) on a fresh SQLite file, with
    the finance pack's memory policy. No embedding: the narrative channel is not part of it.
    Its baseline is ``FactStore.write`` alone on the same already prepared facts, to show what
    the pipeline itself costs."""
    import base64
    import os

    from charter.compile.api import compile_path
    from charter.memory.facts import FactStore
    from charter.memory.pipeline import Candidate, WritePipeline
    from charter.memory.records import Accessor, PreparedFact
    from charter.plugins.host import default_registry

    registry, _ = default_registry()
    pack, diags = compile_path(
        Path(__file__).resolve().parents[1] / "domains" / "finance", registry, cache_dir=None
    )
    if pack is None or pack.memory is None:
        raise SystemExit("the finance pack does not compile:\n" + "\n".join(map(str, diags)))
    policy = pack.memory
    key = base64.b64encode(os.urandom(32)).decode()
    pipeline = WritePipeline(policy, registry, key=key)
    count = 200 if settings is QUICK else 5000
    users = [f"user-{i:04d}" for i in range(100)]
    candidates = [
        (
            Accessor(users[i % len(users)], "agent", use="billing"),
            Candidate(
                f"note_{i % 7}", _SENTENCES[i % len(_SENTENCES)].format(n=i), domain="billing"
            ),
        )
        for i in range(count)
    ]
    with tempfile.TemporaryDirectory(prefix="charter-bench-pipeline-") as tmp:
        store = FactStore(f"sqlite:///{tmp}/full.db", policy)
        started = time.perf_counter()
        for accessor, candidate in candidates:
            fact = pipeline.prepare(accessor, candidate)
            if isinstance(fact, PreparedFact):
                store.write(accessor, fact)
        full_s = time.perf_counter() - started
        prepared = [(a, pipeline.prepare(a, c)) for a, c in candidates]
        written = sum(isinstance(f, PreparedFact) for _, f in prepared)
        assert written == count, f"the pipeline dropped {count - written} of {count} facts"
        only = FactStore(f"sqlite:///{tmp}/store.db", policy)
        started = time.perf_counter()
        for accessor, fact in prepared:
            if isinstance(fact, PreparedFact):
                only.write(accessor, fact)
        store_s = time.perf_counter() - started
        store.close()
        only.close()
    full, bare = count / full_s, count / store_s
    lines = [
        f"write pipeline, finance memory policy, {count} facts from {len(users)} users, SQLite:",
        f"  {'pipeline + FactStore.write':<32}{full:>10,.0f} facts/s",
        f"  {'FactStore.write alone':<32}{bare:>10,.0f} facts/s   (the same facts, prepared)",
        f"  {'pipeline share of the time':<32}{(full_s - store_s) / full_s:>10.0%}",
        "  embedding: not part of it (measured below)",
    ]
    return Section(
        lines=lines,
        targets=[
            (
                f"full write pipeline {full:,.0f} facts/s >= {TARGET_WRITES_PER_S:,.0f}",
                full >= TARGET_WRITES_PER_S,
            )
        ],
        figures={"facts": count, "pipeline_per_s": round(full, 1), "store_per_s": round(bare, 1)},
    )


# ---- the fact lookup -----------------------------------------------------------------------

_COLUMNS = (
    "id, user_id, key, value, memory_type, level, encrypted, confidence, source, domain, status, "
    "created_at, updated_at, valid_until, entity_ref, intent_type, consent_source, value_score, "
    "supersedes, contradicts, access_count, last_used_at, weight, tier"
)
_LOAD = f"INSERT INTO memory_fact ({_COLUMNS}) VALUES ({', '.join('?' * 24)})"


def user_id(u: int) -> str:
    return f"u{u:05d}"


def key_of(k: int) -> str:
    return f"key{k:03d}"


def value_of(u: int, k: int) -> str:
    return f"value {u} {k}"


def _rows(settings: Settings) -> Iterator[tuple[Any, ...]]:
    n = 0
    for u in range(settings.users):
        for k in range(settings.keys):
            n += 1
            entity = f"E{u:05d}{k:03d}" if k % 10 == 0 else None
            yield (
                f"f{n:08d}", user_id(u), key_of(k), value_of(u, k), "fact", "L0", 0, 0.9,
                "user_confirmed", "default", "active", T0, T0, None, entity, f"intent{k % 5}",
                None, 0.0, None, None, 0, None, 1.0, "hot",
            )  # fmt: skip


def load(path: Path, settings: Settings) -> float:
    """Make the schema through the store, then load the facts; seconds the load took."""
    FactStore(f"sqlite:///{path}").close()
    t0 = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=OFF")  # loading only: the timed sides use NORMAL
        conn.execute("PRAGMA cache_size=-400000")
        conn.execute("BEGIN")
        conn.executemany(_LOAD, _rows(settings))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return time.perf_counter() - t0


def lookups(settings: Settings) -> list[tuple[int, int]]:
    rng = random.Random(SEED)
    return [
        (rng.randrange(settings.users), rng.randrange(settings.keys))
        for _ in range(settings.lookups)
    ]


Side = Callable[[Path, Sequence[tuple[int, int]]], tuple[list[int], list[str]]]


def store_side(path: Path, pairs: Sequence[tuple[int, int]]) -> tuple[list[int], list[str]]:
    """ns per ``FactStore.get`` and the values it found."""
    clock = time.perf_counter_ns
    times: list[int] = []
    values: list[str] = []
    accessors = {u: Accessor(user_id(u), "bench") for u, _ in pairs}
    with FactStore(f"sqlite:///{path}") as store:
        store.get(accessors[pairs[0][0]], key_of(pairs[0][1]))  # the pool's first connection
        for u, k in pairs:
            t0 = clock()
            fact = store.get(accessors[u], key_of(k))
            times.append(clock() - t0)
            values.append(fact.value if fact is not None else "")
    return times, values


_SELECT = (
    f"SELECT {_COLUMNS} FROM memory_fact WHERE user_id = ? AND status = 'active' "
    "AND (valid_until IS NULL OR valid_until > ?) AND key = ?"
)
_BUMP = (
    "UPDATE memory_fact SET access_count = access_count + 1, last_used_at = ?, weight = 1.0, "
    "tier = 'hot' WHERE id = ? AND user_id = ?"
)
_AUDIT = (
    "INSERT INTO memory_audit (at, actor, role, user_id, action, memory_id, allowed, reason) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", f"busy_timeout={SQLITE_BUSY_TIMEOUT_MS}"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def raw_side(path: Path, pairs: Sequence[tuple[int, int]]) -> tuple[list[int], list[str]]:
    """ns per lookup with the store's statements through ``sqlite3``."""
    clock = time.perf_counter_ns
    times: list[int] = []
    values: list[str] = []
    conn = _connect(path)
    try:
        for u, k in pairs:
            t0 = clock()
            uid, now = user_id(u), _now()
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute(_SELECT, (uid, now, key_of(k))).fetchone()
            reason = f"get {key_of(k)}"
            if row is not None:
                conn.execute(_BUMP, (now, row[0], uid))
                conn.execute(_AUDIT, (now, "bench", "agent", uid, "read", row[0], 1, reason))
            conn.execute("COMMIT")
            times.append(clock() - t0)
            values.append(row[3] if row is not None else "")
    finally:
        conn.close()
    return times, values


def select_side(path: Path, pairs: Sequence[tuple[int, int]]) -> tuple[list[int], list[str]]:
    """ns per bare indexed ``SELECT`` through ``sqlite3``: no transaction, no bookkeeping."""
    clock = time.perf_counter_ns
    times: list[int] = []
    values: list[str] = []
    conn = _connect(path)
    try:
        for u, k in pairs:
            t0 = clock()
            row = conn.execute(_SELECT, (user_id(u), _now(), key_of(k))).fetchone()
            times.append(clock() - t0)
            values.append(row[3] if row is not None else "")
    finally:
        conn.close()
    return times, values


SIDES: dict[str, Side] = {"store": store_side, "raw": raw_side, "select": select_side}
LABELS = {
    "store": "FactStore.get",
    "raw": "raw sqlite3, same statements",
    "select": "raw sqlite3, the SELECT alone",
}


@dataclass(frozen=True)
class Lookup:
    load_s: float
    ns: dict[str, list[int]]  # every sample of every round, per side

    def p(self, side: str, q: int) -> float:
        """The q-th percentile in ms."""
        cuts = statistics.quantiles(self.ns[side], n=100, method="inclusive")
        return (statistics.median(self.ns[side]) if q == 50 else cuts[q - 1]) / 1e6

    @property
    def ratio(self) -> float:
        return self.p("store", 50) / self.p("raw", 50)


def measure(settings: Settings) -> Lookup:
    pairs = lookups(settings)
    expected = [value_of(u, k) for u, k in pairs]
    ns: dict[str, list[int]] = {name: [] for name in SIDES}
    with tempfile.TemporaryDirectory(prefix="charter-bench-memory-") as tmp:
        path = Path(tmp) / "facts.db"
        load_s = load(path, settings)
        names = list(SIDES)
        for r in range(settings.rounds):
            gc.collect()
            gc.disable()
            try:
                for name in names[r % 3 :] + names[: r % 3]:
                    times, values = SIDES[name](path, pairs)
                    if values != expected:
                        wrong = sum(a != b for a, b in zip(values, expected, strict=True))
                        raise AssertionError(
                            f"the sides disagree: {LABELS[name]} found another value for "
                            f"{wrong} of {len(pairs)} lookups"
                        )
                    ns[name] += times
            finally:
                gc.enable()
    return Lookup(load_s, ns)


def report(settings: Settings, m: Lookup, extra: Sequence[Section]) -> list[tuple[str, bool]]:
    print(
        f"Charter fact store benchmark: lookup by (user, key) among {settings.facts:,} facts "
        f"({settings.users:,} users x {settings.keys} keys), {settings.lookups:,} lookups x "
        f"{settings.rounds} round(s), SQLite {sqlite3.sqlite_version} in WAL mode on a temporary "
        f"file, Python {sys.version.split()[0]}, SQLAlchemy {sqlalchemy.__version__}"
    )
    print(f"  loaded in {m.load_s:.1f} s (executemany, one transaction)")
    print()
    print(f"  {'per lookup, every round':<34}{'p50 ms':>9}{'p99 ms':>9}")
    for name in SIDES:
        print(f"  {LABELS[name]:<34}{m.p(name, 50):>9.3f}{m.p(name, 99):>9.3f}")
    print(f"  {'store p50 / same statements p50':<34}{m.ratio:>8.2f}x")
    bare = m.p("store", 50) / m.p("select", 50)
    print(f"  {'store p50 / SELECT alone p50':<34}{bare:>8.2f}x   (for scale, not a target)")
    print()
    print(
        f"outcomes: the three sides found the same value for all {settings.lookups:,} lookups: OK"
    )
    store_p99 = m.p("store", 99)
    targets = [
        (f"store p99 <= {TARGET_P99_MS:g} ms ({store_p99:.3f} ms)", store_p99 <= TARGET_P99_MS),
        (
            f"store within {TARGET_RATIO:g}x of raw sqlite3, same statements ({m.ratio:.2f}x)",
            m.ratio <= TARGET_RATIO,
        ),
    ]
    for section in extra:
        print()
        for line in section.lines:
            print(line)
        targets += section.targets
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few facts, one round (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL

    lookup = measure(settings)
    pipeline = pipeline_throughput(settings)
    recall_lines, recall_targets, recall = narrative_recall(args.quick)
    embed_lines, embedding = embedding_throughput(args.quick)
    sections = [
        pipeline,
        Section(recall_lines, recall_targets, recall),
        Section(embed_lines, [], embedding),
    ]
    targets = report(settings, lookup, sections)

    if args.json is not None:
        figures = {
            "settings": settings.__dict__,
            "load_s": round(lookup.load_s, 2),
            "lookup_ms": {
                name: {"p50": round(lookup.p(name, 50), 4), "p99": round(lookup.p(name, 99), 4)}
                for name in SIDES
            },
            "ratio": round(lookup.ratio, 3),
            "pipeline": pipeline.figures,
            "narrative_recall": recall,
            "embedding": embedding,
            "targets": [{"target": text, "ok": ok} for text, ok in targets],
        }
        args.json.write_text(
            json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
