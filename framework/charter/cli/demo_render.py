"""How ``charter demo`` shows itself: plain text when stdout is not a terminal (no colours, no
spinner: the tests pin it exactly), rich on a terminal (a spinner while the model loads and
while each turn runs, a coloured verdict tag, a summary table)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TextIO

from charter.cli.chat_render import VERDICT_STYLES

if TYPE_CHECKING:
    from rich.console import Console

# the columns of ``demo_script.FEATURES``, between the turns and the time
SUMMARY_HEAD = (
    "conversation",
    "turns",
    "one reply",
    "confirm",
    "once",
    "correct",
    "cancel",
    "carry",
    "faq",
    "hand-off",
    "fallback",
    "memory",
    "model",
    "stage",
    "move",
    "completed",
    "time",
)


@dataclass(frozen=True)
class Checked:
    """One ``--rules-only`` sample: the model output, the verdict, what failed, what is sent."""

    output: str
    verdict: str
    failed: tuple[str, ...]
    sent: str


class DemoOut(Protocol):
    def say(self, text: str) -> None:
        """A line of information."""

    def warn(self, text: str) -> None:
        """Something the reader must not miss: a simulation, a fallback to the rules alone."""

    def header(self, text: str) -> None: ...

    def turn(self, session: str, text: str, verdict: str, reply: str, note: str) -> None: ...

    def summary(self, rows: Sequence[Sequence[str]], footer: str) -> None: ...

    def checked(self, title: str, rows: Sequence[Checked]) -> None: ...

    def busy(self, text: str) -> contextlib.AbstractContextManager[None]:
        """A progress indicator for as long as the block runs."""


def _indent(text: str, lead: str) -> str:
    """``text`` with every line after the first indented to stand under the first."""
    pad = " " * len(lead)
    lines = text.splitlines() or [""]
    return "\n".join([lead + lines[0], *(pad + line for line in lines[1:])])


def plain_table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "".join(line + "\n" for line in lines)


class PlainDemoOut:
    def __init__(self, stdout: TextIO | None = None) -> None:
        self._out = stdout or sys.stdout

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def say(self, text: str) -> None:
        self._write(text + "\n")

    def warn(self, text: str) -> None:
        self._write(f"! {text}\n")

    def header(self, text: str) -> None:
        self._write(f"\n== {text} ==\n")

    def turn(self, session: str, text: str, verdict: str, reply: str, note: str) -> None:
        self._write(
            _indent(text, f"{session} > ")
            + "\n"
            + _indent(reply, f"  [{verdict}] ")
            + "\n"
            + _indent(note, "  ↳ ")
            + "\n"
        )

    def summary(self, rows: Sequence[Sequence[str]], footer: str) -> None:
        self._write("\n" + plain_table([SUMMARY_HEAD, *rows]) + footer + "\n")

    def checked(self, title: str, rows: Sequence[Checked]) -> None:
        out = [f"\n== {title} =="]
        for r in rows:
            out.append(_indent(r.output, "- model output  "))
            out.append(f"  verdict       {r.verdict}")
            out.append("  failed        " + (", ".join(r.failed) or "-"))
            out.append(_indent(r.sent, "  sent          "))
        self._write("".join(line + "\n" for line in out))

    def busy(self, text: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


class RichDemoOut:
    def __init__(self, console: Console | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False)

    def say(self, text: str) -> None:
        self.console.print(text, style="dim", markup=False)

    def warn(self, text: str) -> None:
        self.console.print(f"⚠ {text}", style="bold yellow", markup=False)

    def header(self, text: str) -> None:
        self.console.print()
        self.console.rule(text, style="bold")

    def turn(self, session: str, text: str, verdict: str, reply: str, note: str) -> None:
        from rich.padding import Padding
        from rich.text import Text

        self.console.print(Text.assemble((f"{session} › ", "dim"), (text, "bold")))
        tag = Text(f" {verdict} ", style=VERDICT_STYLES.get(verdict, "reverse"))
        self.console.print(Padding(Text.assemble(tag, " ", reply), (0, 0, 0, 2)))
        self.console.print(Padding(Text(_indent(note, "↳ "), style="cyan"), (0, 0, 0, 2)))

    def summary(self, rows: Sequence[Sequence[str]], footer: str) -> None:
        """Two tables, so that a terminal of 100 columns holds them: the marks, then per
        conversation the goals it completed and the details behind the marks."""
        from rich.table import Table

        done = SUMMARY_HEAD.index("completed")
        last = len(rows) - 1
        table = Table(title="what the demo exercised", title_style="bold", padding=(0, 1))
        for name in SUMMARY_HEAD:
            if name == "conversation":
                table.add_column(name, overflow="fold", max_width=18)
            elif name != "completed":
                table.add_column(name, no_wrap=True, min_width=len(name))
        for i, row in enumerate(rows):
            cells = [c if n < 2 or n == len(row) - 1 else c[:1] for n, c in enumerate(row)]
            del cells[done]
            styled = [c if c != "–" else "[dim]–[/dim]" for c in cells]
            table.add_row(*styled, style="bold" if i == last else None)
        journeys = Table(title="journeys", title_style="bold")
        journeys.add_column("conversation", no_wrap=True)
        journeys.add_column("completed", overflow="fold")
        journeys.add_column("details", overflow="fold")
        for i, row in enumerate(rows):
            details = [
                f"{SUMMARY_HEAD[n]} {c[2:]}"
                for n, c in enumerate(row)
                if 1 < n < len(row) - 1 and n != done and c.startswith("✓ ")
            ]
            completed = row[done][2:] if row[done].startswith("✓ ") else "–"
            style = "bold" if i == last else None
            journeys.add_row(row[0], completed, "; ".join(details) or "–", style=style)
        self.console.print()
        self.console.print(table)
        self.console.print(journeys)
        self.console.print(footer, style="bold", markup=False, highlight=False)

    def checked(self, title: str, rows: Sequence[Checked]) -> None:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title, show_lines=True, expand=True)
        table.add_column("model output", ratio=3, overflow="fold")
        table.add_column("verdict", no_wrap=True)
        table.add_column("failed rules", ratio=2, overflow="fold")
        table.add_column("sent to the user", ratio=3, overflow="fold")
        for r in rows:
            table.add_row(
                Text(r.output),
                Text(r.verdict, style=VERDICT_STYLES.get(r.verdict, "")),
                Text("\n".join(r.failed) or "-"),
                Text(r.sent),
            )
        self.console.print(table)

    @contextlib.contextmanager
    def busy(self, text: str) -> Iterator[None]:
        with self.console.status(text, spinner="dots"):
            yield
