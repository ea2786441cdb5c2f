"""What ``charter chat`` shows, and the two ways it shows it.

A turn becomes a verdict tag, the reply, and with ``--trace`` labelled rows (``Row``): the goal
tree, the memories used and the ladder step that found them, the reflection record's three
lines, failed rules, the turn's goal events and the response templates the reply was composed
from, the FAQ's best candidates and scores when the input reached it, who answered (and each
model draft's judgement), the skills called and their fallbacks, the trace id. The rows are
plain text, built once; ``PlainOut`` prints them as they are (stdin not a terminal: scripts and
tests, no colours, no spinner, pinned exactly by the tests), ``RichOut`` styles them for a
terminal (a coloured verdict tag, dim labels, a spinner while the model works).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from charter.compile.response_spec import MODEL
from charter.text.display import shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from charter.agent.reply import Reply
    from charter.memory.records import Fact
    from charter.traces.model import Trace

LABEL = 12  # the width of a row's label column in plain output
VERDICT_STYLES = {
    "pass": "bold white on green",
    "fixed": "bold black on cyan",
    "retry": "bold black on yellow",
    "escalate": "bold white on magenta",
    "block": "bold white on red",
    "ask": "bold white on blue",
}
HELP = (
    ("/new", "start a new session (a new session id; the user's memory stays)"),
    ("/goals", "the goal tree of this session"),
    ("/memory", "the facts remembered about this user"),
    ("/trace", "the full trace of the last turn"),
    ("/help", "this list"),
    ("/quit", "leave (also Ctrl-D)"),
)


@dataclass(frozen=True)
class Row:
    """A label and its lines (the later ones go under the first)."""

    label: str
    lines: tuple[str, ...]


# ---- building the rows -------------------------------------------------------------------------


def goal_lines(goals: Sequence[Mapping[str, Any]]) -> list[str]:
    """The goals as a tree: a sub-goal under its parent, indented, ``└ `` before it."""
    ids = {str(g.get("id")) for g in goals}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for g in goals:
        parent = g.get("parent")
        key = str(parent) if parent is not None and str(parent) in ids else None
        children.setdefault(key, []).append(g)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for g in children.get(parent, []):
            lead = "  " * (depth - 1) + "└ " if depth else ""
            # how it ended beyond its status: moved, refused, a stage's own name (compliant)
            status, outcome = g.get("status"), g.get("outcome")
            ended = f"{status}: {outcome}" if outcome and outcome != status else status
            lines.append(f"{lead}{g.get('intent')} [{ended}] {g.get('description')}")
            walk(str(g.get("id")), depth + 1)

    walk(None, 0)
    return lines


def _step(trace: Trace | None, name: str) -> Mapping[str, Any] | None:
    if trace is None:
        return None
    return next((s.outputs for s in trace.steps if s.name == name), None)


def memory_lines(reply: Reply, trace: Trace | None) -> list[str]:
    """What recall gave the turn, as the trace keeps it (scrubbed); without a trace, the ids."""
    recall = _step(trace, "recall")
    if recall is None:
        return list(reply.memories_used)
    facts = [str(f) for f in recall.get("facts") or []]
    return facts + [f"summary: {s}" for s in recall.get("summaries") or []]


def skill_line(outcome: Mapping[str, Any]) -> str:
    text = f"{outcome.get('skill')} {outcome.get('status')}"
    if outcome.get("failure"):
        text += f" ({outcome['failure']})"
    if outcome.get("fallback"):
        text += f" → fallback {outcome['fallback']}"
    if outcome.get("ticket"):
        text += f", ticket {outcome['ticket']}"
    return text


def attempt_lines(trace: Trace | None) -> list[str]:
    """One line per reflection when a turn took more than one or a rule failed: what failed
    and what was decided (``1: retry 1 of 2 (claims-backed-by-memory)``, ``2: accepted``)."""
    reflected = [s for s in trace.steps if s.name == "reflect"] if trace is not None else []
    if len(reflected) < 2 and not any(s.outputs.get("failed") for s in reflected):
        return []
    lines = []
    for n, step in enumerate(reflected, start=1):
        failed = ", ".join(str(r) for r in step.outputs.get("failed") or [])
        head = (step.decision or "").split(":")[0]
        lines.append(f"{n}: {head}" + (f" ({failed})" if failed else ""))
    return lines


def faq_lines(faq: Mapping[str, Any]) -> tuple[str, ...]:
    """The FAQ's best candidates for the input with their scores, against its thresholds."""
    found = [f"{c['id']} {c['score']:.3f}" for c in faq.get("candidates") or ()]
    limits = (
        f"answers from {faq['min_score']:.2f}, before the intents from {faq['direct_score']:.2f}"
    )
    return (" · ".join(found) if found else "no entry shares a word", limits)


def _answered(reply: Reply) -> str:
    n = reply.attempts
    if n == 0:
        return f"{reply.answered_by}, no generation"
    plural = "" if n == 1 else "s"
    if reply.answered_by == "template" and MODEL not in reply.responses:
        # every draft refused: the plain reply took the model's place
        return f"template, the model's {n} draft{plural} refused"
    return f"{reply.answered_by}, {n} attempt{plural}"


def turn_rows(reply: Reply, trace: Trace | None) -> list[Row]:
    """The ``--trace`` rows of one turn."""
    rows = [Row("goals", tuple(goal_lines(reply.goals)) or ("none",))]
    rows.append(Row("memories", tuple(memory_lines(reply, trace)) or ("none",)))
    recall = _step(trace, "recall")
    if recall is not None:
        reason = recall.get("reason")
        rows.append(Row("ladder", (f"{recall.get('step')}: {reason}" if reason else "none",)))
    if reply.reflection is not None:
        rows.append(Row("reflection", reply.reflection.lines()))
    if reply.findings:
        shown = [
            f"{f.rule_id} → {f.action}{' (repaired)' if f.fixed else ''}" for f in reply.findings
        ]
        rows.append(Row("rules", tuple(shown)))
    if reply.events:
        rows.append(Row("events", (", ".join(str(e.get("kind")) for e in reply.events),)))
    if reply.responses:
        rows.append(Row("responses", (" + ".join(reply.responses),)))
    faq = (_step(trace, "compose") or {}).get("faq")
    if faq is not None:
        rows.append(Row("faq", faq_lines(faq)))
    rows.append(Row("answered", (_answered(reply),)))
    attempts = attempt_lines(trace)
    if attempts:
        rows.append(Row("attempts", tuple(attempts)))
    rows.append(Row("skills", tuple(skill_line(s) for s in reply.skills) or ("none",)))
    if reply.ticket:
        rows.append(Row("ticket", (reply.ticket,)))
    rows.append(Row("trace", (reply.trace_id or "not recorded",)))
    return rows


def fact_rows(facts: Sequence[tuple[Fact, str]]) -> list[Row]:
    """``/memory``: each active fact with its revealed value, type and confidence."""
    return [
        Row(
            f.key,
            (
                f"{value}  ({f.memory_type}, {f.source} {f.confidence:.2f}"
                f"{', encrypted at rest' if f.encrypted else ''})",
            ),
        )
        for f, value in facts
    ]


def plain_rows(rows: Sequence[Row], indent: str = "  ") -> str:
    out = []
    # a label longer than the column (a fact key: medication.drug) still gets its two spaces
    width = max([LABEL, *(len(row.label) + 2 for row in rows)])
    for row in rows:
        for i, line in enumerate(row.lines):
            label = row.label if i == 0 else ""
            out.append(f"{indent}{label:<{width}}{line}".rstrip())
    return "".join(line + "\n" for line in out)


def help_text() -> str:
    return "".join(f"  {cmd:<9}{what}\n" for cmd, what in HELP)


# ---- showing them ------------------------------------------------------------------------------


class Out(Protocol):
    """Where a chat reads its lines and shows what happens."""

    def read(self) -> str | None:
        """The user's next line; None at the end of input."""

    def say(self, text: str) -> None:
        """A line of information (a banner, the answer to a command)."""

    def block(self, text: str) -> None:
        """Preformatted text, shown as it is (a trace, the help)."""

    def rows(self, rows: Sequence[Row]) -> None: ...

    def reply(self, reply: Reply, rows: Sequence[Row]) -> None: ...

    def error(self, text: str) -> None: ...

    def busy(self, text: str) -> contextlib.AbstractContextManager[None]:
        """A progress indicator for as long as the block runs."""


class PlainOut:
    """Plain text: lines read from ``stdin`` are echoed after ``> ``, so the output reads as
    the conversation it was; replies are ``[verdict] text``."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self._in = stdin or sys.stdin
        self._out = stdout or sys.stdout

    def read(self) -> str | None:
        line = self._in.readline()
        if not line:
            return None
        line = line.rstrip("\r\n")
        self._out.write(f"> {shown(line)}\n")
        return line

    def say(self, text: str) -> None:
        self._out.write(shown(text) + "\n")

    def block(self, text: str) -> None:
        self._out.write(shown(text))

    def rows(self, rows: Sequence[Row]) -> None:
        self._out.write(shown(plain_rows(rows)))

    def reply(self, reply: Reply, rows: Sequence[Row]) -> None:
        self._out.write(shown(f"[{reply.verdict}] {reply.text}\n" + plain_rows(rows)))
        self._out.flush()

    def error(self, text: str) -> None:
        self._out.flush()
        sys.stderr.write(shown(text) + "\n")

    def busy(self, text: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


class RichOut:
    """A terminal: a prompt, a coloured verdict tag, dim labels, a spinner while busy."""

    def __init__(self, console: Console | None = None, errors: Console | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False)
        self.errors = errors or Console(stderr=True, highlight=False)

    def read(self) -> str | None:
        try:
            return self.console.input("[bold]you ›[/bold] ")
        except (EOFError, KeyboardInterrupt):
            self.console.print()
            return None

    def say(self, text: str) -> None:
        self.console.print(shown(text), style="dim", markup=False)

    def block(self, text: str) -> None:
        self.console.print(shown(text), markup=False, end="", soft_wrap=True)

    def rows(self, rows: Sequence[Row]) -> None:
        self.console.print(_grid(rows))

    def reply(self, reply: Reply, rows: Sequence[Row]) -> None:
        from rich.padding import Padding
        from rich.text import Text

        tag = Text(f" {reply.verdict} ", style=VERDICT_STYLES.get(reply.verdict, "reverse"))
        self.console.print(Text.assemble(tag, " ", shown(reply.text)))
        if rows:
            self.console.print(Padding(_grid(rows), (0, 0, 0, 2)))

    def error(self, text: str) -> None:
        self.errors.print(shown(text), style="bold red", markup=False)

    @contextlib.contextmanager
    def busy(self, text: str) -> Iterator[None]:
        with self.console.status(text, spinner="dots"):
            yield


def _grid(rows: Sequence[Row]) -> Table:
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    for row in rows:
        grid.add_row(Text(shown(row.label)), Text(shown("\n".join(row.lines))))
    return grid
