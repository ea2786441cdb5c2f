"""The fact channel's migrations: component ``memory`` in the shared version table, next to the
goal store's; applied once; the result is exactly what ``tables.py`` declares, including the
unique partial index that keeps one active fact per (user, key)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from charter.goals.store import GoalStore
from charter.memory.facts import FactStore
from charter.memory.facts.migrations import COMPONENT, MEMORY_MIGRATIONS
from charter.memory.facts.tables import TABLES
from charter.store.migrations import (
    SCHEMA_TABLE,
    SchemaError,
    make_engine,
    migrate,
    schema_versions,
)

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _python_type(t: Any) -> object:
    if isinstance(t, sa.types.TypeDecorator):  # SQLModel's AutoString and friends
        t = t.impl_instance
    try:
        return t.python_type
    except NotImplementedError:
        return type(t).__name__


def test_migrated_once_next_to_the_goal_store(memory_db_url: str) -> None:
    engine = make_engine(memory_db_url)
    assert migrate(engine, component=COMPONENT, migrations=MEMORY_MIGRATIONS) == [1]
    assert migrate(engine, component=COMPONENT, migrations=MEMORY_MIGRATIONS) == []
    GoalStore(memory_db_url).close()
    FactStore(memory_db_url).close()
    assert (schema_versions(engine, "memory"), schema_versions(engine, "goals")) == ([1], [1])
    with engine.connect() as conn:
        query = f"SELECT component, version, name FROM {SCHEMA_TABLE} ORDER BY component"
        assert [tuple(r) for r in conn.execute(sa.text(query))] == [
            ("goals", 1, "goal_tree, goal_context, goal_history"),
            ("memory", 1, "memory_fact, memory_audit"),
        ]
    engine.dispose()


def test_the_migrated_schema_is_what_tables_py_declares(memory_db_url: str) -> None:
    engine = make_engine(memory_db_url)
    migrate(engine, component=COMPONENT, migrations=MEMORY_MIGRATIONS)
    inspector = sa.inspect(engine)
    for table in TABLES:
        got = {
            c["name"]: (c["nullable"], _python_type(c["type"]))
            for c in inspector.get_columns(table.name)
        }
        want = {c.name: (c.nullable, _python_type(c.type)) for c in table.columns}
        assert got == want, table.name
        assert inspector.get_pk_constraint(table.name)["constrained_columns"] == [
            c.name for c in table.primary_key
        ]
        assert {
            (i["name"], tuple(i["column_names"]), bool(i["unique"]))
            for i in inspector.get_indexes(table.name)
        } == {(i.name, tuple(c.name for c in i.columns), bool(i.unique)) for i in table.indexes}
    partial = {i["name"]: i for i in inspector.get_indexes("memory_fact")}[
        "ux_memory_fact_active_key"
    ]
    where = " ".join(str(v) for v in partial.get("dialect_options", {}).values())
    assert "active" in where  # unique among active rows only: history rows share the key
    engine.dispose()


def test_a_second_active_row_for_a_key_is_impossible(memory_db_url: str) -> None:
    engine = make_engine(memory_db_url)
    migrate(engine, component=COMPONENT, migrations=MEMORY_MIGRATIONS)
    row = {
        "user_id": "u1", "key": "city", "value": "x", "memory_type": "fact", "level": "L0",
        "encrypted": False, "confidence": 1.0, "source": "default", "domain": "default",
        "created_at": T0, "updated_at": T0,
        "value_score": 0.0, "access_count": 0, "weight": 1.0, "tier": "hot",
    }  # fmt: skip
    table = TABLES[0]
    with engine.begin() as conn:
        conn.execute(table.insert(), {**row, "id": "a", "status": "superseded"})
        conn.execute(table.insert(), {**row, "id": "b", "status": "superseded"})
        conn.execute(table.insert(), {**row, "id": "c", "status": "active"})
        conn.execute(table.insert(), {**row, "id": "d", "status": "active", "user_id": "u2"})
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(table.insert(), {**row, "id": "e", "status": "active"})
    engine.dispose()


def test_a_newer_memory_schema_is_refused(memory_db_url: str) -> None:
    FactStore(memory_db_url).close()
    engine = make_engine(memory_db_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(f"INSERT INTO {SCHEMA_TABLE} VALUES ('memory', 2, 'future', :at)"),
            {"at": "2030-01-01 00:00:00"},
        )
    with pytest.raises(SchemaError, match="memory schema is at version 2"):
        FactStore(memory_db_url)
    GoalStore(memory_db_url).close()  # the goal store's component is not concerned
    engine.dispose()
