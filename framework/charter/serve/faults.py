"""Database faults as answers a client can act on, and the database's state for ``/v1/health``.

A database that is read-only, locked past the busy timeout, unreachable or whose connection
was cut is not a bug of the server: the request is answered 503 ``database_unavailable`` with
``Retry-After``, and the log line names the fault's kind, never the driver's message (it
quotes the statement's parameters: what a user wrote). Anything else a database raises stays
a 500.

A read that finds its pooled connection dead (a PostgreSQL backend terminated, a server
restarted) is run once more on a new connection (``read_retried``); writes are not, since the
first attempt may have committed. Engines ping a connection before lending it
(``pool_pre_ping``), so a connection that died idle in the pool never reaches a request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import sqlalchemy as sa
from fastapi import Request
from fastapi.responses import JSONResponse

from charter.serve.errors import ApiError, internal
from charter.serve.logs import logged_path
from charter.store.migrations import SQLITE_BUSY_TIMEOUT_MS
from charter.text.masking import mask_text, mask_url, url_secrets

log = logging.getLogger("charter.serve")

T = TypeVar("T")
RETRY_AFTER_S = 5
PROBE_WAIT_MS = 1000  # how long health waits for SQLite's write lock before calling it locked

READ_ONLY, LOCKED, LOST, UNAVAILABLE = "read-only", "locked", "connection lost", "unreachable"
_MESSAGES = {
    READ_ONLY: "the database is read-only: nothing can be written (memory reads are audited)",
    LOCKED: "the database is locked by another writer",
    LOST: "the connection to the database was lost",
    UNAVAILABLE: "the database cannot be reached",
}


def fault_kind(exc: BaseException) -> str | None:
    """``read-only``, ``locked``, ``connection lost`` or ``unreachable`` for a fault of the
    database itself; None for anything else (a bug: a 500)."""
    if isinstance(exc, sa.exc.TimeoutError):  # no connection free in the pool
        return LOCKED
    if not isinstance(exc, sa.exc.DBAPIError):
        return None
    if exc.connection_invalidated:
        return LOST
    orig = exc.orig
    state = str(getattr(orig, "sqlstate", None) or "")
    said = str(orig).lower()
    if state == "25006" or "readonly database" in said or "read-only" in said:
        return READ_ONLY
    if state in ("55P03", "57014") or "database is locked" in said or "table is locked" in said:
        return LOCKED  # lock_not_available, a statement or lock timeout; SQLite's SQLITE_BUSY
    if state[:2] in ("08", "53", "57") or (not state and isinstance(exc, sa.exc.OperationalError)):
        return UNAVAILABLE  # connection, resources, shutdown; SQLite: disk I/O, cannot open
    return None


def unavailable(kind: str) -> ApiError:
    return ApiError(
        503,
        "database_unavailable",
        f"{_MESSAGES[kind]}; retry later",
        {"Retry-After": str(RETRY_AFTER_S)},
    )


async def database_error(request: Request, exc: Exception) -> JSONResponse:
    """The exception handler for ``SQLAlchemyError``: 503 for a fault, else a 500."""
    kind = fault_kind(exc)
    if kind is None:
        return await internal(request, exc)
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    log.warning(
        "database unavailable",
        extra={"fault": kind, "error": type(orig).__name__, "path": logged_path(request.scope)},
    )
    return unavailable(kind).response()


def read_retried(read: Callable[[], T]) -> T:
    """``read()``, run once more when its connection turned out dead."""
    try:
        return read()
    except sa.exc.DBAPIError as exc:
        if fault_kind(exc) != LOST:
            raise
    return read()


def probe(engine: sa.Engine) -> str | None:
    """What keeps the database from taking writes now (a fault kind), or None. SQLite: the
    write lock is taken and released at once (``BEGIN IMMEDIATE``), waiting at most
    ``PROBE_WAIT_MS``; PostgreSQL: the session's ``transaction_read_only`` and recovery."""
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                # the driver is in autocommit mode (store.migrations): BEGIN is ours to send
                conn.exec_driver_sql(f"PRAGMA busy_timeout={PROBE_WAIT_MS}")
                try:
                    conn.exec_driver_sql("BEGIN IMMEDIATE")
                    conn.exec_driver_sql("ROLLBACK")
                finally:
                    conn.exec_driver_sql(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            elif conn.dialect.name == "postgresql":
                query = "SELECT current_setting('transaction_read_only'), pg_is_in_recovery()"
                read_only, recovering = conn.execute(sa.text(query)).one()
                if read_only == "on" or recovering:
                    return READ_ONLY
            else:
                conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        return fault_kind(exc) or UNAVAILABLE
    return None


def shown_url(url: str) -> str:
    """``url`` with its password (up to the last ``@``: a password may hold one) and secret
    query parameters masked, as it may be printed."""
    if "://" not in url:
        return "the configured database URL"  # a keyword DSN, or no URL at all
    return mask_url(url)


def database_failure(url: str, exc: BaseException) -> str:
    """One line saying why the database at ``url`` cannot be opened: the driver's first
    line (not SQLAlchemy's, which appends the statement and a link), the URL's password
    masked in both."""
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    reason = next((line.strip() for line in str(orig).splitlines() if line.strip()), "")
    reason = reason or type(orig).__name__
    if isinstance(exc, ImportError):
        reason = f"{reason} (pip install 'charter[postgres]')"
    # the driver may quote the host or the whole DSN, a password that holds @ split wrongly
    reason = mask_text(reason, known=url_secrets(url), fragments=True)
    return f"cannot open the database {shown_url(url)}: {reason}"
