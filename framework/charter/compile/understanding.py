"""Compile stage ``understanding``: the examples of goals.yaml embedded once, and each intent's
decision bands fitted from them (ARCHITECTURE §6a); the result is a ``UnderstandingSpec``.

The fit is deterministic and uses only the pack's own files — the ``examples`` of every
intent, their ``not_examples`` and the pack's ``out_of_scope`` — each held out in turn
(leave-one-out: it is ranked against all the others):

* an ordinary intent's ``open`` band is the candidate threshold (every held-out score of an
  example, plus ``EPS``) with the best F0.5 — precision counts double — over the held-out rows
  whose best intent it is: its own examples are hits, any other row a false alarm; a tie goes to
  the higher threshold. Its ``ask`` band ("您是想…吗") lies halfway between ``open`` and the
  highest score an ``out_of_scope`` utterance reaches for the intent (what unrelated talk
  reaches), or lower, down to where the held-out rows in the band stop being right more often
  than wrong; with no out-of-scope utterance under ``open`` there is no middle band.
* a safety intent's ``open`` band is recall-first: the same search, over the held-out rows it
  could open (within ``SAFETY_LEAD`` of their best ordinary intent), maximising F2 — recall
  counts four times — instead.
* the safety screen: ``SCREEN_SLACK`` of the character overlap (``gram_vector``) by which a
  safety example finds another of its intent (its lower quartile); a turn a keyword decided is
  embedded only when its wording is that near a safety example's.
* the clarifying ``margin`` is the lead under which a question pays: among the held-out
  examples whose own intent came first or second, the lead that turns the most confusions into
  a question, less the right answers it would also question; between ``MIN_MARGIN`` and
  ``MAX_MARGIN``.

Written ``threshold:`` on an intent pins its ``open`` band, ``understanding: {margin: }`` the
margin. Another embedder refits, since its similarities live on another scale. The test
phrases of ``tests/intents.yaml`` are not fitted on: they stay held out, to measure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from charter.compile.specs import goals as S
from charter.compile.specs.understanding import (
    NOT,
    OUT_OF_SCOPE,
    SAFETY_LEAD,
    Band,
    Decision,
    Heard,
    LooRow,
    Scored,
    UnderstandingSpec,
    decide,
    rank_rows,
)
from charter.compile.vectors import VectorStore
from charter.contracts.models import Embedder
from charter.text.grams import gram_vector

EPS = 1e-4
SCREEN_SLACK = 0.9
SCREEN_QUANTILE = 0.25
SAFETY_BETA = 2.0
MIN_MARGIN = 0.003
MAX_MARGIN = 0.015
# where no example of an intent is ever its best held-out intent, nothing can be fitted: the
# band sits above every similarity, so its examples only ever clarify or confirm
UNREACHABLE = 1.01


def rows(spec: S.GoalsSpec) -> tuple[list[str], list[str]]:
    """Every utterance to embed, with its label: the intent, ``!intent`` or ``""``."""
    labels: list[str] = []
    texts: list[str] = []
    for intent in spec.intents:
        for text in intent.examples:
            labels.append(intent.id)
            texts.append(text)
        for text in intent.not_examples:
            labels.append(NOT + intent.id)
            texts.append(text)
    for text in spec.out_of_scope:
        labels.append(OUT_OF_SCOPE)
        texts.append(text)
    return labels, texts


def embed(embedder: Embedder, texts: Sequence[str], store: VectorStore | None = None) -> np.ndarray:
    """Unit rows of float32 (a question on each side: e5's ``query:``); through ``store``
    when given, so that a text is embedded once per model."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    if store is not None:
        m = store.embed(embedder, texts, query=True)
    else:
        m = np.asarray(embedder.embed(list(texts), query=True), dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = (m / norms).astype(np.float32)
    return out


def fit(
    spec: S.GoalsSpec,
    embedder_name: str,
    embed_texts: Callable[[Sequence[str]], np.ndarray],
) -> UnderstandingSpec | None:
    """The pack's understanding spec, or None when no intent has examples."""
    labels, texts = rows(spec)
    intents = [i for i in spec.intents if i.examples]
    if not intents:
        return None
    matrix = embed_texts(texts)
    order = tuple(i.id for i in spec.intents)
    sims = matrix @ matrix.T
    held = [rank_rows(labels, texts, sims[r], order, skip=r) for r in range(len(texts))]
    safety = {i.id for i in spec.intents if i.safety}
    bands = []
    for intent in intents:
        if intent.safety:
            bands.append(_safety_band(intent, labels, held, safety))
        else:
            bands.append(_band(intent, labels, held, safety))
    margin = spec.margin if spec.margin is not None else _margin(labels, held, safety)
    draft = UnderstandingSpec(
        embedder=embedder_name,
        labels=tuple(labels),
        texts=tuple(texts),
        vectors=matrix.astype(np.float32).tobytes(),
        dim=int(matrix.shape[1]),
        bands=tuple(bands),
        margin=margin,
        order=order,
    )
    loo = tuple(
        _loo_row(texts[r], labels[r], decide(held[r], draft.bands, margin))
        for r in range(len(texts))
        if not labels[r].startswith(NOT)
    )
    screen = _screen(labels, texts, safety)
    return dataclasses.replace(draft, loo=loo, screen=screen, screen_all=spec.safety_every_turn)


def _screen(labels: Sequence[str], texts: Sequence[str], safety: set[str]) -> float | None:
    """``SCREEN_SLACK`` of the character overlap by which a safety example, held out, finds
    another example of its intent, at the ``SCREEN_QUANTILE`` of the examples (the least would
    let through nearly every input of the pack): an emergency worded like the examples is
    embedded even when an ordinary keyword fires (挂号先不急，孩子抽过去了)."""
    grams = np.asarray([gram_vector(t) for t in texts], dtype=np.float64)
    found = []
    for n, label in enumerate(labels):
        if label not in safety:
            continue
        same = [m for m, other in enumerate(labels) if m != n and other == label]
        if same:
            found.append(float((grams[same] @ grams[n]).max()))
    if not found:
        return None
    found.sort()
    return round(found[int(len(found) * SCREEN_QUANTILE)] * SCREEN_SLACK, 4)


def _top(ranking: Sequence[Scored], safety: set[str]) -> Scored | None:
    return next((s for s in ranking if s.intent not in safety and s.vetoed_by is None), None)


def _band(
    intent: S.IntentSpec,
    labels: Sequence[str],
    held: Sequence[tuple[Scored, ...]],
    safety: set[str],
) -> Band:
    hits: list[float] = []
    false: list[float] = []
    for label, ranking in zip(labels, held, strict=True):
        top = _top(ranking, safety)
        if top is None or top.intent != intent.id:
            continue
        (hits if label == intent.id else false).append(top.score)
    pinned = intent.threshold is not None
    unrelated = [
        s.score
        for label, ranking in zip(labels, held, strict=True)
        if label == OUT_OF_SCOPE
        for s in ranking
        if s.intent == intent.id
    ]
    if not hits:
        open_ = UNREACHABLE
        ask = UNREACHABLE
    else:
        open_ = _best_f(hits, false)
        ask = min(_ask(hits, false, open_), _middle(open_, unrelated))
    if intent.threshold is not None:
        open_ = intent.threshold
        ask = min(ask, open_)
    return Band(intent.id, round(open_, 4), round(ask, 4), pinned=pinned)


def _best_f(hits: Sequence[float], false: Sequence[float], beta: float = 0.5) -> float:
    best, best_t = -1.0, max(hits) + EPS
    b2 = beta * beta
    for t in sorted({h for h in hits} | {f + EPS for f in false}, reverse=True):
        tp = sum(h >= t for h in hits)
        fp = sum(f >= t for f in false)
        if tp == 0:
            continue
        precision = tp / (tp + fp)
        recall = tp / len(hits)
        f = (1 + b2) * precision * recall / (b2 * precision + recall)
        if f > best + 1e-12:  # strictly better: a tie keeps the higher threshold
            best, best_t = f, t
    return best_t


def _ask(hits: Sequence[float], false: Sequence[float], open_: float) -> float:
    """The lowest threshold under ``open_`` down to which the rows in the band are more
    often right than wrong."""
    ask = open_
    for t in sorted({h for h in hits if h < open_}, reverse=True):
        tp = sum(t <= h < open_ for h in hits)
        fp = sum(t <= f < open_ for f in false)
        if tp > fp:
            ask = t
        else:
            break
    return ask


def _middle(open_: float, unrelated: Sequence[float]) -> float:
    """Halfway from ``open_`` down to what out-of-scope talk reaches (``open_`` when it
    reaches that high, or when there is none)."""
    top = max(unrelated, default=None)
    if top is None or top >= open_:
        return open_
    return (open_ + top) / 2


def _safety_band(
    intent: S.IntentSpec,
    labels: Sequence[str],
    held: Sequence[tuple[Scored, ...]],
    safety: set[str],
) -> Band:
    hits: list[float] = []
    false: list[float] = []
    for label, ranking in zip(labels, held, strict=True):
        mine = next((s for s in ranking if s.intent == intent.id), None)
        if mine is None or mine.vetoed_by is not None:
            continue
        best = next((s.score for s in ranking if s.intent not in safety and not s.vetoed_by), -1.0)
        if mine.score + SAFETY_LEAD < best:
            continue  # another intent is nearer: the safety intent cannot open here
        (hits if label == intent.id else false).append(mine.score)
    open_ = _best_f(hits, false, beta=SAFETY_BETA) if hits else UNREACHABLE
    if intent.threshold is not None:
        open_ = intent.threshold
    return Band(
        intent.id,
        round(open_, 4),
        round(open_, 4),
        pinned=intent.threshold is not None,
        safety=True,
    )


def _margin(labels: Sequence[str], held: Sequence[tuple[Scored, ...]], safety: set[str]) -> float:
    """The lead under which a clarifying question pays: over the held-out examples whose own
    intent is first or second, the margin that turns the most confusions (own intent second)
    into a question, less the right answers (own intent first) it would also question."""
    right: list[float] = []
    wrong: list[float] = []
    for label, ranking in zip(labels, held, strict=True):
        if not label or label.startswith(NOT) or label in safety:
            continue
        ordinary = [s for s in ranking if s.intent not in safety and s.vetoed_by is None]
        if len(ordinary) < 2 or label not in (ordinary[0].intent, ordinary[1].intent):
            continue
        lead = ordinary[0].score - ordinary[1].score
        (right if ordinary[0].intent == label else wrong).append(lead)
    best, margin = 0, MIN_MARGIN
    for m in sorted({x + EPS for x in wrong if x + EPS <= MAX_MARGIN}):
        gain = sum(x < m for x in wrong) - sum(x < m for x in right)
        if gain > best:
            best, margin = gain, m
    return round(max(MIN_MARGIN, margin), 4)


def _loo_row(text: str, label: str, heard: Heard) -> LooRow:
    safety = heard.safety[0] if heard.safety else None
    if safety is not None:
        return LooRow(text, label, safety, "safety")
    decided = heard.intents[0] if heard.decision is Decision.OPEN else ""
    return LooRow(text, label, decided, str(heard.decision))
