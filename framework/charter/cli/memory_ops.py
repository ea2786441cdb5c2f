"""The memory commands that act on every store: ``charter memory forget`` and ``charter memory
maintain``. The database and the narrative directory are found as for the other memory
commands (``charter.cli.memory``); no model is loaded.

``forget`` runs ``charter.agent.forget.forget_user`` — what ``Agent.forget`` and the HTTP
``DELETE`` run — over every store the database has, and prints a count per kind.

``maintain`` is one pass of the memory lifecycle over every user (``charter.memory.maintain``),
for a cron job or by hand; ``charter serve`` runs the same pass every ``serve.maintain_every``.
The policy (decay, tiers, merge threshold) is ``--domain PACK``'s memory.yaml, else the
built-in one; merging compares the vectors already stored. Prints one count per job; exit
status 0, 1 when the database, the directory or the pack cannot be used, 2 for a ``--now``
that is no time.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import typer

from charter.cli.common import EXIT_OK, EXIT_USAGE, EXIT_USER, open_database
from charter.cli.memory_store import (
    ACTOR,
    ENV_URL,
    database_url,
    load_policy,
    narrative_dir,
    open_store,
)

PROG = "charter memory maintain"


def _fail(prog: str, message: str) -> None:
    typer.echo(f"{prog}: {message}", err=True)


def _at(now: str | None) -> tuple[datetime | None, bool]:
    if now is None:
        return None, True
    try:
        at = datetime.fromisoformat(now)
    except ValueError:
        typer.echo(
            f"{PROG}: --now: not an ISO 8601 time: {now!r} (e.g. 2024-05-01T10:30:00Z)", err=True
        )
        return None, False
    return (at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)), True


def run_maintain(
    db: str | None, narrative: Path | None, domain: str | None, now: str | None
) -> int:
    from charter.memory.maintain import maintain
    from charter.memory.narrative import NarrativeStore
    from charter.text.masking import mask_url

    at, ok = _at(now)
    if not ok:
        return EXIT_USAGE
    lance, ok = narrative_dir(PROG, narrative)
    if not ok:
        return EXIT_USER
    policy, ok = load_policy(PROG, domain)
    if not ok:
        return EXIT_USER
    store = open_store(PROG, db, policy)
    if store is None:
        return EXIT_USER
    with store:
        summaries = None
        if lance is not None:
            assert policy is not None
            summaries = NarrativeStore(lance, None, policy, audit=store.record_audit)
        try:
            report = maintain(store, summaries, at)
        finally:
            if summaries is not None:
                summaries.close()
    where = mask_url(database_url(db))
    also = f" and {lance}" if lance is not None else ""
    typer.echo("\n".join([f"maintained {where}{also}:", *report.lines()]))
    return EXIT_OK


def run_forget(user: str, yes: bool, db: str | None, narrative: Path | None = None) -> int:
    prog = "charter memory forget"
    lance, ok = narrative_dir(prog, narrative)
    if not ok:
        return EXIT_USER
    if not yes:
        if not sys.stdin.isatty():
            _fail(prog, f"this deletes every memory of user {user}: add --yes to confirm")
            return EXIT_USER
        if not typer.confirm(f"Delete every memory of user {user}?", default=False):
            _fail(prog, "nothing deleted")
            return EXIT_USER
    from charter.agent.forget import forget_user, open_stores

    stack = ExitStack()  # every store opened the way each memory command opens its own
    stores = open_database(
        prog, database_url(db), ENV_URL, lambda url: stack.enter_context(open_stores(url, lance))
    )
    if stores is None:
        stack.close()
        return EXIT_USER
    with stack:
        try:
            counts = forget_user(stores, user, actor=ACTOR)
        except (PermissionError, ValueError) as exc:
            _fail(prog, str(exc))
            return EXIT_USER
        kept = {
            "summaries": stores.memory.narrative is not None,
            "turns": stores.memory.short_term is not None,
        }
    shown = [f"{counts['facts']} facts"] + [
        f"{counts[key]} {label}"
        for key, label in FORGOTTEN
        if key in counts and kept.get(key, True)
    ]
    typer.echo(f"forgot user {user}: {', '.join(shown)} and their audit trail deleted")
    return EXIT_OK


# what ``forget`` reports, in this order, for each store the database (or directory) has
FORGOTTEN = (
    ("summaries", "summaries"),
    ("turns", "short-term turns"),
    ("goals", "goals"),
    ("executions", "skill executions"),
    ("tickets", "tickets"),
    ("traces", "traces"),
    ("reflections", "reflections"),
)
