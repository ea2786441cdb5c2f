"""The ablation's report as text (``charter health --ablation``): one JSON document, or rich
tables: the success rate of each configuration per pack and overall with its gain over
``base``, CC and its band, each pack's success matrix (cases × configurations, ``!`` where an
outcome is not what the case's ``needs`` predict), and those cases with their replies."""

from __future__ import annotations

import json
from fractions import Fraction

from charter.health.ablation_results import NAMES, AblationReport, Summary
from charter.health.report import percent, text_console

SHORT = {"memory": "mem", "reflection": "refl", "skills": "skills"}  # the table's needs column


def render_ablation(report: AblationReport, fmt: str, *, tty: bool = False) -> str:
    """``fmt`` "json" (the report as one JSON document) or "table" (rich tables)."""
    if fmt == "json":
        return json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n"
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}: table or json")
    return _table(report, tty)


def _cell(summary: Summary, name: str) -> str:
    return f"{summary.passed[name]}/{summary.total} {percent(summary.rate(name))}"


def _table(report: AblationReport, tty: bool) -> str:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out, console = text_console(tty)
    packs = [(p, report.pack(p)) for p in report.packs]
    overall = report.overall
    rates = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    rates.add_column("configuration", no_wrap=True)
    for p, _ in packs:
        rates.add_column(p, justify="right", no_wrap=True)
    rates.add_column("overall", justify="right", no_wrap=True)
    rates.add_column("gain", justify="right", no_wrap=True)
    for name in NAMES:
        gain = "" if name == "base" else _signed(overall.rate(name) - overall.rate("base"))
        rates.add_row(name, *(_cell(s, name) for _, s in packs), _cell(overall, name), gain)
    rates.add_section()
    every = [s for _, s in packs] + [overall]
    rates.add_row("CC", *(s.synergy.shown for s in every), "")
    rates.add_row("band", *(s.synergy.band or "n/a" for s in every), "")
    console.print(Text(f"Ablation · {overall.total} cases · {len(packs)} pack(s) · seed 001 §5.4"))
    console.print()
    console.print(rates)
    for name, s in [*packs, ("overall", overall)]:
        if s.synergy.reason:
            console.print(Text(f"CC {name}: {s.synergy.reason}"))
    for p, _ in packs:
        matrix = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        matrix.add_column(p, overflow="fold")
        matrix.add_column("needs", no_wrap=True)
        for name in NAMES:
            matrix.add_column(name, justify="center", no_wrap=True)
        for r in (r for r in report.cases if r.pack == p):
            needs = "?" if r.needs is None else "+".join(SHORT[c] for c in r.needs) or "-"
            marks = [Text("✓" if r.outcomes[n].ok else "✗") for n in NAMES]
            for n, mark in zip(NAMES, marks, strict=True):
                if n in r.unexpected:
                    mark.append("!", style="bold red")
            matrix.add_row(r.name, needs, *marks)
        console.print()
        console.print(matrix)
    unexpected = report.unexpected
    if unexpected:
        console.print()
        console.print(Text(f"{len(unexpected)} case(s) not as their needs predict (!):"))
        for r in unexpected:
            for n in r.unexpected:
                o = r.outcomes[n]
                got = f"failed: {o.why}" if not o.ok else f"succeeded: {o.reply}"
                console.print(Text(f"  {r.file}:{r.line} {r.name} [{n}] {got}"))
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


def _signed(value: Fraction) -> str:
    return ("+" if value >= 0 else "") + percent(value)
