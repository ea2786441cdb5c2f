"""``charter trace ID`` and ``charter traces``: what happened in a turn, step by step.

Two top-level commands rather than one ``trace`` group: ``charter trace ID`` is the form the
design and the issue give (and the one a person types after reading an id in a reply or a
log), and a click group cannot take both an ID argument and subcommands, since ``charter trace
list`` would be read as the trace named "list". So the one trace is ``trace ID`` and the many
are ``traces``, as ``GET /traces/{id}`` and ``GET /traces`` would be.

The database is the goal store's: ``--db URL``, else ``$CHARTER_DATABASE_URL``, else
``sqlite:///charter.db`` in the working directory. A SQLite file that does not exist is an
error, not a new empty database. Traces of a tenant are found only with ``--tenant``.

Exit status: 0 ok (also when there is nothing to list), 1 when the database cannot be opened or
the trace does not exist, 2 for a usage error (``--limit`` below 1, an unknown ``--format``).

The trace store (SQLAlchemy) is imported when a command runs, not when ``charter`` starts.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from charter.cli.common import EXIT_OK, EXIT_USER, OutFormat, open_database
from charter.cli.goals import ENV_URL, DbOption, database_url

if TYPE_CHECKING:
    from charter.traces.store import TraceStore


class ListFormat(StrEnum):
    table = "table"
    json = "json"


TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant", metavar="TENANT", help="The tenant the traces belong to (default: none)."
    ),
]


def show(
    trace_id: Annotated[
        str, typer.Argument(metavar="ID", help="The trace's id, e.g. tr-1m8nafm4m1v89g4ry2n")
    ],
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
    tenant: TenantOption = None,
    db: DbOption = None,
) -> None:
    """Show one turn's trace: every step with its inputs, outputs, timing and decision."""
    raise typer.Exit(run_show(trace_id, format, tenant, db))


def list_(
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER", help="Only this user's traces.")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", metavar="SESSION", help="Only this session.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most N traces.")] = 20,
    format: Annotated[
        ListFormat, typer.Option("--format", help="Output format.")
    ] = ListFormat.table,
    tenant: TenantOption = None,
    db: DbOption = None,
) -> None:
    """List traces, newest first: id, when, how long, who, where, verdict, steps."""
    raise typer.Exit(run_list(user, session, limit, format, tenant, db))


def register(app: typer.Typer) -> None:
    """Add ``trace`` and ``traces`` to the ``charter`` command."""
    app.command("trace")(show)
    app.command("traces")(list_)


def _fail(prog: str, message: str) -> None:
    typer.echo(f"{prog}: {message}", err=True)


def open_store(prog: str, db: str | None) -> TraceStore | None:
    """The store, or None after saying why it cannot be opened."""
    from charter.traces.store import TraceStore

    return open_database(prog, database_url(db), ENV_URL, TraceStore)


def run_show(trace_id: str, fmt: OutFormat, tenant: str | None, db: str | None) -> int:
    from charter.traces.render import render_trace, render_trace_json

    prog = "charter trace"
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        trace = store.get(trace_id, tenant=tenant)
    if trace is None:
        where = f" in tenant {tenant!r}" if tenant is not None else ""
        _fail(prog, f"no trace {trace_id!r}{where}")
        return EXIT_USER
    sys.stdout.write(render_trace_json(trace) if fmt is OutFormat.json else render_trace(trace))
    return EXIT_OK


def run_list(
    user: str | None,
    session: str | None,
    limit: int,
    fmt: ListFormat,
    tenant: str | None,
    db: str | None,
) -> int:
    from charter.traces.render import render_json, render_list

    store = open_store("charter traces", db)
    if store is None:
        return EXIT_USER
    with store:
        traces = store.list(user_id=user, session_id=session, limit=limit, tenant=tenant)
    if fmt is ListFormat.json:
        sys.stdout.write(render_json([t.as_dict() for t in traces]))
    elif not traces:
        whose = f" for user {user}" if user is not None else ""
        where = f" in session {session}" if session is not None else ""
        typer.echo(f"no traces{whose}{where}")
    else:
        sys.stdout.write(render_list(traces))
    return EXIT_OK
