"""Characters and character bigrams hashed into a fixed number of signed buckets: a vector
in which texts sharing words are close, the same text giving the same vector in every process
(crc32; no model, ~50 µs per short text). The ``hash`` embedder (``charter.memory.embedders``)
and the safety screen of understanding (``charter.compile.specs.understanding``) use it."""

from __future__ import annotations

import itertools
import math
import zlib


def gram_vector(text: str, dim: int = 384) -> list[float]:
    """Whitespace ignored, ASCII lower-cased, L2-normalised; an empty text a fixed unit
    vector."""
    chars = [c for c in text.lower() if not c.isspace()]
    grams = chars + [a + b for a, b in itertools.pairwise(chars)]
    vec = [0.0] * dim
    for gram in grams:
        h = zlib.crc32(gram.encode("utf-8"))
        vec[h % dim] += 1.0 if (h >> 31) & 1 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:
        vec[0], norm = 1.0, 1.0
    return [x / norm for x in vec]
