"""The pack's FAQ (``faq.yaml``): what the ``degrade_to_faq`` fallback answers from (seed 001
§4.3: a skill that cannot answer still helps when a prepared answer matches).

Every phrasing of an entry (its question and each alternate) is one BM25 document; an entry
scores as its best phrasing. Answers are not searched: they are long and would only add noise
to question-to-question matching, and an author who wants more recall adds alternates.

**Normalised score.** A raw BM25 score grows with the number and rarity of the query's words, so
one threshold cannot serve every corpus and query. The score reported is the raw score divided
by the query's *self-score*: what a phrasing made of exactly the query's words would get in this
corpus (the same IDF, k1, b and average length), capped at 1. So it reads as the share of the
query's weight the entry carries: 1 when the entry says everything the query says, 0.5 when it
matches words worth half of it. A query word no phrasing contains counts in the self-score with
the IDF of an unseen word (the largest there is), so a question about something the FAQ never
mentions scores low even when it shares a common word with an entry. A phrasing shorter than
the query that holds all of its words can score above its self-score; that is what the cap is
for. ``min_score`` (default 0.35) is on this scale.

**Tokens** (``charter.text.tokens``, shared with the narrative channel's recall). NFKC
(full-width ＳＫＵ１００ becomes SKU100) and case folding, then jieba's search mode, which
adds the shorter words inside a long one (新能源 also gives 能源, SKU-A100 also SKU and A100) so
that a paraphrase still shares them; then pure punctuation and the Chinese stop
words of bm25s (的, 吗, 怎么, 哪些 ...) are dropped: they say nothing about the topic.

**Libraries**, measured here over 1,000 generated questions and 2,000 queries:

* ``bm25s`` (0.3.16, released 2026-10; numpy only): scores are precomputed into a sparse
  matrix, ~11 µs per query. ``rank-bm25`` (0.2.2, last release 2022-02) scores in Python per
  query, ~270 µs. ``get_scores(..., weight_mask=)`` restricts to a skill's entries.
* ``rjieba`` (0.2.2, released 2026-10): the binding of jieba-rs, its dictionary compiled into
  the extension (nothing is read or downloaded at run time), typed; ~1 µs per query.
  ``jieba`` (0.42.1, last release 2020-01) segments the same in search mode on our texts but
  takes ~15 µs, builds its prefix dictionary on first use (~0.6 s), writes a cache file into the
  temp directory and logs to stderr.

**Pickling.** A compiled pack is cached with pickle, and that cache is keyed on Charter's
version, not its dependencies'. So the pickle holds only the entries and their token lists; the
bm25s retriever, the skill masks and the IDF table are rebuilt from them on the first lookup
after unpickling (a few ms for 1,000 entries). Two threads racing there build the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from charter.diagnostics import Location
from charter.text.tokens import K1, B, Tokens, tokenize
from charter.text.tokens import idf as _idf

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_MIN_SCORE = 0.35
DEFAULT_DIRECT_SCORE = 0.9


@dataclass(frozen=True)
class FaqEntry:
    id: str
    question: str
    answer: str
    alternates: tuple[str, ...] = ()
    skills: frozenset[str] = frozenset()  # empty: the fallback of every skill
    location: Location | None = None

    @property
    def phrasings(self) -> tuple[str, ...]:
        return (self.question, *self.alternates)

    def serves(self, skill: str | None) -> bool:
        return skill is None or not self.skills or skill in self.skills


@dataclass(frozen=True)
class FaqMatch:
    entry: FaqEntry
    score: float  # normalised, 0..1


@dataclass(frozen=True)
class _Built:
    """What a lookup needs beyond the pickled state; rebuilt after unpickling."""

    retriever: Any  # bm25s.BM25
    starts: npt.NDArray[np.intp]  # first document of each entry that has any
    entry_of_group: npt.NDArray[np.intp]  # the entry of each of those groups
    idf: Mapping[str, float]
    unseen_idf: float
    avgdl: float
    masks: Mapping[str, npt.NDArray[np.float32]]  # by skill named in some entry
    universal: npt.NDArray[np.float32]  # the entries without skills:


@dataclass(frozen=True)
class FaqIndex:
    """The FAQ, tokenised once; ``lookup`` ranks entries for a query. Immutable, picklable."""

    entries: tuple[FaqEntry, ...]
    min_score: float
    # (entry index, tokens) per phrasing that has any; entries are contiguous and in order
    docs: tuple[tuple[int, Tokens], ...]
    # an input that opens a request with nothing of it given is answered from here up
    direct_score: float = DEFAULT_DIRECT_SCORE
    _built: _Built | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        entries: Iterable[FaqEntry],
        min_score: float = DEFAULT_MIN_SCORE,
        direct_score: float = DEFAULT_DIRECT_SCORE,
    ) -> FaqIndex:
        entries = tuple(entries)
        docs = tuple(
            (i, tokens)
            for i, entry in enumerate(entries)
            for tokens in map(tokenize, entry.phrasings)
            if tokens
        )
        # the BM25 index is built at the first lookup
        return cls(entries, min_score, docs, direct_score)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "min_score": self.min_score,
            "docs": self.docs,
            "direct_score": self.direct_score,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in ("entries", "min_score", "docs", "direct_score"):
            object.__setattr__(self, name, state[name])
        object.__setattr__(self, "_built", None)

    def _index(self) -> _Built | None:
        if self._built is not None or not self.docs:
            return self._built
        import bm25s  # type: ignore[import-untyped]
        import numpy as np

        owners = np.fromiter((i for i, _ in self.docs), dtype=np.intp, count=len(self.docs))
        corpus = [list(tokens) for _, tokens in self.docs]
        retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        retriever.index(corpus, show_progress=False)
        n = len(corpus)
        # the same document frequencies and IDF (Lucene's) that bm25s computes, for self-scores
        df = Counter(tok for doc in corpus for tok in set(doc))
        entry_of_group, starts = np.unique(owners, return_index=True)
        skills = {s for e in self.entries for s in e.skills}
        built = _Built(
            retriever=retriever,
            starts=starts.astype(np.intp),
            entry_of_group=entry_of_group.astype(np.intp),
            idf={tok: _idf(count, n) for tok, count in df.items()},
            unseen_idf=_idf(0, n),
            avgdl=sum(map(len, corpus)) / n,
            masks={s: self._mask(owners, s) for s in sorted(skills)},
            universal=self._mask(owners, ""),
        )
        object.__setattr__(self, "_built", built)
        return built

    def _mask(self, owners: npt.NDArray[np.intp], skill: str) -> npt.NDArray[np.float32]:
        import numpy as np

        serves = np.array([self.entries[i].serves(skill) for i in owners], dtype=bool)
        return serves.astype(np.float32)

    def self_score(self, tokens: Sequence[str]) -> float:
        """The BM25 score, in this corpus, of a phrasing made of exactly ``tokens`` (each
        once, as a query counts them)."""
        built = self._index()
        tokens = tuple(dict.fromkeys(tokens))
        if built is None or not tokens:
            return 0.0
        norm = K1 * (1 - B + B * len(tokens) / built.avgdl)
        return sum(built.idf.get(t, built.unseen_idf) / (1 + norm) for t in tokens)

    def lookup(
        self, query: str, *, skill: str | None = None, k: int = 1, min_score: float | None = None
    ) -> list[FaqMatch]:
        """The best ``k`` entries scoring at least ``min_score`` (the FAQ's unless given), best
        first; with ``skill``, only entries serving it. A miss is ``[]``."""
        built = self._index()
        tokens = tuple(dict.fromkeys(tokenize(query)))
        if built is None or k < 1 or not tokens:
            return []
        vocab = built.retriever.vocab_dict
        if not any(t in vocab for t in tokens):
            return []
        mask = None if skill is None else built.masks.get(skill, built.universal)
        raw = built.retriever.get_scores(list(tokens), weight_mask=mask)
        import numpy as np

        best = np.maximum.reduceat(raw, built.starts) / self.self_score(tokens)
        floor = self.min_score if min_score is None else min_score
        order = np.argsort(-best, kind="stable")[:k]
        out = []
        for group in order:
            score = min(1.0, float(best[group]))
            if score <= 0.0 or score < floor:
                break
            out.append(FaqMatch(self.entries[int(built.entry_of_group[group])], score))
        return out

    def candidates(self, query: str, k: int = 3) -> dict[str, Any]:
        """The best ``k`` entries for ``query`` whatever their score, with the two thresholds
        they are held to: what ``charter chat --trace``, ``charter trace`` and ``charter check
        --explain`` show, so that ``min_score`` and ``direct_score`` can be tuned."""
        return {
            "min_score": self.min_score,
            "direct_score": self.direct_score,
            "candidates": [
                {"id": m.entry.id, "question": m.entry.question, "score": round(m.score, 3)}
                for m in self.lookup(query, k=k, min_score=0.0)
            ],
        }
