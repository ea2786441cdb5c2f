"""``charter tickets list|show``: the tickets the ``handoff_human`` fallback left for people.

The database is the goal store's: ``--db URL``, else ``$CHARTER_DATABASE_URL``, else
``sqlite:///charter.db`` in the working directory, since a handoff belongs to the same
conversation as its goals. A SQLite file that does not exist is an error, not a new empty
database: a mistyped path should not look like a queue without tickets.

Exit status: 0 ok (also when there is nothing to list), 1 when the database cannot be opened or
the ticket does not exist, 2 for a usage error (an unknown ``--status``, ``--limit`` below 1).

The ticket store (SQLAlchemy) is imported when a tickets command runs, not when the
``charter`` command starts.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.cells import cell_len

from charter.cli.common import EXIT_OK, EXIT_USER, OutFormat, open_database
from charter.cli.goals import ENV_URL, DbOption, database_url

if TYPE_CHECKING:
    from charter.skills.tickets import Ticket, TicketStatus, TicketStore


class StatusChoice(StrEnum):
    open = "open"
    assigned = "assigned"
    closed = "closed"


class ListFormat(StrEnum):
    table = "table"
    json = "json"


HEADERS = ("id", "status", "created", "user", "domain", "skill", "reason")

app = typer.Typer(
    help="Handoff tickets left for human agents: list them, show one.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("list")
def list_(
    status: Annotated[
        StatusChoice | None, typer.Option("--status", help="Only tickets in this status.")
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER", help="Only this user's tickets.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most N tickets.")] = 50,
    format: Annotated[
        ListFormat, typer.Option("--format", help="Output format.")
    ] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """List tickets, newest first: id, status, when, user, domain, skill and why."""
    raise typer.Exit(run_list(status, user, limit, format, db))


@app.command("show")
def show(
    ticket_id: Annotated[str, typer.Argument(metavar="ID", help="The ticket's id, e.g. T-000001.")],
    format: Annotated[OutFormat, typer.Option("--format", help="Output format.")] = OutFormat.text,
    db: DbOption = None,
) -> None:
    """Show every field of one ticket, its conversation context pretty-printed."""
    raise typer.Exit(run_show(ticket_id, format, db))


def _fail(prog: str, message: str) -> None:
    typer.echo(f"{prog}: {message}", err=True)


def open_store(prog: str, db: str | None) -> TicketStore | None:
    """The store, or None after saying why it cannot be opened."""
    from charter.skills.tickets import TicketStore

    return open_database(prog, database_url(db), ENV_URL, TicketStore)


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _cell(text: str | None) -> str:
    # one ticket, one line: a newline inside a field would break the columns
    return "-" if not text else text.replace("\n", "\\n")


def _second(at: datetime) -> str:
    # to the second, like ``charter goals history``: the table stays narrow; show has the rest
    from charter.store.clock import as_utc

    return as_utc(at).strftime("%Y-%m-%dT%H:%M:%SZ")


def render_table(tickets: list[Ticket]) -> str:
    rows = [HEADERS] + [
        tuple(
            _cell(v)
            for v in (t.id, t.status, _second(t.created_at), t.user_id, t.domain, t.skill, t.reason)
        )
        for t in tickets
    ]
    # display cells, not characters: user ids and pack names may be Chinese
    widths = [max(cell_len(r[c]) for r in rows) for c in range(len(HEADERS) - 1)]
    lines = [
        "".join(cell + " " * (w - cell_len(cell) + 2) for cell, w in zip(r, widths, strict=False))
        + r[-1]
        for r in rows
    ]
    return "".join(line.rstrip() + "\n" for line in lines)


def run_list(
    status: StatusChoice | None, user: str | None, limit: int, fmt: ListFormat, db: str | None
) -> int:
    store = open_store("charter tickets list", db)
    if store is None:
        return EXIT_USER
    wanted: TicketStatus | None = None
    if status is not None:
        wanted = status.value
    with store:
        tickets = store.list(status=wanted, user_id=user, limit=limit)
    if fmt is ListFormat.json:
        sys.stdout.write(_json([t.as_dict() for t in tickets]))
    elif not tickets:
        which = f" {status.value}" if status is not None else ""
        whose = f" for user {user}" if user is not None else ""
        typer.echo(f"no{which} tickets{whose}")
    else:
        sys.stdout.write(render_table(tickets))
    return EXIT_OK


def _block(text: str, indent: int) -> str:
    return ("\n" + " " * indent).join(text.splitlines() or [""])


def render_ticket(t: Ticket) -> str:
    from charter.skills.tickets import iso

    rows = [
        ("status", t.status),
        ("queue", t.queue),
        ("user", t.user_id),
        ("session", t.session_id),
        ("domain", t.domain),
        ("skill", t.skill or "-"),
        ("reason", t.reason),
        ("summary", t.summary or "-"),
        ("assignee", t.assignee or "-"),
        ("note", t.note or "-"),
        ("created", iso(t.created_at)),
        ("updated", iso(t.updated_at)),
    ]
    lines = [f"ticket {t.id}"] + [f"  {name:<9} {_block(text, 12)}" for name, text in rows]
    context = json.dumps(t.context, ensure_ascii=False, indent=2)
    lines += ["  context", "    " + _block(context, 4)]
    return "\n".join(lines) + "\n"


def run_show(tid: str, fmt: OutFormat, db: str | None) -> int:
    prog = "charter tickets show"
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        ticket = store.get(tid)
    if ticket is None:
        _fail(prog, f"no ticket {tid!r}")
        return EXIT_USER
    sys.stdout.write(_json(ticket.as_dict()) if fmt is OutFormat.json else render_ticket(ticket))
    return EXIT_OK
