"""What a pack's examples compile to (ARCHITECTURE §6a): every example, ``not_examples`` and
``out_of_scope`` utterance embedded once, and each intent's decision bands fitted from them
(``charter.compile.understanding``). Immutable and picklable: it travels inside the cached
CompiledPack, so a warm compile embeds nothing.

Ranking an input (``rank``): an intent's score is the mean similarity of its ``TOP_K``
nearest examples (one close example is not enough when another intent has several nearly as
close); a ``not_examples`` utterance of the intent, or an ``out_of_scope`` one, nearer to the
input than the intent's own nearest example vetoes it. ``decide`` turns the ranking into one
of: open (a clear winner over its ``open`` band), clarify (the two best within ``margin`` of
each other, both over their ``ask`` bands), confirm (the best over its ``ask`` band only:
"您是想…吗"), or none. Similarities are compared with thresholds and margins, never for
equality, so the same pack and input decide alike on any machine (a decision within float
noise of a threshold aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING

from charter.text.grams import gram_vector

TOP_K = 2
# recall first: a safety intent over its band opens even when an ordinary intent scores up to
# this much higher (an emergency said in plain words resembles ordinary requests)
SAFETY_LEAD = 0.01
OUT_OF_SCOPE = ""  # the label of an out_of_scope example
NOT = "!"  # the label of a not_example of intent x is "!x"

if TYPE_CHECKING:  # numpy loads when a pack is used, not when a cached one is read
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]


class Decision(StrEnum):
    OPEN = "open"
    CLARIFY = "clarify"
    CONFIRM = "confirm"
    NONE = "none"


@dataclass(frozen=True)
class Band:
    """An intent's thresholds: ``open`` opens it (with a lead of ``margin``), ``ask`` asks
    "您是想…吗"; ``pinned`` when the pack wrote them."""

    intent: str
    open: float
    ask: float
    pinned: bool = False
    safety: bool = False


@dataclass(frozen=True)
class Scored:
    intent: str
    score: float
    nearest: str  # its nearest example
    vetoed_by: str | None = None  # the not_example or out_of_scope utterance nearer than it


@dataclass(frozen=True)
class Heard:
    """What the examples say about one input."""

    decision: Decision
    intents: tuple[str, ...] = ()  # open/confirm: one; clarify: the two
    ranking: tuple[Scored, ...] = ()
    safety: tuple[str, ...] = ()  # safety intents the examples open

    def as_dict(self) -> dict[str, object]:
        return {
            "decision": str(self.decision),
            "intents": list(self.intents),
            "safety": list(self.safety),
            "ranking": [
                {
                    "intent": s.intent,
                    "score": round(s.score, 4),
                    "nearest": s.nearest,
                    **({"vetoed_by": s.vetoed_by} if s.vetoed_by else {}),
                }
                for s in self.ranking[:5]
            ],
        }


@dataclass(frozen=True)
class LooRow:
    """One example held out of the fit: what the others decide for it."""

    text: str
    expected: str
    decided: str  # an intent id, or "" for none
    how: str  # a Decision


@dataclass(frozen=True)
class UnderstandingSpec:
    embedder: str
    labels: tuple[str, ...]  # per row: an intent id, "!<intent>" or "" (out of scope)
    texts: tuple[str, ...]
    vectors: bytes  # float32, row-major, len(texts) x dim, each row unit length
    dim: int
    bands: tuple[Band, ...]
    margin: float
    order: tuple[str, ...]  # the pack's intents in file order: ties go to the earlier
    loo: tuple[LooRow, ...] = field(default=(), compare=False)
    # the safety screen: an input whose characters are this close to a safety example's
    # (``gram_vector``) is embedded even when a keyword decided it (None: no safety examples)
    screen: float | None = None
    screen_all: bool = (
        False  # the pack wants every input screened (understanding: safety_every_turn)
    )

    @cached_property
    def matrix(self) -> Vector:
        import numpy as np

        m = np.frombuffer(self.vectors, dtype=np.float32).reshape(len(self.texts), self.dim)
        return m

    @cached_property
    def screen_matrix(self) -> Vector:
        rows = [
            gram_vector(t)
            for t, label in zip(self.texts, self.labels, strict=True)
            if label in self.safety
        ]
        import numpy as np

        return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)

    def screens(self, text: str) -> bool:
        """The input's wording is near a safety example's: the examples must see it."""
        if self.screen_all and self.safety:
            return True
        if self.screen is None or not len(self.screen_matrix):
            return False
        import numpy as np

        query = np.asarray(gram_vector(text), dtype=np.float32)
        return float((self.screen_matrix @ query).max()) >= self.screen

    def band(self, intent: str) -> Band | None:
        return next((b for b in self.bands if b.intent == intent), None)

    @property
    def safety(self) -> frozenset[str]:
        return frozenset(b.intent for b in self.bands if b.safety)

    def rank(self, query: Vector, *, skip: int | None = None) -> tuple[Scored, ...]:
        """The intents by score, best first; ``skip``: a row left out (leave-one-out)."""
        return rank_rows(self.labels, self.texts, self.matrix @ query, self.order, skip=skip)

    def decide(self, ranking: Sequence[Scored]) -> Heard:
        return decide(ranking, self.bands, self.margin)

    def hear(self, query: Vector) -> Heard:
        """The decision for one input: ``decide`` on its ranking, where a safety intent opens
        only when the pack's nearest utterance to the input is no near miss (a ``not_examples``
        or ``out_of_scope`` one): 化验结果几天能拿 nearest 体检报告什么时候出 is known ordinary
        talk, however near an emergency's examples it also lies."""
        sims = self.matrix @ query
        heard = decide(
            rank_rows(self.labels, self.texts, sims, self.order), self.bands, self.margin
        )
        nearest = self.labels[int(sims.argmax())] if len(sims) else OUT_OF_SCOPE
        if heard.safety and (nearest == OUT_OF_SCOPE or nearest.startswith(NOT)):
            return replace(heard, safety=())
        return heard


def rank_rows(
    labels: Sequence[str],
    texts: Sequence[str],
    sims: npt.NDArray[np.float32],
    order: Sequence[str],
    *,
    skip: int | None = None,
) -> tuple[Scored, ...]:
    by: dict[str, list[tuple[float, int]]] = {}
    for row, label in enumerate(labels):
        if row != skip:
            by.setdefault(label, []).append((float(sims[row]), row))
    out: list[Scored] = []
    oos = max(by.get(OUT_OF_SCOPE, []), default=None)
    for intent in order:
        own = sorted(by.get(intent, []), reverse=True)
        if not own:
            continue
        top = own[:TOP_K]
        score = sum(s for s, _ in top) / len(top)
        best = own[0]
        veto: tuple[float, int] | None = None
        against = [x for x in (max(by.get(NOT + intent, []), default=None), oos) if x]
        for other in against:
            if other[0] > best[0] and (veto is None or other[0] > veto[0]):
                veto = other
        out.append(
            Scored(intent, score, texts[best[1]], texts[veto[1]] if veto is not None else None)
        )
    rank = {i: n for n, i in enumerate(order)}
    out.sort(key=lambda s: (-s.score, rank[s.intent]))
    return tuple(out)


def decide(ranking: Sequence[Scored], bands: Sequence[Band], margin: float) -> Heard:
    """Safety intents over their (low) ``open`` band open whatever else; among the others,
    the best not vetoed decides (see the module docstring)."""
    by = {b.intent: b for b in bands}
    ordinary = [
        s
        for s in ranking
        if (b := by.get(s.intent)) is not None and not b.safety and s.vetoed_by is None
    ]
    best = ordinary[0].score if ordinary else -1.0
    safety = tuple(
        s.intent
        for s in ranking
        if (b := by.get(s.intent)) is not None
        and b.safety
        and s.vetoed_by is None
        and s.score >= b.open
        and s.score + SAFETY_LEAD >= best
    )
    ranked = tuple(ranking)
    if not ordinary:
        return Heard(Decision.NONE, (), ranked, safety)
    top = ordinary[0]
    second = ordinary[1] if len(ordinary) > 1 else None
    tb = by[top.intent]
    if top.score < tb.ask:
        return Heard(Decision.NONE, (), ranked, safety)
    if (
        second is not None
        and top.score - second.score < margin
        and second.score >= by[second.intent].ask
    ):
        return Heard(Decision.CLARIFY, (top.intent, second.intent), ranked, safety)
    if top.score >= tb.open:
        return Heard(Decision.OPEN, (top.intent,), ranked, safety)
    return Heard(Decision.CONFIRM, (top.intent,), ranked, safety)
