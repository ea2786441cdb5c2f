"""Everything a deployment stores, as text to search: every row of every table of a database,
every file of a directory (the narrative store's LanceDB files, every version), the bytes of
a SQLite file and its WAL, and PostgreSQL's WAL."""

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


def sqlite_files(url: str) -> Iterator[tuple[str, str]]:
    """The bytes of a SQLite database file and of its ``-wal`` and ``-journal`` beside it, as
    text: rows deleted or rewritten stay in free pages and WAL frames until overwritten."""
    path = Path(url.removeprefix("sqlite:///"))
    for file in sorted(path.parent.glob(path.name + "*")):
        yield file.name, file.read_bytes().decode("utf-8", errors="ignore")


WalPosition = tuple[str, int]


def wal_position(url: str) -> WalPosition:
    """Where PostgreSQL writes its WAL now: the segment (``pg_walfile_name``) and the offset
    in it (``pg_walfile_name_offset``), so a search from there leaves out what earlier tests
    wrote."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                sa.text("SELECT * FROM pg_walfile_name_offset(pg_current_wal_lsn())")
            ).one()
            return str(row[0]), int(row[1])
    finally:
        engine.dispose()


def postgres_wal(url: str, since: WalPosition) -> Iterator[tuple[str, str]]:
    """The WAL of the server from ``since`` on, segment by segment, as text (read with
    ``pg_read_binary_file``: the test server's user is a superuser). A commit writes its
    records there before it returns; the server's other databases write there too, and only
    the values searched for matter. A segment recycled by a checkpoint meanwhile holds older
    records: the search covers less, never finds what is not there."""
    first, offset = since
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            names = conn.execute(
                sa.text(
                    "SELECT name FROM pg_ls_waldir()"
                    " WHERE name >= :s AND name ~ '^[0-9A-F]{24}$' ORDER BY name"
                ),
                {"s": first},
            ).scalars()
            for name in list(names):
                data = bytes(
                    conn.execute(
                        sa.text("SELECT pg_read_binary_file('pg_wal/' || :n)"), {"n": name}
                    ).scalar_one()
                )
                if name == first:
                    data = data[offset:]
                yield name, data.decode("utf-8", errors="ignore")
    finally:
        engine.dispose()
