"""``charter demo [--rules-only] [--keep DIR]``: the three first-party packs talking, through the
agent runtime, with the real local model loaded (what ``make demo`` runs).

For each domain a scripted conversation (``charter.cli.demo_script``) goes through
``Agent.turn`` with every layer real: a temporary SQLite database (removed at the end unless
``--keep DIR``), a memory key generated for the run (the packs encrypt), the reference skills,
and the ``llamacpp`` backend with the bundled Gemma 3 270M base model. The packs are strict, so
their replies are composed from templates; a last conversation runs in ``assisted`` mode, where
the model answers a question no template covers and its drafts are checked. Each turn prints
the user's words, the reply with its verdict, and a note of what actually happened, read from
the reply and its trace; a summary table at the end says which features each conversation
showed.

``--rules-only`` (and the fallback when llama-cpp-python is not installed or the model cannot
load) shows the checker engine alone: outputs a small model might produce, the verdict, what
failed and the repaired text. No model, a second or two.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USER,
    DiagFormat,
    emit_diagnostics,
    one_pack,
    runtime_registry,
)
from charter.cli.demo_notes import annotate
from charter.cli.demo_render import Checked, DemoOut, PlainDemoOut, RichDemoOut
from charter.cli.demo_script import CONVERSATIONS, FEATURES, SAMPLES, Conversation, Step
from charter.contracts.registry import Registry
from charter.skills.outage import Outage

if TYPE_CHECKING:
    from charter.agent.loop import Agent
    from charter.contracts.models import LLM
    from charter.contracts.skills import Skill

SEED = 7  # the same prompt gives the same text: a rerun shows the same conversation
MAX_TOKENS = 48
TEMPERATURE = 0.7


def command(
    rules_only: Annotated[
        bool,
        typer.Option("--rules-only", help="Show the rules checking canned outputs; no model."),
    ] = False,
    keep: Annotated[
        Path | None,
        typer.Option("--keep", metavar="DIR", help="Keep the demo's database in DIR/demo.db."),
    ] = None,
) -> None:
    """Scripted conversations with the three domains, against the local model."""
    raise typer.Exit(run(rules_only=rules_only, keep=keep))


def register(app: typer.Typer) -> None:
    app.command("demo")(command)


def run(*, rules_only: bool = False, keep: Path | None = None, out: DemoOut | None = None) -> int:
    shown = out or (RichDemoOut() if sys.stdout.isatty() else PlainDemoOut())
    registry, diags = runtime_registry()
    if registry is None:
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    if rules_only:
        return rules(shown, registry)
    return run_demo(shown, registry=registry, keep=keep).status


# ---- the rules alone --------------------------------------------------------------------------


def rules(out: DemoOut, registry: Registry) -> int:
    from charter.compile.api import compile_path
    from charter.reflect.engine import Engine

    status = EXIT_OK
    for domain, samples in SAMPLES.items():
        root, problem = one_pack(domain, registry.packs)
        if problem is not None and problem.code == "CH009":  # the name is ambiguous
            emit_diagnostics([problem], DiagFormat.text)
            status = EXIT_USER
            continue
        pack, diags = compile_path(root or Path("domains") / domain, registry)
        if pack is None:
            emit_diagnostics(diags, DiagFormat.text)
            status = EXIT_USER
            continue
        engine = Engine(pack, registry)
        rows = []
        for text, ctx in samples:
            r = engine.check(text, "", ctx)
            failed = tuple(
                f"{f.rule_id} ({f.action}{', fixed' if f.fixed else ''})" for f in r.findings
            )
            sent = (
                r.final_text
                if r.verdict in ("pass", "fixed", "block")
                else f"draft kept for {r.verdict}: {r.final_text}"
            )
            rows.append(Checked(text, r.verdict, failed, sent))
        out.checked(f"domain: {domain} ({len(pack.rules)} rules)", rows)
    return status


# ---- the conversations ------------------------------------------------------------------------


@dataclass
class Result:
    """The exit status and, per conversation (by name), the features it showed (feature ->
    detail), its turns and its wall time."""

    status: int = EXIT_OK
    seen: dict[str, dict[str, str]] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def model_missing(registry: Registry) -> str | None:
    """Why the local model cannot run here, or None."""
    if "llamacpp" not in registry.llm_backends:
        return "no installed plugin registers the llamacpp backend (charter-llamacpp)"
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install llama-cpp-python)"
    return None


def run_demo(
    out: DemoOut,
    *,
    registry: Registry,
    llm: LLM | None = None,
    keep: Path | None = None,
    clock: Callable[[], datetime] | None = None,
    timer: Callable[[], float] = time.perf_counter,
    conversations: Sequence[Conversation] = CONVERSATIONS,
) -> Result:
    """The conversations against ``llm`` (default: the bundled model through the ``llamacpp``
    backend; when it cannot run, the rules alone, with a note, exit 0)."""
    started = timer()
    if keep is not None and (keep / "demo.db").exists():
        out.warn(f"{keep / 'demo.db'} exists: remove it or give --keep another directory")
        return Result(EXIT_USER)
    label = f"{type(llm).__name__} (given to the demo)"
    if llm is None:
        why = model_missing(registry)
        if why is None:
            try:
                with out.busy("loading the bundled Gemma 3 270M model (llama.cpp)…"):
                    llm = registry.llm_backends["llamacpp"].create({"seed": SEED})
            except (RuntimeError, OSError, ValueError) as exc:
                why = f"the local model cannot be loaded: {exc}"
        if llm is None:
            out.warn(f"{why}; showing the rules alone instead (charter demo --rules-only)")
            return Result(rules(out, registry))
        label = (
            f"llamacpp, the bundled Gemma 3 270M base model (loaded in {timer() - started:.1f}s)"
        )
    n = len(conversations)
    out.say(f"charter demo: {n} scripted conversation{'s' * (n != 1)} through the agent runtime")
    out.say(f"model: {label}")
    out.say(f"sampling: seed {SEED} · max_tokens {MAX_TOKENS} · temperature {TEMPERATURE}")
    where = keep if keep is not None else Path(tempfile.mkdtemp(prefix="charter-demo-"))
    try:
        where.mkdir(parents=True, exist_ok=True)
        db = where / "demo.db"
        db.touch()
        out.say(
            f"database: {db} (kept)"
            if keep is not None
            else "database: a temporary SQLite file, removed at the end (--keep DIR keeps it)"
        )
        out.say(
            "memory key: 256 random bits from os.urandom, made for this run and never stored "
            "(the packs encrypt L2/L3 memories)"
        )
        out.say(
            "the packs are strict: their replies are composed from templates and the model is "
            "not asked; in assisted mode it answers what no template covers, and its drafts are "
            "checked"
        )
        out.say("a base model's text varies: each ↳ note says what actually happened")
        demo = _Demo(out, registry, llm, f"sqlite:///{db}", os.urandom(32), clock, timer)
        result = Result()
        for conversation in conversations:
            demo.converse(conversation, result)
        _summary(out, result, timer() - started)
        if keep is not None:
            out.say(
                f"look around: CHARTER_DATABASE_URL=sqlite:///{db} charter tickets list "
                "(charter traces, charter trace ID)"
            )
        return result
    finally:
        if keep is None:
            shutil.rmtree(where, ignore_errors=True)


class _Demo:
    def __init__(
        self,
        out: DemoOut,
        registry: Registry,
        llm: LLM,
        database_url: str,
        key: bytes,
        clock: Callable[[], datetime] | None,
        timer: Callable[[], float],
    ) -> None:
        self.out = out
        self.registry = registry
        self.llm = llm
        self.database_url = database_url
        self.key = key
        self.clock = clock
        self.timer = timer

    def _agent(
        self, c: Conversation, skills: Mapping[str, Skill], outages: Mapping[str, Outage]
    ) -> Agent:
        from charter.agent import Agent, AgentOptions
        from charter.store.clock import utcnow

        registry = dataclasses.replace(self.registry, skills={**skills, **outages})
        clock = self.clock or utcnow
        if c.now is not None:  # the demo data's calendar (the medical schedule is July 2025)
            fixed = datetime.fromisoformat(c.now)
            clock = lambda: fixed  # noqa: E731
        return Agent.from_pack(
            c.domain,
            llm=self.llm,
            database_url=self.database_url,
            memory_key=self.key,
            registry=registry,
            clock=clock,
            options=AgentOptions(max_tokens=MAX_TOKENS, temperature=TEMPERATURE, mode=c.mode),
        )

    def converse(self, c: Conversation, result: Result) -> None:
        started = self.timer()
        from charter.conversations.runner import fresh

        # each conversation's skills start from their first state (a demo ledger's numbering),
        # as each conversation test's do: a rerun shows the same numbers
        skills = {n: fresh(s) for n, s in self.registry.skills.items()}
        names = {s.outage for s in c.steps if s.outage is not None}
        outages = {n: Outage(skills[n], "charter demo") for n in sorted(names)}
        sessions = len({s.session for s in c.steps})
        with self.out.busy(f"compiling the {c.domain} pack…"):
            agent = self._agent(c, skills, outages)
        mode = f"{c.mode} mode" if c.mode else f"the pack's {agent.parts.responses.mode} mode"
        self.out.header(
            f"{c.domain} · user {c.user} · {mode} · {len(c.steps)} turns, {sessions} "
            f"session{'s' if sessions > 1 else ''}"
        )
        seen: dict[str, str] = {}  # fact id -> the session it was first seen in
        features: dict[str, str] = {}
        last: str | None = None
        with agent:
            for n, step in enumerate(c.steps, start=1):
                if last is not None and step.session != last:
                    self.out.say(
                        f"-- new session {step.session}: the same user {c.user}; goals stay "
                        f"in session {last}, memory carries over"
                    )
                last = step.session
                noted = self._turn(agent, c, n, step, outages, seen)
                for name, detail in noted.items():
                    if name == "done":  # every goal the journey completed, in order
                        done = [*features.get("done", "").split(", "), *detail.split(", ")]
                        features["done"] = ", ".join(dict.fromkeys(d for d in done if d))
                    else:
                        features.setdefault(name, detail)
        result.seen[c.name] = features
        result.turns[c.name] = len(c.steps)
        result.seconds[c.name] = self.timer() - started

    def _turn(
        self,
        agent: Agent,
        c: Conversation,
        n: int,
        step: Step,
        outages: Mapping[str, Outage],
        seen: dict[str, str],
    ) -> dict[str, str]:
        p = agent.parts
        if step.outage is not None:
            self.out.warn(
                f"simulated outage: {step.outage} raises for this turn only "
                "(a demo wrapper around the registered skill)"
            )
        before = {g.id: p.goals.context(g.id) for g in p.goals.tree(c.user, step.session)}
        started = self.timer()
        outage = outages.get(step.outage or "")
        with self.out.busy(f"{c.domain} · turn {n}/{len(c.steps)}: the agent is answering…"):
            if outage is not None:
                outage.down = True
            try:
                reply = agent.turn(c.user, step.session, step.text)
            finally:
                if outage is not None:
                    outage.down = False
        took = self.timer() - started
        trace = p.traces.get(reply.trace_id) if p.traces is not None and reply.trace_id else None
        noted = annotate(reply, trace, session=step.session, before=before, seen=seen, mode=c.mode)
        for fact in p.facts.list_facts(_admin(c.user)):
            seen.setdefault(fact.id, step.session)
        self.out.turn(
            step.session, step.text, reply.verdict, reply.text, noted.text(f"{took:.1f}s")
        )
        return noted.features


def _admin(user: str) -> Any:
    from charter.memory.records import Accessor

    return Accessor(user, "demo", role="admin")


# ---- the summary ------------------------------------------------------------------------------


# the summary shows their detail after the ✓ (done: the goals the journey completed)
DETAILED = ("handoff", "fallback", "model", "done")


def _mark(features: Mapping[str, str], name: str) -> str:
    if name not in features:
        return "–"
    return f"✓ {features[name]}" if name in DETAILED and features[name] else "✓"


def _row(name: str, turns: int, features: Mapping[str, str], seconds: float) -> list[str]:
    return [name, str(turns), *(_mark(features, f) for f in FEATURES), f"{seconds:.0f}s"]


def _summary(out: DemoOut, result: Result, total: float) -> None:
    rows = [_row(n, result.turns[n], f, result.seconds[n]) for n, f in result.seen.items()]
    union: dict[str, str] = {}
    for features in result.seen.values():
        for name, detail in features.items():
            union.setdefault(name, detail)
    finished = sum(1 for f in result.seen.values() if f.get("done"))
    if finished:
        union["done"] = f"{finished} of {len(result.seen)} conversations"
    rows.append(_row("all", sum(result.turns.values()), union, total))
    out.summary(rows, f"total wall time {total:.1f}s")
