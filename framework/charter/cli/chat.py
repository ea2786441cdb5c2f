"""``charter chat --user U [--domain D] [--session S] [--trace] [--now ISO]``: talk to an agent in
a terminal.

The agent is the one the runtime configuration describes (``charter.toml`` or ``[tool.charter]``
in pyproject.toml, and the environment: ``charter config show`` prints it): its database, its
model backend (llama.cpp and the bundled model by default), its memory key. ``--domain``
overrides ``[agent] domain``. Every line the user types is a turn; the reply comes back with
its verdict, and with ``--trace`` with the goal tree, the memories used and which ladder step
found them, the reflection record's three lines, the turn's goal events and the response
templates the reply was composed from, who answered (templates, or the model and how each of its
drafts was judged), the skills called and their fallbacks, and the trace id. Lines starting with
``/`` are commands (``/help`` lists them). ``--now`` fixes the agent's clock, for a pack whose
demo data has a calendar of its own (the medical schedule opens 2025-07-01..05).

On a terminal the chat uses rich (a coloured verdict tag, a spinner while the model loads and
while a turn runs). When stdin is not a terminal the lines are read from it and the output is
plain text, each line echoed after ``> `` — ``printf 'hi\\n/goals\\n' | charter chat ...`` is a
script, and the tests pin its output exactly.

Exit status: 0 when the user leaves (``/quit``, end of input); 1 when the chat cannot start (a
configuration problem, printed as diagnostics; an unknown or broken pack; a pack that encrypts
memory and no key; a model backend that cannot be created), or when a turn failed in a
non-interactive chat (the failure is printed and the chat goes on).
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from charter.cli.chat_render import (
    Out,
    PlainOut,
    RichOut,
    Row,
    fact_rows,
    goal_lines,
    help_text,
    turn_rows,
)
from charter.cli.common import EXIT_OK, EXIT_USER, fixed_now, runtime_registry

if TYPE_CHECKING:
    from charter.agent.loop import Agent
    from charter.agent.reply import Reply

PROG = "charter chat"


def new_session_id() -> str:
    """A fresh session id (``chat-`` and 8 hex digits)."""
    return f"chat-{secrets.token_hex(4)}"


def chat(
    user: Annotated[str, typer.Option("--user", metavar="USER", help="Who is talking.")] = ...,  # type: ignore[assignment]
    domain: Annotated[
        str | None,
        typer.Option(
            "--domain", metavar="PACK", help="Pack directory or name (default: [agent] domain)."
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", metavar="SESSION", help="Session id (default: a new one)."),
    ] = None,
    trace: Annotated[
        bool,
        typer.Option(
            "--trace", help="Show goals, memories, reflection, skills and the trace per turn."
        ),
    ] = False,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="ISO",
            help="Fix the agent's clock (2025-06-30T10:00+08:00): a pack's demo calendar.",
        ),
    ] = None,
) -> None:
    """Talk to the configured agent: one turn per line, /help for the chat's commands."""
    raise typer.Exit(run(user, domain=domain, session=session, show_trace=trace, now=now))


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)


def run(
    user: str,
    *,
    domain: str | None = None,
    session: str | None = None,
    show_trace: bool = False,
    out: Out | None = None,
    now: str | None = None,
) -> int:
    interactive = out is None and sys.stdin.isatty()
    shown: Out = out or (RichOut() if interactive else PlainOut())
    fixed = fixed_now(now) if now is not None else None
    if isinstance(fixed, str):
        shown.error(f"{PROG}: {fixed}")
        return EXIT_USER
    agent = _start(shown, domain, None if fixed is None else (lambda: fixed))
    if agent is None:
        return EXIT_USER
    try:
        chat_ = Chat(agent, shown, user, session or new_session_id(), show_trace)
        return chat_.loop(interactive=interactive)
    finally:
        agent.close()


def _start(
    out: Out, domain: str | None, clock: Callable[[], datetime] | None = None
) -> Agent | None:
    """The configured agent, or None after saying why there is none."""
    import sqlalchemy as sa

    from charter.agent.configured import agent_from_config
    from charter.cli.config import render_diagnostics
    from charter.config import load_config

    config, diags = load_config()
    if diags:
        sys.stderr.write(render_diagnostics(config, diags))
    if any(d.is_error for d in diags):
        out.error(f"{PROG}: the configuration has errors (charter config check)")
        return None
    registry, plugin_diags = runtime_registry()
    if registry is None:  # a plugin problem under plugin_errors = "fail"
        from charter.diagnostics import SourceCache, render_text, sort_diagnostics

        sys.stderr.write(render_text(sort_diagnostics(plugin_diags), SourceCache()))
        return None
    pack = domain or config.agent.domain
    try:
        with out.busy(f"loading {pack} and the {config.model.backend} model…"):
            return agent_from_config(config, domain=pack, registry=registry, clock=clock)
    except (ValueError, RuntimeError, OSError, sa.exc.SQLAlchemyError) as exc:
        # a pack that does not resolve or compile, no memory key for a pack that encrypts
        # (MemoryKeyError), a backend that is not installed or cannot load its model
        message = str(exc).strip() or type(exc).__name__
        out.error(f"{PROG}: cannot start: {message}")
        return None


class Chat:
    """One chat: the agent, where it is shown, who talks, in which session."""

    def __init__(self, agent: Agent, out: Out, user: str, session: str, show_trace: bool) -> None:
        self.agent = agent
        self.out = out
        self.user = user
        self.session = session
        self.show_trace = show_trace
        self.last_trace: str | None = None
        self.failed = False
        self.commands: dict[str, Callable[[], None]] = {
            "/new": self.new,
            "/goals": self.goals,
            "/memory": self.memory,
            "/trace": self.trace,
            "/help": self.help,
        }

    def loop(self, *, interactive: bool) -> int:
        pack = self.agent.parts.pack.name
        self.out.say(
            f"chat with {pack} as user {self.user}, session {self.session} "
            "(/help lists the commands, /quit leaves)"
        )
        while True:
            line = self.out.read()
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                name = text.split()[0].lower()
                if name in ("/quit", "/exit"):
                    break
                command = self.commands.get(name)
                if command is None:
                    self.out.say(f"unknown command {name}: /help lists the commands")
                else:
                    command()
                continue
            try:
                self.turn(text)
            except KeyboardInterrupt:
                if not interactive:
                    raise typer.Abort() from None  # "aborted", exit status 130
                self.out.error("interrupted")
        return EXIT_USER if self.failed and not interactive else EXIT_OK

    def turn(self, text: str) -> None:
        from charter.llm.errors import LLMError
        from charter.memory.crypto import MemoryKeyError

        try:
            with self.out.busy("thinking…"):
                reply = self.agent.turn(self.user, self.session, text)
        except (LLMError, MemoryKeyError) as exc:
            self.failed = True
            self.out.error(f"{PROG}: the turn failed: {exc}")
            return
        self.last_trace = reply.trace_id
        self.out.reply(reply, self._rows(reply) if self.show_trace else [])

    def _rows(self, reply: Reply) -> list[Row]:
        traces = self.agent.parts.traces
        trace = traces.get(reply.trace_id) if traces is not None and reply.trace_id else None
        return turn_rows(reply, trace)

    # ---- commands ------------------------------------------------------------------------------

    def new(self) -> None:
        self.session = new_session_id()
        self.out.say(f"new session {self.session}")

    def goals(self) -> None:
        from charter.agent.after import goal_tree

        lines = goal_lines(goal_tree(self.agent.parts, self.user, self.session))
        if not lines:
            self.out.say(f"no goals in session {self.session}")
            return
        self.out.say(f"goals of session {self.session}:")
        self.out.block("".join(f"  {line}\n" for line in lines))

    def memory(self) -> None:
        from charter.memory.records import Accessor

        parts = self.agent.parts
        facts = parts.facts.list_facts(Accessor(self.user, "chat", role="admin"))
        if not facts:
            self.out.say(f"no facts for user {self.user}")
            return
        shown = []
        for fact in facts:
            try:
                value = parts.pipeline.reveal(fact)
            except Exception:  # a value encrypted under another key is not shown, not guessed
                value = "[encrypted]"
            shown.append((fact, value))
        self.out.say(f"{len(facts)} fact(s) of user {self.user}:")
        self.out.rows(fact_rows(shown))

    def trace(self) -> None:
        from charter.traces.render import render_trace

        traces = self.agent.parts.traces
        if traces is None:
            self.out.say("no traces: tracing is off ([agent] trace = false)")
            return
        if self.last_trace is None:
            self.out.say("no turn yet")
            return
        found = traces.get(self.last_trace)
        if found is None:
            self.out.say(f"trace {self.last_trace} is not stored")
            return
        self.out.block(render_trace(found))

    def help(self) -> None:
        self.out.block(help_text())
