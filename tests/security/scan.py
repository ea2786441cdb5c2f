"""Everything a deployment stores, as text to search: every row of every table of a database
and every file of a directory (the narrative store's LanceDB files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa


def database_text(url: str) -> Iterator[tuple[str, str]]:
    """``(table, row as text)`` for every row of every table."""
    engine = sa.create_engine(url)
    try:
        meta = sa.MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            for table in meta.sorted_tables:
                for row in conn.execute(sa.select(table)):
                    yield table.name, " ".join(str(v) for v in row)
    finally:
        engine.dispose()


def directory_text(path: Path) -> Iterator[tuple[str, str]]:
    if not path.exists():
        return
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        yield str(file.relative_to(path)), file.read_bytes().decode("utf-8", errors="ignore")


def lance_text(path: Path) -> Iterator[tuple[str, str]]:
    """``(table, row as text)`` for every row of every LanceDB table under ``path``: its files
    may be compressed, its rows are what a reader gets back."""
    if not path.exists():
        return
    import lancedb

    db = lancedb.connect(str(path))
    for name in db.list_tables().tables:
        for row in db.open_table(name).to_arrow().to_pylist():
            yield name, " ".join(str(v) for k, v in row.items() if k != "vector")
