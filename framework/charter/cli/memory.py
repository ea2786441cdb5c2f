"""``charter memory list|show|forget|export|audit|maintain``: look at one user's long-term facts,
export them with their audit trail, forget the user, or run the lifecycle jobs.

The database is ``--db URL``, else ``$CHARTER_MEMORY_URL``, else the agent's
``$CHARTER_DATABASE_URL``, else ``sqlite:///charter.db`` in the working directory (the file
``charter chat`` and ``charter serve`` write by default). A SQLite file that does not exist is
an error, not a new empty database: a mistyped path should not look like a user without
memories.

Every command acts through the fact store's access control, as actor ``cli``: ``list``,
``export``, ``forget`` and ``audit`` as role ``admin`` (the privileged operations), ``show`` as
the role, use and consent given (default: an ``agent`` for use ``default``), so it shows what
that accessor would be given, under the memory policy of ``--domain PACK`` (default: the
built-in policy). Each command leaves its own audit row.

``forget`` is ``charter.agent.forget.forget_user``, the function ``Agent.forget`` and the HTTP
``DELETE`` run: facts, summaries and vectors, short-term turns, goals and their history, skill
executions, tickets, traces and reflections of the user, from every store the database has.
``maintain`` is ``charter.memory.maintain.maintain``, the pass ``charter serve`` runs every
``serve.maintain_every``. Both run in ``charter.cli.memory_ops``.

Exit status: 0 ok (also when there is nothing to list), 1 when the database cannot be opened,
the fact is not readable, the pack does not compile or the forget is not confirmed.

The fact store (SQLAlchemy, SQLModel) is imported when a memory command runs, not when the
``charter`` command starts.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from charter.cli.common import EXIT_OK, EXIT_USER
from charter.cli.memory_store import (
    ACTOR,
    ADMIN,
    AGENT_ENV_URL,
    DEFAULT_NARRATIVE,
    DEFAULT_URL,
    ENV_NARRATIVE,
    ENV_URL,
    _fail,
    load_policy,
    narrative_dir,
    open_store,
)

if TYPE_CHECKING:
    from charter.memory.facts import FactStore
    from charter.memory.ladder import LayeredMemory
    from charter.memory.records import Accessor, Fact

app = typer.Typer(
    help="Long-term memory: list, show, export, audit, forget a user; maintain every user's.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        help=f"Database URL (default: ${ENV_URL}, else ${AGENT_ENV_URL}, else {DEFAULT_URL} here).",
    ),
]
UserOption = Annotated[str, typer.Option("--user", metavar="USER", help="Whose memories.")]
NarrativeOption = Annotated[
    Path | None,
    typer.Option(
        "--narrative",
        metavar="DIR",
        help=f"The narrative channel's LanceDB directory (default: ${ENV_NARRATIVE}, else "
        f"./{DEFAULT_NARRATIVE} when it exists).",
    ),
]


@app.command("list")
def list_(
    user: UserOption,
    all_rows: Annotated[
        bool, typer.Option("--all", help="Every row: superseded, expired, archived... too.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List a user's active facts (with --all, their whole history), values as stored."""
    raise typer.Exit(run_list(user, all_rows, db))


@app.command("show")
def show(
    user: UserOption,
    key: Annotated[str, typer.Argument(metavar="KEY", help="The fact's key, e.g. phone.")],
    role: Annotated[str, typer.Option(help="Read as this role.")] = "agent",
    use: Annotated[str, typer.Option(help="Read for this use (a domain of the policy).")] = (
        "default"
    ),
    consent: Annotated[
        str | None, typer.Option(metavar="VERSION", help="The consent the user gave.")
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option(metavar="PACK", help="Use this pack's memory policy for the checks."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Show one live fact as the given role, use and consent would read it."""
    raise typer.Exit(run_show(user, key, role, use, consent, domain, db))


@app.command("forget")
def forget(
    user: UserOption,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    db: DbOption = None,
    narrative: NarrativeOption = None,
) -> None:
    """Delete everything kept about a user: facts, summaries, turns, goals, tickets, traces,
    reflections (one anonymised audit row remains)."""
    from charter.cli.memory_ops import run_forget

    raise typer.Exit(run_forget(user, yes, db, narrative))


@app.command("export")
def export(
    user: UserOption,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write here, not to stdout.")
    ] = None,
    db: DbOption = None,
    narrative: NarrativeOption = None,
) -> None:
    """Export a user's facts and summaries in every status and their audit trail as JSON."""
    raise typer.Exit(run_export(user, out, db, narrative))


@app.command("audit")
def audit(user: UserOption, db: DbOption = None) -> None:
    """Print a user's audit trail: who did what to which memory, when, allowed or denied."""
    raise typer.Exit(run_audit(user, db))


@app.command("maintain")
def maintain(
    db: DbOption = None,
    narrative: NarrativeOption = None,
    domain: Annotated[
        str | None,
        typer.Option(metavar="PACK", help="Use this pack's memory policy (decay, tiers, merge)."),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="TIME",
            help="Run the jobs as of this time (ISO 8601, UTC unless an offset is given).",
        ),
    ] = None,
) -> None:
    """Run the lifecycle jobs over every user: expiry, decay, archiving, merging of recurring
    questions, deprecation."""
    from charter.cli.memory_ops import run_maintain

    raise typer.Exit(run_maintain(db, narrative, domain, now))


def _memory(store: FactStore, path: Path | None) -> LayeredMemory:
    from charter.memory.ladder import LayeredMemory
    from charter.memory.narrative import NarrativeStore

    narrative = None
    if path is not None:
        narrative = NarrativeStore(path, None, store.policy, audit=store.record_audit)
    return LayeredMemory(store, narrative)


def _accessor(
    user: str, role: str = ADMIN, use: str = "default", consent: str | None = None
) -> Accessor:
    from charter.memory.records import Accessor

    return Accessor(user_id=user, actor=ACTOR, role=role, use=use, consent=consent)


def _iso(at: datetime | None) -> str:
    from charter.memory.facts.tables import iso

    return iso(at) or "-"


def _value(fact: Fact) -> str:
    return "<encrypted>" if fact.encrypted else fact.value.replace("\n", "\\n")


def fact_line(fact: Fact) -> str:
    until = _iso(fact.valid_until) if fact.valid_until is not None else "forever"
    return (
        f"  {fact.id}  {fact.status:<12} {fact.key} = {_value(fact)}  ({fact.memory_type}, "
        f"{fact.domain}, {fact.level}, {fact.source} {fact.confidence:.2f}, until {until})"
    )


def run_list(user: str, all_rows: bool, db: str | None) -> int:
    prog = "charter memory list"
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        try:
            facts = store.list_facts(_accessor(user), history=all_rows)
        except (PermissionError, ValueError) as exc:
            _fail(prog, str(exc))
            return EXIT_USER
    what = "facts" if all_rows else "active facts"
    if not facts:
        typer.echo(f"no {what} for user {user}")
        return EXIT_OK
    lines = [f"user {user}: {len(facts)} {what}"] + [fact_line(f) for f in facts]
    typer.echo("\n".join(lines))
    return EXIT_OK


def render_fact(fact: Fact) -> str:
    value = f"[encrypted] {fact.value}" if fact.encrypted else fact.value
    until = _iso(fact.valid_until) if fact.valid_until is not None else "forever"
    rows = [
        ("value", value),
        ("status", fact.status),
        ("type", f"{fact.memory_type} ({fact.level})"),
        ("domain", fact.domain),
        ("source", f"{fact.source}, confidence {fact.confidence:.2f}"),
        ("created", _iso(fact.created_at)),
        ("valid until", until),
        ("entity", fact.entity_ref or "-"),
        ("intent", fact.intent_type or "-"),
        ("consent", fact.consent_source or "-"),
        ("value score", f"{fact.value_score:g}"),
        ("supersedes", fact.supersedes or "-"),
        ("contradicts", fact.contradicts or "-"),
        ("used", f"{fact.access_count} time(s), last {_iso(fact.last_used_at)}"),
    ]
    head = f"fact {fact.id} of user {fact.user_id}: {fact.key}"
    return "\n".join([head] + [f"  {name:<12} {text}" for name, text in rows])


def run_show(
    user: str,
    key: str,
    role: str,
    use: str,
    consent: str | None,
    domain: str | None,
    db: str | None,
) -> int:
    prog = "charter memory show"
    policy, ok = load_policy(prog, domain)
    if not ok:
        return EXIT_USER
    store = open_store(prog, db, policy)
    if store is None:
        return EXIT_USER
    with store:
        try:
            fact = store.get(_accessor(user, role, use, consent), key)
        except ValueError as exc:
            _fail(prog, str(exc))
            return EXIT_USER
    if fact is None:
        # refused and missing look alike: the audit trail says which
        _fail(prog, f"no readable fact {key!r} for user {user} (role {role}, use {use})")
        return EXIT_USER
    typer.echo(render_fact(fact))
    return EXIT_OK


def run_export(user: str, out: Path | None, db: str | None, narrative: Path | None = None) -> int:
    prog = "charter memory export"
    lance, ok = narrative_dir(prog, narrative)
    if not ok:
        return EXIT_USER
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        try:
            data = (
                _memory(store, lance).export(_accessor(user))
                if lance
                else store.export(_accessor(user))
            )
        except (PermissionError, ValueError) as exc:
            _fail(prog, str(exc))
            return EXIT_USER
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
        return EXIT_OK
    out.write_text(text, encoding="utf-8")
    also = f", {len(data['summaries'])} summaries" if "summaries" in data else ""
    typer.echo(
        f"exported {len(data['facts'])} facts{also} and {len(data['audit'])} audit rows of user "
        f"{user} to {out}"
    )
    return EXIT_OK


def run_audit(user: str, db: str | None) -> int:
    prog = "charter memory audit"
    store = open_store(prog, db)
    if store is None:
        return EXIT_USER
    with store:
        try:
            trail = store.audit_trail(_accessor(user))
        except (PermissionError, ValueError) as exc:
            _fail(prog, str(exc))
            return EXIT_USER
    if not trail:
        typer.echo(f"no audit rows for user {user}")
        return EXIT_OK
    lines = [
        f"{_iso(e.at)}  {e.action:<9}  {'ok' if e.allowed else 'DENIED':<6}  "
        f"{e.actor}/{e.role}  {e.memory_id or '-'}  {e.reason}"
        for e in trail
    ]
    typer.echo("\n".join(lines))
    return EXIT_OK
