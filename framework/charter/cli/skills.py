"""``charter skills list|show|call|status``: the skill contracts of packs, a guarded call with
its fallback chain, and the circuit breakers.

``call`` runs exactly what an agent runs — argument schema and constraints with the contract's
messages, the breaker, the timeout, the output checks, the fallback protocol — and prints what
the user would be told. ``--inject`` makes the call fail on purpose (a fire drill of the
fallback chain); ``--now`` sets the turn's clock the skill sees (``SkillContext``), as a skill
case's ``now:`` does. ``call`` needs no database: its tickets and breaker state live in the
database of ``--db URL``, else ``$CHARTER_DATABASE_URL`` (the one ``charter tickets`` and
``charter goals`` read), so the strikes of one ``call`` count for the next and ``status``
shows them; with neither, in a temporary database for the call, deleted after it (a drill in a
fresh folder works, and opens no ticket in a real store). ``status`` reads ``--db URL``, else
``$CHARTER_DATABASE_URL``, else ``sqlite:///charter.db``.

Exit status: 0 ok (``call``: the skill answered, or a fallback did), 1 when the pack, the skill
or the database cannot be used, the arguments are not JSON, or nothing answered.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Annotated, Any

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USER,
    DiagFormat,
    OutFormat,
    compile_all,
    emit_diagnostics,
    find_packs,
    fixed_now,
    host,
    one_pack,
    open_database,
    registry,
    requested,
)
from charter.cli.goals import ENV_URL, DbOption, database_url

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack
    from charter.compile.specs.skills import SkillContract
    from charter.contracts.registry import Registry
    from charter.skills.runner import SkillOutcome

app = typer.Typer(
    help="Skill contracts: list, show, call through their guards, breaker status.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
DomainOption = Annotated[
    str, typer.Option("--domain", metavar="PACK", help="The pack (a directory or a name).")
]
FormatOption = Annotated[OutFormat, typer.Option("--format", help="text or json.")]


def _fail(prog: str, message: str) -> int:
    typer.echo(f"{prog}: {message}", err=True)
    return EXIT_USER


def _packs(prog: str, domain: str | None) -> tuple[list[CompiledPack], Registry | None]:
    reg, diags = registry()
    if domain is not None:
        root, problem = one_pack(domain, reg.packs)
        if problem is not None and problem.code == "CH004":
            _fail(prog, f"unknown domain {domain!r} (a pack directory or a name under domains/)")
            return [], None
        if root is None:  # CH009: the name is ambiguous
            emit_diagnostics([*diags, *filter(None, [problem])], DiagFormat.text)
            return [], None
        paths = [root]
    else:
        paths, more = find_packs(requested([], reg, False), reg.packs)
        diags += more
    packs, more = compile_all(paths, reg)
    diags += more
    if any(d.is_error for d in diags):
        emit_diagnostics(diags, DiagFormat.text)
        return [], None
    return packs, reg


@app.command("list")
def list_(
    domain: Annotated[
        str | None, typer.Option("--domain", metavar="PACK", help="Only this pack.")
    ] = None,
    fmt: FormatOption = OutFormat.text,
) -> None:
    """The skills of every pack here (or of --domain): implemented?, fallback, description."""
    packs, reg = _packs("charter skills list", domain)
    if reg is None:
        raise typer.Exit(EXIT_USER)
    rows = [
        {
            "pack": p.name,
            "skill": c.name,
            "implemented": c.name in reg.skills,
            "fallback": c.fallback,
            "description": c.description,
        }
        for p in packs
        if p.skills is not None
        for c in p.skills.contracts
    ]
    if fmt is OutFormat.json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        raise typer.Exit(EXIT_OK)
    if not rows:
        typer.echo("no skills")
        raise typer.Exit(EXIT_OK)
    w = [max(len(str(r[k])) for r in rows) for k in ("pack", "skill")]
    for r in rows:
        impl = "yes" if r["implemented"] else "NO "
        typer.echo(
            f"{r['pack']:<{w[0]}}  {r['skill']:<{w[1]}}  implemented {impl}  "
            f"fallback {r['fallback'] or '-'}  {r['description']}"
        )
    raise typer.Exit(EXIT_OK)


def _contract(prog: str, domain: str, name: str) -> tuple[CompiledPack | None, Any]:
    packs, reg = _packs(prog, domain)
    if reg is None or not packs:
        return None, None
    pack = packs[0]
    contract = pack.skills.contract(name) if pack.skills is not None else None
    if contract is None:
        known = ", ".join(c.name for c in pack.skills.contracts) if pack.skills else "none"
        _fail(prog, f"pack {pack.name} has no skill {name!r} (it has: {known})")
        return None, None
    return pack, (contract, reg)


def render_contract(pack: CompiledPack, c: SkillContract) -> str:
    props = c.input_schema.get("properties", {})
    required = set(c.input_schema.get("required", []))
    lines = [f"skill {c.name} ({pack.name}): {c.description}", "  arguments:"]
    for name, spec in props.items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        lines.append(f"    {name}: {kind}{' (required)' if name in required else ''}")
    for con in c.constraints:
        lines.append(f"  constraint: {con.source}  ->  {con.message}")
    limit = f"max_results {c.max_results}, " if c.max_results is not None else ""
    lines.append(f"  limits: {limit}timeout {c.timeout_s:g} s")
    b = c.breaker
    lines.append(
        f"  breaker: open after {b.failures} failures or calls over {b.slow_s:g} s, "
        f"cool-down {b.cooldown_s:g} s"
    )
    steps = pack.skills.protocol(c.fallback) if pack.skills and c.fallback else ()
    lines.append(f"  fallback: {c.fallback or '-'}")
    for s in steps:
        lines.append(f"    when {' and '.join(x.source for x in s.when)} -> {s.do.source}")
    return "\n".join(lines)


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The skill.")],
    domain: DomainOption,
) -> None:
    """A contract: arguments, constraints, limits, breaker and fallback chain."""
    pack, found = _contract("charter skills show", domain, name)
    if pack is None:
        raise typer.Exit(EXIT_USER)
    typer.echo(render_contract(pack, found[0]))
    raise typer.Exit(EXIT_OK)


def render_outcome(o: SkillOutcome, kept: bool = True) -> str:
    """The call's outcome as ``call`` prints it; ``kept`` false: the ticket it opened was in
    a temporary database (no ``--db``), gone after the call."""
    lines = [f"{o.skill}: {o.status}"]
    if o.failure is not None:
        lines.append(f"  failure: {o.failure.kind}: {o.failure.detail}")
    if o.fallback is not None:
        lines.append(f"  fallback {o.fallback.protocol}:")
        for s in o.fallback.steps:
            lines.append(f"    {'✓' if s.held else '·'} {s.step}: {s.result}")
        if o.fallback.ticket:
            gone = "" if kept else " (in a temporary database: --db URL keeps it)"
            lines.append(f"  ticket: {o.fallback.ticket}{gone}")
    if o.reflect:
        lines.append("  reflect: the result claims what it does not hold")
    lines.append(f"  answer: {o.text}")
    return "\n".join(lines)


def _outcome_json(o: SkillOutcome) -> dict[str, Any]:
    fb = o.fallback
    return {
        "skill": o.skill,
        "status": o.status,
        "text": o.text,
        "result": o.result,
        "failure": None
        if o.failure is None
        else {"kind": o.failure.kind, "detail": o.failure.detail, "reflect": o.failure.reflect},
        "fallback": None
        if fb is None
        else {
            "protocol": fb.protocol,
            "action": fb.action,
            "ticket": fb.ticket,
            "faq": fb.faq,
            "steps": [{"step": s.step, "held": s.held, "result": s.result} for s in fb.steps],
        },
    }


@app.command("call")
def call(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The skill.")],
    domain: DomainOption,
    args: Annotated[str, typer.Option("--args", metavar="JSON", help="The arguments.")] = "{}",
    context: Annotated[
        str,
        typer.Option(
            "--context", metavar="JSON", help="query, negations, confidence, user_id, ..."
        ),
    ] = "{}",
    inject: Annotated[
        str | None,
        typer.Option(
            "--inject",
            metavar="FAULT",
            help="Fail on purpose: error, timeout, breaker_open, empty_claim, bad_output.",
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="URL",
            help=f"Keep tickets and breaker state in this database (default: ${ENV_URL}, "
            "else a temporary one for this call).",
        ),
    ] = None,
    fmt: FormatOption = OutFormat.text,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="ISO",
            help="The turn's clock the skill sees (2025-06-30T10:00+08:00), as a case's now:.",
        ),
    ] = None,
) -> None:
    """Call a skill through its guards; on failure its fallback protocol answers."""
    raise typer.Exit(run_call(name, domain, args, context, inject, db, fmt, now))


def run_call(
    name: str,
    domain: str,
    args: str,
    context: str,
    inject: str | None,
    db: str | None,
    fmt: OutFormat,
    now: str | None = None,
) -> int:
    prog = "charter skills call"
    try:
        parsed_args, parsed_ctx = json.loads(args), json.loads(context)
    except json.JSONDecodeError as exc:
        return _fail(prog, f"--args and --context take JSON objects: {exc}")
    if not isinstance(parsed_args, dict) or not isinstance(parsed_ctx, dict):
        return _fail(prog, "--args and --context take JSON objects")
    if now is not None:  # the turn's clock, as a skill case's now: sets it
        fixed = fixed_now(now)
        if isinstance(fixed, str):
            return _fail(prog, fixed)
        parsed_ctx["now"] = fixed
    pack, found = _contract(prog, domain, name)
    if pack is None:
        return EXIT_USER
    from charter.skills.breaker import BreakerRegistry
    from charter.skills.breaker_sql import SqlBreakerState
    from charter.skills.runner import INJECTABLE, SkillRunner
    from charter.skills.tickets import TicketStore

    if inject is not None and inject not in INJECTABLE:
        return _fail(prog, f"--inject takes one of {', '.join(INJECTABLE)}, not {inject!r}")
    with ExitStack() as stack:
        url = db or os.environ.get(ENV_URL)
        if not url:  # a store for this call only: nothing is kept, nothing must exist
            where = Path(stack.enter_context(TemporaryDirectory(prefix="charter-skills-call-")))
            tickets: TicketStore | None = TicketStore(f"sqlite:///{where / 'charter.db'}")
        else:
            tickets = open_database(prog, url, ENV_URL, TicketStore)
        if tickets is None:
            return EXIT_USER
        stack.callback(tickets.dispose)
        state = SqlBreakerState(tickets.engine)
        assert pack.skills is not None
        plugins = host()  # the same host as the registry: charter_on_fallback reaches its plugins
        runner = SkillRunner(
            pack.skills,
            found[1],
            pack=pack.name,
            constants=pack.constants,
            tickets=tickets,
            breakers=BreakerRegistry(state),
            notify=plugins.notify,
        )
        stack.callback(runner.close)
        outcome = runner.call(name, parsed_args, parsed_ctx, inject=inject)
    if fmt is OutFormat.json:
        sys.stdout.write(json.dumps(_outcome_json(outcome), ensure_ascii=False, indent=2) + "\n")
    else:
        typer.echo(render_outcome(outcome, kept=bool(url)))
    answered = outcome.status == "ok" or (
        outcome.fallback is not None and outcome.fallback.action != "none"
    )
    return EXIT_OK if answered or outcome.status == "invalid" else EXIT_USER


@app.command("status")
def status(
    domain: Annotated[
        str | None,
        typer.Option(
            "--domain", metavar="PACK", help="Read cool-downs from this pack's contracts."
        ),
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = OutFormat.text,
) -> None:
    """The circuit breakers in the database: state, strikes, when a call is let through."""
    raise typer.Exit(run_status(domain, db, fmt))


def run_status(domain: str | None, db: str | None, fmt: OutFormat) -> int:
    prog = "charter skills status"
    from charter.skills.breaker import BreakerSettings, CircuitBreaker
    from charter.skills.breaker_sql import SqlBreakerState

    settings: dict[str, BreakerSettings] = {}
    if domain is not None:
        packs, reg = _packs(prog, domain)
        if reg is None:
            return EXIT_USER
        for p in packs:
            for c in p.skills.contracts if p.skills else ():
                b = c.breaker
                settings[c.name] = BreakerSettings(b.failures, b.slow_s, b.cooldown_s)
    state = open_database(prog, database_url(db), ENV_URL, SqlBreakerState)
    if state is None:
        return EXIT_USER
    with state:
        snaps = [CircuitBreaker(n, settings.get(n), state=state).snapshot() for n in state.names()]
    if fmt is OutFormat.json:
        doc = [
            {
                "skill": s.name,
                "state": s.state,
                "strikes": s.strikes,
                "retry_in_s": round(s.retry_in_s, 1),
                "reason": s.reason,
            }
            for s in snaps
        ]
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    if not snaps:
        typer.echo("every breaker closed: no call has failed with this database")
        return EXIT_OK
    width = max(len(s.name) for s in snaps)
    for s in snaps:
        retry = f"  retry in {s.retry_in_s:.0f} s" if s.retry_in_s > 0 else ""
        why = f"  ({s.reason})" if s.reason else ""
        typer.echo(f"{s.name:<{width}}  {s.state:<9}  strikes {s.strikes}{retry}{why}")
    return EXIT_OK
