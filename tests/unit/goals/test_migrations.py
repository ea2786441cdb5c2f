"""Versioned migrations: applied once, in order, in one transaction, also when threads and
processes race to migrate the same database; the result is exactly what ``tables.py`` says."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from charter.goals.migrations import GOAL_MIGRATIONS, migrate, schema_versions
from charter.goals.store import GoalStore
from charter.goals.tables import TABLES
from charter.store.migrations import SCHEMA_TABLE, Migration, SchemaError, make_engine


def tables_in(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def test_a_fresh_database_is_migrated_once(goal_db_url: str) -> None:
    engine = make_engine(goal_db_url)
    assert schema_versions(engine) == []
    assert migrate(engine) == [1]
    assert migrate(engine) == []
    assert schema_versions(engine) == [1]
    assert tables_in(engine) == {SCHEMA_TABLE, "goal_tree", "goal_context", "goal_history"}
    with engine.connect() as conn:
        query = f"SELECT component, version, name FROM {SCHEMA_TABLE}"
        assert [tuple(r) for r in conn.execute(sa.text(query))] == [
            ("goals", 1, "goal_tree, goal_context, goal_history")
        ]
    engine.dispose()


def _python_type(t: Any) -> object:
    if isinstance(t, sa.types.TypeDecorator):  # SQLModel's AutoString and friends
        t = t.impl_instance
    try:
        return t.python_type
    except NotImplementedError:
        return type(t).__name__


def test_the_migrated_schema_is_what_tables_py_declares(goal_db_url: str) -> None:
    engine = make_engine(goal_db_url)
    migrate(engine)
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
            (i["name"], tuple(i["column_names"])) for i in inspector.get_indexes(table.name)
        } == {(i.name, tuple(c.name for c in i.columns)) for i in table.indexes}
        assert {
            (tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]))
            for f in inspector.get_foreign_keys(table.name)
        } == {
            (
                tuple(fk.parent.name for fk in c.elements),
                c.referred_table.name,
                tuple(fk.column.name for fk in c.elements),
            )
            for c in table.foreign_key_constraints
        }
    engine.dispose()


def test_a_newer_database_is_refused_with_a_message(goal_db_url: str) -> None:
    engine = make_engine(goal_db_url)
    migrate(engine)
    with engine.begin() as conn:
        conn.execute(
            sa.text(f"INSERT INTO {SCHEMA_TABLE} VALUES ('goals', 2, 'future', :at)"),
            {"at": "2030-01-01 00:00:00"},
        )
    with pytest.raises(SchemaError) as caught:
        migrate(engine)
    assert str(caught.value) == (
        "the database's goals schema is at version 2, newer than this Charter knows (1): "
        "upgrade Charter or use another database"
    )
    with pytest.raises(SchemaError):
        GoalStore(goal_db_url)
    engine.dispose()


def test_migrations_must_be_numbered_in_order(goal_sqlite_url: str) -> None:
    engine = make_engine(goal_sqlite_url)
    skipping = (GOAL_MIGRATIONS[0], Migration(3, "three", lambda conn: None))
    with pytest.raises(ValueError, match=r"numbered 1, 2, 3 \.\.\. in order, got \[1, 3\]"):
        migrate(engine, migrations=skipping)
    assert tables_in(engine) == set()
    engine.dispose()


def _boom(conn: Connection) -> None:
    conn.execute(sa.text("CREATE TABLE half_made (x INTEGER)"))
    raise RuntimeError("boom")


def test_a_failing_migration_leaves_nothing_behind(goal_db_url: str) -> None:
    engine = make_engine(goal_db_url)
    with_boom = (*GOAL_MIGRATIONS, Migration(2, "boom", _boom))
    with pytest.raises(RuntimeError, match="boom"):
        migrate(engine, migrations=with_boom)
    assert tables_in(engine) == set()  # version 1 ran in the same transaction: rolled back too
    assert migrate(engine) == [1]
    with pytest.raises(RuntimeError, match="boom"):
        migrate(engine, migrations=with_boom)
    assert "half_made" not in tables_in(engine)
    assert schema_versions(engine) == [1]
    engine.dispose()


def test_threads_racing_to_migrate_apply_each_migration_once(goal_db_url: str) -> None:
    calls: list[str] = []

    def slow(conn: Connection) -> None:
        calls.append(threading.current_thread().name)
        conn.execute(sa.text("CREATE TABLE race_marker (x INTEGER)"))
        time.sleep(0.05)  # widens the window in which another migrator could slip in

    racers = 8
    barrier = threading.Barrier(racers)
    applied: list[list[int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        engine = make_engine(goal_db_url)  # each its own engine: as separate processes would
        try:
            barrier.wait()
            applied.append(migrate(engine, "race", (Migration(1, "slow", slow),)))
            applied.append(migrate(engine))
        except BaseException as exc:
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=run, name=f"m{i}") for i in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(calls) == 1
    assert sorted(applied) == [[]] * (2 * racers - 2) + [[1], [1]]
    engine = make_engine(goal_db_url)
    assert (schema_versions(engine, "race"), schema_versions(engine)) == ([1], [1])
    engine.dispose()


MIGRATE_IN_A_PROCESS = """
import sys
from charter.goals.migrations import migrate
from charter.store.migrations import make_engine
print(migrate(make_engine(sys.argv[1])))
"""


def test_processes_racing_to_migrate_apply_each_migration_once(goal_db_url: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE_IN_A_PROCESS, goal_db_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outputs]
    assert sorted(out.strip() for out, _ in outputs) == ["[1]", "[]", "[]", "[]"]


def test_sqlite_connections_use_wal_a_busy_timeout_and_foreign_keys(goal_sqlite_url: str) -> None:
    engine = make_engine(goal_sqlite_url)
    with engine.connect() as conn:
        pragmas = [
            conn.exec_driver_sql(f"PRAGMA {p}").scalar()
            for p in ("journal_mode", "busy_timeout", "synchronous", "foreign_keys")
        ]
    assert pragmas == ["wal", 5000, 1, 1]
    engine.dispose()


def test_an_in_memory_sqlite_store_works() -> None:
    with GoalStore("sqlite://") as store:
        goal = store.create("x", user_id="u", session_id="s")
        assert store.transition(goal.id, "active", actor="agent", trigger="t").ok
        assert [h.to_status for h in store.history(goal.id)] == ["pending", "active"]
