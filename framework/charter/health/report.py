"""The Cognitive Health Index report (seed 001 §5): what it holds and how it prints.

Nine metrics in three dimensions — memory (MH), reflection (RH), skills (SH) — each a count
over a count with its healthy threshold. The mark compares the exact fraction with the
threshold (no rounding decides a pass): ``pass``, ``warn``, or ``n/a`` when the denominator is
0 (nothing to measure) or what the metric needs is not there (RH without a pack). The report
also holds the days of the window: turns, reflections and the daily values of the metrics read
from traces (``charter.health.metrics`` computes it all; ``charter.health.html`` draws it).

``render_table`` prints one rich table per dimension, without colours when stdout is not a
terminal and 100 columns wide there, so the output is the same everywhere; ``render_json`` the
same data as one JSON document.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from charter.text.display import shown, shown_json
from charter.traces.model import iso

if TYPE_CHECKING:
    from rich.console import Console

Mark = Literal["pass", "warn", "n/a"]
WIDTH = 100  # when not writing to a terminal: the same table everywhere


@dataclass(frozen=True)
class Threshold:
    """Healthy when ``low ≤ value`` and, with ``high``, ``value ≤ high`` (both inclusive)."""

    low: Fraction
    high: Fraction | None = None

    def holds(self, numerator: int, denominator: int) -> bool:
        value = Fraction(numerator, denominator)
        return self.low <= value and (self.high is None or value <= self.high)

    @property
    def text(self) -> str:
        if self.high is not None:
            return f"{percent(self.low, 0)}–{percent(self.high, 0)}"
        if self.low == 1:
            return "= 100%"
        return f"≥ {percent(self.low, 0)}"

    def as_dict(self) -> dict[str, float | None]:
        return {"min": float(self.low), "max": None if self.high is None else float(self.high)}


@dataclass(frozen=True)
class Definition:
    id: str
    dimension: str  # MH, RH, SH
    name: str
    numerator: str  # what is counted, in words (the docs and the HTML report show them)
    denominator: str
    threshold: Threshold
    from_traces: bool = False  # has a daily value in the trend


def _t(low: int, high: int | None = None) -> Threshold:
    return Threshold(Fraction(low, 100), None if high is None else Fraction(high, 100))


DIMENSIONS: tuple[tuple[str, str], ...] = (
    ("MH", "memory health"),
    ("RH", "reflection health"),
    ("SH", "skill health"),
)
DEFINITIONS: tuple[Definition, ...] = (
    Definition(
        "memory_utilisation",
        "MH",
        "memory utilisation",
        "active facts read at least once",
        "active facts",
        _t(65),
    ),
    Definition(
        "cross_session_rate",
        "MH",
        "cross-session recall",
        "recalled facts written in another session",
        "recalled facts",
        _t(40),
        from_traces=True,
    ),
    Definition(
        "decay_compliance",
        "MH",
        "decay compliance",
        "facts past valid_until that are expired or archived",
        "facts past valid_until (not superseded, deprecated or contradicted)",
        _t(100),
    ),
    Definition(
        "reflection_conversion",
        "RH",
        "reflection conversion",
        "reflections some deployed patch was learned from",
        "reflections logged",
        _t(70),
    ),
    Definition(
        "rule_reuse",
        "RH",
        "rule reuse",
        "deployed patches used at least 3 times",
        "deployed patches",
        _t(50),
    ),
    Definition(
        "failure_interception",
        "RH",
        "failure interception",
        "patch uses",
        "patch uses + the reflections each patch was learned from",
        _t(85),
    ),
    Definition(
        "contract_compliance",
        "SH",
        "contract compliance",
        "skill calls without a contract violation",
        "skill calls",
        _t(100),
        from_traces=True,
    ),
    Definition(
        "fallback_activation",
        "SH",
        "fallback activation",
        "skill calls whose fallback ran",
        "skill calls",
        _t(5, 15),
        from_traces=True,
    ),
    Definition(
        "chain_success",
        "SH",
        "chain success",
        "goals with a fallback that ended completed",
        "goals with a fallback",
        _t(80),
        from_traces=True,
    ),
)
BY_ID: Mapping[str, Definition] = {d.id: d for d in DEFINITIONS}
TREND_IDS: tuple[str, ...] = tuple(d.id for d in DEFINITIONS if d.from_traces)


def percent(value: Fraction | float, digits: int = 1) -> str:
    text = f"{float(value) * 100:.{digits}f}"
    return f"{text}%"


def ratio(numerator: int, denominator: int) -> float | None:
    """The value as JSON gives it: the fraction to four places, None for 0/0."""
    return None if denominator == 0 else round(numerator / denominator, 4)


@dataclass(frozen=True)
class Metric:
    id: str
    numerator: int
    denominator: int
    note: str = ""  # why it is n/a, when it is

    @property
    def definition(self) -> Definition:
        return BY_ID[self.id]

    @property
    def measured(self) -> bool:
        return self.denominator > 0 and not self.note

    @property
    def value(self) -> float | None:
        return ratio(self.numerator, self.denominator) if self.measured else None

    @property
    def mark(self) -> Mark:
        if not self.measured:
            return "n/a"
        held = self.definition.threshold.holds(self.numerator, self.denominator)
        return "pass" if held else "warn"

    @property
    def shown(self) -> str:
        """``66.7%`` or ``n/a``."""
        if not self.measured:
            return "n/a"
        return percent(Fraction(self.numerator, self.denominator))

    def as_dict(self) -> dict[str, Any]:
        d = self.definition
        return {
            "id": self.id,
            "name": d.name,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "value": self.value,
            "healthy": d.threshold.text,
            "threshold": d.threshold.as_dict(),
            "mark": self.mark,
            "note": self.note,
        }


@dataclass(frozen=True)
class Day:
    """One UTC day of the window: turns, reflections, and (numerator, denominator) of each
    metric read from traces."""

    day: str  # 2024-05-01
    turns: int = 0
    reflections: int = 0
    counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def value(self, metric: str) -> float | None:
        num, den = self.counts.get(metric, (0, 0))
        return ratio(num, den)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"day": self.day, "turns": self.turns}
        out["reflections"] = self.reflections
        out.update({m: self.value(m) for m in TREND_IDS})
        return out


@dataclass(frozen=True)
class HealthReport:
    now: datetime
    metrics: tuple[Metric, ...]  # in the order of DEFINITIONS
    days: tuple[Day, ...] = ()
    pack: str | None = None
    since: datetime | None = None

    def metric(self, metric_id: str) -> Metric:
        return next(m for m in self.metrics if m.id == metric_id)

    def dimension(self, dim: str) -> list[Metric]:
        return [m for m in self.metrics if m.definition.dimension == dim]

    @property
    def marks(self) -> dict[Mark, int]:
        counted: dict[Mark, int] = {"pass": 0, "warn": 0, "n/a": 0}
        for m in self.metrics:
            counted[m.mark] += 1
        return counted

    def scope(self) -> str:
        """``pack ecommerce · since 2024-05-02T00:00:00Z · now 2024-05-04T00:00:00Z``."""
        parts = [f"pack {self.pack}" if self.pack else "every pack"]
        if self.since is not None:
            parts.append(f"since {iso(self.since)}")
        parts.append(f"now {iso(self.now)}")
        return " · ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "since": None if self.since is None else iso(self.since),
            "now": iso(self.now),
            "marks": dict(self.marks),
            "dimensions": [
                {"id": dim, "name": name, "metrics": [m.as_dict() for m in self.dimension(dim)]}
                for dim, name in DIMENSIONS
            ],
            "trend": [d.as_dict() for d in self.days],
        }


def render_json(report: HealthReport) -> str:
    return shown_json(json.dumps(report.as_dict(), ensure_ascii=False, indent=2)) + "\n"


def text_console(tty: bool) -> tuple[io.StringIO, Console]:
    """A rich console writing into a string: coloured and as wide as the terminal on a tty,
    else plain and ``WIDTH`` wide, so the same table is printed everywhere."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(
        file=out,
        width=None if tty else WIDTH,
        color_system="auto" if tty else None,
        force_terminal=tty,
        highlight=False,
        emoji=False,
    )
    return out, console


def render_table(report: HealthReport, *, tty: bool = False) -> str:
    """One table, the dimensions in sections: metric, value, count, healthy range, mark and
    why a metric is n/a."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out, console = text_console(tty)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for header, right in (
        ("", False),
        ("metric", False),
        ("value", True),
        ("count", True),
        ("healthy", False),
        ("mark", False),
    ):
        table.add_column(header, justify="right" if right else "left", no_wrap=True)
    table.add_column("note")
    styles = {"pass": "green", "warn": "yellow", "n/a": "dim"}
    for dim, _ in DIMENSIONS:
        for n, m in enumerate(report.dimension(dim)):
            table.add_row(
                dim if n == 0 else "",
                m.definition.name,
                m.shown,
                f"{m.numerator}/{m.denominator}",
                m.definition.threshold.text,
                Text(m.mark, style=styles[m.mark]),
                Text(shown(m.note)),
            )
        if dim != DIMENSIONS[-1][0]:
            table.add_section()
    marks = report.marks
    console.print(Text(shown(f"Cognitive health · {report.scope()}")))
    console.print()
    console.print(table)
    console.print()
    console.print(Text(f"{marks['pass']} pass, {marks['warn']} warn, {marks['n/a']} n/a"))
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())
