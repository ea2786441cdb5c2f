"""Issue 16, points 11 and 12: database faults are answers a client and an operator can act on.

Point 11: a read-only database (reads wrote audit rows: every request was a 500), a locked
SQLite file (a 500 after 40 s), terminated PostgreSQL connections (a 500, no retry) and a
``/v1/health`` that said ``ok`` through all of it. Each fault is reproduced for real: the
database itself refuses (SQLite's ``query_only``, PostgreSQL's
``default_transaction_read_only``, set on every connection the service takes from its pools;
another connection holding SQLite's write lock; ``pg_terminate_backend`` on the service's
backends).

Point 12: ``charter serve`` on a database it cannot open exited 3 with a crash log; it exits 1
with the reason in one line, the password masked.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import Pool

from tests.support.postgres import PG_URL, postgres_problem
from tests.support.serve import KEY, ROOT, Service, auth

TEXT = "帮我查一下订单DD202405010001"
READ_ONLY = {
    "code": "database_unavailable",
    "message": "the database is read-only: nothing can be written (memory reads are audited); "
    "retry later",
}
LOCKED = {
    "code": "database_unavailable",
    "message": "the database is locked by another writer; retry later",
}


@contextmanager
def read_only_switch(backend: str) -> Iterator[list[bool]]:
    """``[False]``; set its item to make every connection checked out of any pool read-only
    (or writable again)."""
    state = [False]

    def checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        if backend == "sqlite":
            dbapi_conn.execute(f"PRAGMA query_only={'ON' if state[0] else 'OFF'}")
        else:
            dbapi_conn.execute(f"SET default_transaction_read_only = {'on' if state[0] else 'off'}")
            dbapi_conn.commit()

    event.listen(Pool, "checkout", checkout)
    try:
        yield state
    finally:
        event.remove(Pool, "checkout", checkout)


def server_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_11_a_read_only_database(
    service: Callable[..., Service], backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    svc = service(backend)
    h = auth("acme")
    client = svc.client
    first = svc.turn("acme", "u1", TEXT, session_id="s1")
    assert first.status_code == 200
    trace_id = first.json()["trace_id"]
    with read_only_switch(backend) as read_only:
        read_only[0] = True
        r = svc.turn("acme", "u1", TEXT, session_id="s1")
        assert (r.status_code, r.headers["retry-after"], r.json()["error"]) == (503, "5", READ_ONLY)
        # what writes nothing still works
        assert client.get("/v1/users/u1/goals", headers=h).status_code == 200
        assert client.get(f"/v1/traces/{trace_id}", headers=h).status_code == 200
        assert len(client.get("/v1/traces?user_id=u1", headers=h).json()["traces"]) == 1
        assert client.get("/healthz").status_code == 200
        # reading memory is audited, forgetting writes: both say why they cannot
        for method, path in (
            ("GET", "/v1/users/u1/memory"),
            ("GET", "/v1/users/u1/memory/export"),
            ("DELETE", "/v1/users/u1"),
        ):
            r = client.request(method, path, headers=h)
            assert (r.status_code, r.json()["error"]) == (503, READ_ONLY), path
        health = client.get("/v1/health", headers=h)
        assert (health.status_code, health.headers["retry-after"]) == (503, "5")
        assert (health.json()["status"], health.json()["database"]) == (
            "degraded",
            {
                "dialect": "sqlite" if backend == "sqlite" else "postgresql",
                "reachable": True,
                "writable": False,
                "fault": "read-only",
            },
        )
        read_only[0] = False
        assert svc.turn("acme", "u1", TEXT, session_id="s1").status_code == 200
        assert client.get("/v1/health", headers=h).json()["status"] == "ok"
    assert server_errors(caplog) == []


@pytest.mark.slow  # waits out SQLite's 5 s busy timeout twice
def test_11_a_locked_database(
    service: Callable[..., Service], caplog: pytest.LogCaptureFixture
) -> None:
    svc = service("sqlite")
    h = auth("acme")
    assert svc.turn("acme", "u1", TEXT, session_id="s1").status_code == 200
    holder = sqlite3.connect(sa.make_url(svc.database_url).database or "", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's writer that does not let go
        started = time.monotonic()
        r = svc.turn("acme", "u1", TEXT, session_id="s1")
        waited = time.monotonic() - started
        assert (r.status_code, r.headers["retry-after"], r.json()["error"]) == (503, "5", LOCKED)
        assert waited < 20  # was 40 s: the busy timeout is 5 s (the failed turn's trace waits too)
        assert svc.client.get("/v1/users/u1/goals", headers=h).status_code == 200  # WAL reads
        health = svc.client.get("/v1/health", headers=h)
        assert (health.status_code, health.json()["database"]["fault"]) == (503, "locked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert svc.turn("acme", "u1", TEXT, session_id="s1").status_code == 200
    assert svc.client.get("/v1/health", headers=h).status_code == 200
    assert server_errors(caplog) == []


def test_11_terminated_postgres_connections(
    service: Callable[..., Service], caplog: pytest.LogCaptureFixture
) -> None:
    svc = service("postgres")
    h = auth("acme")
    client = svc.client
    backends: set[int] = set()

    def checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        backends.add(dbapi_conn.info.backend_pid)

    event.listen(Pool, "checkout", checkout)  # the service's connections, and only those
    try:
        assert svc.turn("acme", "u1", TEXT, session_id="s1").status_code == 200
        assert client.get("/v1/users/u1/memory", headers=h).status_code == 200
    finally:
        event.remove(Pool, "checkout", checkout)
    admin = sa.create_engine(PG_URL)
    try:
        with admin.connect() as conn:
            killed = [
                conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": p}).scalar()
                for p in sorted(backends)
            ]
    finally:
        admin.dispose()
    assert killed and all(killed)
    for path in ("/v1/users/u1/memory", "/v1/users/u1/goals", "/v1/traces?user_id=u1"):
        assert client.get(path, headers=h).status_code == 200, path
    assert svc.turn("acme", "u1", TEXT, session_id="s1").status_code == 200
    assert client.get("/v1/health", headers=h).json()["database"]["fault"] is None
    assert server_errors(caplog) == []


# ---- point 12 ------------------------------------------------------------------------------


def charter_serve(tmp_path: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "charter.toml").write_text(
        f"""\
[model]
backend = "scripted"
[model.options]
default = "好的"
[agent]
domain = "{ROOT / "domains" / "ecommerce"}"
[[serve.tenants]]
name = "acme"
token_env = "TOKEN_ACME"
""",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARTER_")}
    env.update(
        TOKEN_ACME="t",
        CHARTER_MEMORY_KEY=KEY,
        CHARTER_DATABASE_URL=database_url,
        CHARTER_NARRATIVE_PATH=str(tmp_path / "narrative"),
        CHARTER_CACHE_DIR=os.environ.get("CHARTER_CACHE_DIR", str(tmp_path / "cache")),
        PYTHONIOENCODING="utf-8",
    )
    return subprocess.run(
        [str(Path(sys.executable).with_name("charter")), "serve", "--port", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def unwritable_directory(tmp_path: Path) -> Path:
    """A directory the server cannot create a file in: read-only, or, for root (whom no mode
    stops), a path below a regular file."""
    if os.geteuid() == 0:
        (tmp_path / "a-file").write_text("", encoding="utf-8")
        return tmp_path / "a-file"
    (tmp_path / "ro").mkdir(mode=0o555)
    return tmp_path / "ro"


def pg_url(database: str, port: int | None = None) -> sa.URL:
    url = sa.make_url(PG_URL).set(password="s3cret-pw", database=database)
    return url.set(port=port) if port is not None else url


@pytest.mark.slow  # charter serve in a subprocess, per database fault (about 2.5 s each)
@pytest.mark.parametrize("case", ["wrong port", "missing database", "read-only directory"])
def test_12_a_database_serve_cannot_open_is_exit_1_with_the_reason(
    tmp_path: Path, case: str
) -> None:
    if case != "read-only directory" and postgres_problem() is not None:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}: {postgres_problem()}")
    if case == "wrong port":
        url = pg_url("test", port=1)
        shown = url.render_as_string(hide_password=True)
        reason = f'connection failed: connection to server at "{url.host}", port 1 failed: Connection refused'
    elif case == "missing database":
        url = pg_url("charter_no_such_database")
        shown = url.render_as_string(hide_password=True)
        reason = (
            f'connection failed: connection to server at "{url.host}", port {url.port or 5432} '
            'failed: FATAL:  database "charter_no_such_database" does not exist'
        )
    else:
        url = sa.make_url(f"sqlite:///{unwritable_directory(tmp_path) / 'charter.db'}")
        shown = str(url)
        reason = "unable to open database file"
    run = charter_serve(tmp_path, url.render_as_string(hide_password=False))
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"charter serve: cannot open the database {shown}: {reason}\n"
    assert "s3cret-pw" not in run.stderr
