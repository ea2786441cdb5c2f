"""Recognition by examples at run time (ARCHITECTURE §6a): an input the keyword triggers did
not decide is embedded once and ranked against the pack's compiled examples.

``Understander.hear(text)`` embeds the input (as a query, on the embedder the examples were
embedded with) and returns what the examples say (``Heard``). The embedding of the last text
is kept, so one turn never embeds its input twice. When the agent runs another embedder than
the one the pack compiled with, the examples are embedded again and refitted when it starts
(``for_embedder``): similarities of two embedders live on different scales.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from charter.compile.specs.goals import GoalsSpec
from charter.compile.specs.understanding import Decision, Heard, UnderstandingSpec
from charter.compile.understanding import embed, fit
from charter.contracts.models import Embedder
from charter.goals.segments import clauses


def clauses_of(text: str) -> list[str]:
    return [text[s:e] for s, e in clauses(text)]


NOTHING = Heard(Decision.NONE)
MAX_PIECES = 4  # clauses a screened input is judged by, beside the whole
MIN_PIECE = 4  # characters: a shorter clause (好的) says nothing on its own


def _pieces(text: str) -> list[str]:
    parts = [p.strip() for p in clauses_of(text)]
    parts = [p for p in parts if len(p) >= MIN_PIECE]
    return parts[:MAX_PIECES] if len(parts) > 1 else []


class Understander:
    """The pack's examples and the embedder that reads inputs against them."""

    def __init__(self, spec: UnderstandingSpec, embedder: Embedder) -> None:
        self.spec = spec
        self.embedder = embedder
        self._last: tuple[str, Heard] | None = None
        self._lock = threading.Lock()
        self.embedded = 0  # inputs embedded so far (a turn embeds at most one)

    @classmethod
    def for_embedder(
        cls,
        goals: GoalsSpec,
        compiled: UnderstandingSpec | None,
        embedder: Embedder,
        name: str,
    ) -> Understander | None:
        """The pack's understander on ``embedder`` (named ``name``): the compiled examples
        when they were embedded by it, else embedded and fitted again now."""
        if compiled is not None and compiled.embedder == name:
            return cls(compiled, embedder)
        if not any(i.examples for i in goals.intents):
            return None

        def embed_texts(texts: Sequence[str]) -> np.ndarray:
            return embed(embedder, texts)

        spec = fit(goals, name, embed_texts)
        return cls(spec, embedder) if spec is not None else None

    def screens(self, text: str) -> bool:
        """The input, or one of its clauses, is worded near a safety example."""
        pieces = (text, *_pieces(text))
        return any(len(p) >= MIN_PIECE and self.spec.screens(p) for p in pieces)

    def vector(self, text: str) -> np.ndarray:
        row: np.ndarray = embed(self.embedder, [text])[0]
        return row

    def safety(self, text: str, *, lead: float = 0.0) -> tuple[str, ...]:
        """The safety intents an input a keyword decided is about (the screen let it through),
        judged strictly: in the whole input or in one of its clauses (挂号先不急，孩子刚抽过去了
        一次), a safety intent over its band that leads every ordinary intent by ``lead``. The
        whole input's answer is kept for ``hear``."""
        pieces = [text, *(c for c in _pieces(text) if c != text)]
        rows = embed(self.embedder, pieces)
        found: list[str] = []
        for n, row in enumerate(rows):
            heard = self.spec.hear(row)
            ranking = heard.ranking
            if n == 0:
                with self._lock:
                    self.embedded += 1
                    self._last = (text, heard)
            unvetoed = [s for s in ranking if s.vetoed_by is None]
            if not unvetoed or unvetoed[0].intent not in heard.safety:
                continue
            top = unvetoed[0]
            ordinary = [s.score for s in unvetoed if s.intent not in self.spec.safety]
            if top.score - max(ordinary, default=-1.0) >= lead:
                found.append(top.intent)
        return tuple(dict.fromkeys(found))

    def hear(self, text: str) -> Heard:
        """What the examples say about ``text`` (the same text: the same answer, embedded
        once)."""
        with self._lock:
            if self._last is not None and self._last[0] == text:
                return self._last[1]
        heard = self.spec.hear(self.vector(text))
        with self._lock:
            self.embedded += 1
            self._last = (text, heard)
        return heard


__all__ = ["NOTHING", "Understander"]
