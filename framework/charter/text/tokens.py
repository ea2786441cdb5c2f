"""The words BM25 sees in a Chinese (or mixed) text, shared by the FAQ
(``charter.compile.specs.faq``) and the narrative channel's hybrid recall
(``charter.memory.narrative.recall``), so that a question is cut the same way whichever of them
it meets.

NFKC (full-width ＳＫＵ１００ becomes SKU100) and case folding, then jieba's search mode
(``rjieba``, jieba-rs with its dictionary inside the wheel: nothing is read or downloaded at run
time), which adds the shorter words inside a long one (新能源 also gives 能源, SKU-A100 also SKU
and A100) so that a paraphrase still shares them; then pure punctuation and the Chinese stop
words of ``bm25s`` (的, 吗, 怎么, 哪些 ...) are dropped: they say nothing about the topic. The
FAQ's module docstring says why these libraries (speed, maintenance, measured there).

``K1``, ``B`` and ``idf`` are the BM25 parameters both use (Lucene's IDF, as ``bm25s`` computes
it with ``method="lucene"``).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import unicodedata
from pathlib import Path

K1 = 1.5
B = 0.75
Tokens = tuple[str, ...]


@functools.cache
def _stopwords() -> frozenset[str]:
    """bm25s's Chinese stop list, read from its own module file: importing ``bm25s.stopwords``
    would run the package's ``__init__`` and with it numpy, which compiling a pack (every
    ``charter validate``) does not need — only a lookup does."""
    spec = importlib.util.find_spec("bm25s")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bm25s is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "stopwords.py"
    loader = importlib.util.spec_from_file_location("_charter_bm25s_stopwords", path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return frozenset(module.STOPWORDS_CHINESE)


def tokenize(text: str) -> Tokens:
    """The words of ``text`` that BM25 sees: see the module docstring."""
    # imported on first use: loading jieba's dictionary takes ~0.1 s, and unpickling a
    # compiled pack with a FAQ (a cached ``charter validate``) needs no word cut
    import rjieba

    norm = unicodedata.normalize("NFKC", text).casefold()
    return tuple(
        tok
        for tok in rjieba.cut_for_search(norm)
        if tok not in _stopwords() and any(ch.isalnum() for ch in tok)
    )


def idf(df: int, n: int) -> float:
    """Lucene's IDF of a word found in ``df`` of ``n`` documents (never negative)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))
