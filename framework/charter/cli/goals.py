"""``charter goals show|history|sweep``: look at goal trees and abort the ones that timed out.

The database is ``--db URL``, else ``$CHARTER_DATABASE_URL``, else ``sqlite:///charter.db`` in
the working directory. A SQLite file that does not exist is an error, not a new empty database:
a mistyped path should not look like a user without goals.

Exit status: 0 ok (also when there is nothing to show or sweep), 1 when the database cannot be
opened or the goal does not exist, 2 for a malformed ``--now``.

The goal store (SQLAlchemy, SQLModel) is imported when a goals command runs, not when the
``charter`` command starts: it would double the start-up time of every other subcommand.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from charter.cli.common import EXIT_OK, EXIT_USAGE, EXIT_USER, open_database

if TYPE_CHECKING:
    from charter.goals.store import GoalStore
    from charter.goals.tables import Goal

ENV_URL = "CHARTER_DATABASE_URL"
DEFAULT_URL = "sqlite:///charter.db"
WIDTH = 100  # when not writing to a terminal: the same output everywhere
STATUS_STYLE = {"pending": "cyan", "active": "yellow", "completed": "green", "aborted": "red"}

app = typer.Typer(
    help="Goal trees: show them and their history, abort goals that timed out.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        help=f"Database URL (default: ${ENV_URL}, else {DEFAULT_URL} here).",
    ),
]


@app.command("show")
def show(
    user: Annotated[str, typer.Option("--user", metavar="USER", help="Whose goals.")],
    session: Annotated[
        str | None, typer.Option("--session", metavar="SESSION", help="Only this session.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Print a user's goal trees with their statuses, session by session."""
    raise typer.Exit(run_show(user, session, db))


@app.command("history")
def history(
    goal_id: Annotated[str, typer.Argument(metavar="GOAL_ID", help="The goal's id.")],
    db: DbOption = None,
) -> None:
    """Print every status change of one goal: when, from, to, who and why."""
    raise typer.Exit(run_history(goal_id, db))


@app.command("sweep")
def sweep(
    db: DbOption = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="TIME",
            help="Judge timeouts as of this time (ISO 8601, UTC unless an offset is given); "
            "the history still records when the sweep really ran.",
        ),
    ] = None,
) -> None:
    """Abort the goals that have been active longer than their timeout."""
    raise typer.Exit(run_sweep(db, now))


def database_url(db: str | None) -> str:
    return db or os.environ.get(ENV_URL) or DEFAULT_URL


def _fail(prog: str, message: str) -> None:
    typer.echo(f"{prog}: {message}", err=True)


def open_store(prog: str, db: str | None) -> GoalStore | None:
    """The store, or None after saying why it cannot be opened."""
    from charter.goals.store import GoalStore

    return open_database(prog, database_url(db), ENV_URL, GoalStore)


def _console() -> Console:
    tty = sys.stdout.isatty()
    return Console(
        file=sys.stdout,
        width=None if tty else WIDTH,
        color_system="auto" if tty else None,
        highlight=False,
        emoji=False,
    )


def _label(goal: Goal) -> Text:
    text = Text(goal.intent)
    text.append(" [")
    text.append(goal.status, style=STATUS_STYLE.get(goal.status, ""))
    text.append("]")
    if goal.description:
        text.append(f" {goal.description}")
    text.append(f" ({goal.id})", style="dim")
    return text


def render_tree(user: str, goals: list[Goal]) -> Tree:
    """Sessions in the order of their first goal; goals under their parents, oldest first."""
    tree = Tree(Text(f"user {user}"))
    children: dict[str | None, list[Goal]] = defaultdict(list)
    for goal in goals:
        children[goal.parent_id].append(goal)

    def add(node: Tree, goal: Goal) -> None:
        branch = node.add(_label(goal))
        for child in children[goal.id]:
            add(branch, child)

    sessions: dict[str, Tree] = {}
    for root in children[None]:
        if root.session_id not in sessions:
            sessions[root.session_id] = tree.add(Text(f"session {root.session_id}"))
        add(sessions[root.session_id], root)
    return tree


def run_show(user: str, session: str | None, db: str | None) -> int:
    store = open_store("charter goals show", db)
    if store is None:
        return EXIT_USER
    with store:
        goals = store.tree(user, session)
    if not goals:
        where = f" in session {session}" if session is not None else ""
        typer.echo(f"no goals for user {user}{where}")
        return EXIT_OK
    console = _console()
    with console.capture() as captured:
        console.print(render_tree(user, goals))
    # rich pads the line it wraps with spaces: strip them so the output is clean to pipe
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    return EXIT_OK


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _when(at: datetime) -> str:
    return _utc(at).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_history(goal_id: str, db: str | None) -> int:
    prog = "charter goals history"
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        goal = store.get(goal_id)
        entries = store.history(goal_id)
    if goal is None:
        _fail(prog, f"no goal {goal_id!r}")
        return EXIT_USER
    lines = [
        f"goal {goal.id}: {goal.intent} ({goal.kind}), user {goal.user_id}, "
        f"session {goal.session_id}, now {goal.status}"
    ]
    for e in entries:
        lines.append(
            f"  {_when(e.at)}  {e.from_status or '-':<9} -> {e.to_status:<9}  "
            f"{e.actor:<7}  {e.trigger}"
        )
    typer.echo("\n".join(lines))
    return EXIT_OK


def run_sweep(db: str | None, now: str | None) -> int:
    from charter.goals.sweeper import sweep as sweep_goals

    prog = "charter goals sweep"
    at: datetime | None = None
    if now is not None:
        try:
            at = _utc(datetime.fromisoformat(now))
        except ValueError:
            _fail(prog, f"--now: not an ISO 8601 time: {now!r} (e.g. 2024-05-01T10:30:00Z)")
            return EXIT_USAGE
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        results = sweep_goals(store, at)
        intents = {r.goal_id: g.intent for r in results if (g := store.get(r.goal_id))}
    lines = []
    for r in results:
        what = "aborted" if r.ok else "skipped"
        lines.append(f"{what} {r.goal_id} ({intents.get(r.goal_id, '?')}): {r.reason}")
    typer.echo("\n".join(lines) if lines else "nothing to sweep")
    return EXIT_OK
