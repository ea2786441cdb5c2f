"""Acceptance 2 of the memory issue: ≥ 200 generated Chinese PII strings written through the
write pipeline into the fact store and, as summaries, into the narrative channel — then no raw
value anywhere, read byte-wise (SQLite: the database file and its WAL; PostgreSQL: every column
of every row of the memory tables, as text; LanceDB: every file of its directory, data,
indexes, versions and transactions), and the encrypted values unreadable without the key."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.compile.specs.memory import MemoryPolicy
from charter.contracts.registry import Registry
from charter.memory.crypto import DecryptionError, ValueCipher
from charter.memory.embedders import HashEmbedder
from charter.memory.facts import FactStore
from charter.memory.narrative import NarrativeStore
from charter.memory.pipeline import Candidate, WritePipeline
from charter.memory.records import Accessor, PreparedFact, PreparedSummary
from tests.support.packs import compiled_with_diagnostics
from tests.unit.memory.pii_corpus import CORPUS

ROOT = Path(__file__).resolve().parents[3]
KEY = base64.b64encode(bytes(range(32))).decode()
WRONG = base64.b64encode(bytes(range(1, 33))).decode()


@pytest.fixture(scope="module")
def policy(registry: Registry) -> MemoryPolicy:
    pack, diags = compiled_with_diagnostics("finance")
    assert pack is not None and pack.memory is not None, diags
    return pack.memory


def raw_values() -> list[str]:
    values = {v for sample in CORPUS for v in sample.raw}
    return sorted(values, key=len, reverse=True)


def test_the_corpus() -> None:
    assert len(CORPUS) >= 200
    assert len(raw_values()) >= 250


def _write_all(url: str, policy: MemoryPolicy, registry: Registry) -> list[PreparedFact]:
    pipeline = WritePipeline(policy, registry, key=KEY)
    written = []
    with FactStore(url, policy) as store:
        for n, sample in enumerate(CORPUS):
            accessor = Accessor(f"user-{n % 37:03d}", "agent", use="billing")
            fact = pipeline.prepare(
                accessor, Candidate(f"profile_{n}", sample.sentence, domain="billing")
            )
            if isinstance(fact, PreparedFact):
                store.write(accessor, fact)
                written.append(fact)
    return written


def _dump(url: str) -> str:
    """Every value of every row of the memory tables, as text."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            md = sa.MetaData()
            md.reflect(conn)
            parts = []
            for name, table in md.tables.items():
                if name.startswith("memory_"):
                    for row in conn.execute(sa.select(table)):
                        parts.extend(str(v) for v in row)
            return "\n".join(parts)
    finally:
        engine.dispose()


def test_no_raw_value_reaches_the_sqlite_file(
    memory_sqlite_url: str, policy: MemoryPolicy, registry: Registry
) -> None:
    written = _write_all(memory_sqlite_url, policy, registry)
    assert len(written) >= 150  # the rest were dropped by policy, never stored
    path = Path(memory_sqlite_url.removeprefix("sqlite:///"))
    blob = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    assert len(blob) > 0
    leaked = [v for v in raw_values() if v.encode("utf-8") in blob]
    assert leaked == []
    text = _dump(memory_sqlite_url)
    assert [v for v in raw_values() if v in text] == []


def test_no_raw_value_reaches_postgresql(
    memory_pg_url: str, policy: MemoryPolicy, registry: Registry
) -> None:
    _write_all(memory_pg_url, policy, registry)
    text = _dump(memory_pg_url)
    assert len(text) > 0
    assert [v for v in raw_values() if v in text] == []


def test_encrypted_values_are_unreadable_without_the_key(
    memory_sqlite_url: str, policy: MemoryPolicy, registry: Registry
) -> None:
    written = _write_all(memory_sqlite_url, policy, registry)
    encrypted = [f for f in written if f.encrypted]
    assert len(encrypted) >= 150  # IDs L3, phones and addresses L2: finance encrypts them all
    right, wrong = ValueCipher(base64.b64decode(KEY)), ValueCipher(base64.b64decode(WRONG))
    raw = raw_values()
    for fact in encrypted:
        plain = right.decrypt(fact.value, user_id=fact.user_id, fact_key=fact.key)
        assert not any(v in plain for v in raw)  # even decrypted, it was redacted first
        with pytest.raises(DecryptionError):
            wrong.decrypt(fact.value, user_id=fact.user_id, fact_key=fact.key)


def _lance_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file())


def test_no_raw_value_reaches_the_lancedb_directory(
    tmp_path: Path, policy: MemoryPolicy, registry: Registry
) -> None:
    pipeline = WritePipeline(policy, registry, key=KEY)
    store = NarrativeStore(tmp_path / "lance", HashEmbedder(), policy)
    for n, sample in enumerate(CORPUS):
        accessor = Accessor(f"user-{n % 37:03d}", "agent", use="billing")
        summary = pipeline.prepare_summary(accessor, sample.sentence, domain="billing")
        assert isinstance(summary, PreparedSummary)
        store.add(accessor, [summary])
    store.optimize()  # compacted files and full indexes hold what the store holds
    blob = _lance_bytes(tmp_path / "lance")
    assert store.table.count_rows("status = 'active'") == len(CORPUS)
    assert [v for v in raw_values() if v.encode("utf-8") in blob] == []


def test_the_lancedb_scan_finds_a_raw_value_when_one_is_stored(
    tmp_path: Path, policy: MemoryPolicy
) -> None:
    """The scan above can fail: the same store given an unscrubbed sentence holds its bytes."""
    store = NarrativeStore(tmp_path / "lance", HashEmbedder(), policy)
    sample = CORPUS[0]
    store.add(
        Accessor("u1", "agent", use="billing"), [PreparedSummary("u1", sample.sentence, "billing")]
    )
    blob = _lance_bytes(tmp_path / "lance")
    assert [v for v in sample.raw if v.encode("utf-8") in blob] == list(sample.raw)
