"""The ablation of seed 001 §5.4 (``charter health --ablation CASES``): the scripted cases of
``charter.health.ablation_cases`` played in five configurations — ``base`` (no memory, no
reflection, no skills: goals still plan), ``memory``, ``reflection`` or ``skills`` alone, and
``all`` — switched by ``AgentOptions(memory=, reflection=, skills=)``, always with
``mode="assisted"``: the ablation measures the components around a model that may answer
(templates tell what they cover, the model answers the rest), where a strict pack would never let
it speak. Each configuration of a file gets a fresh SQLite database; the clock (``NOW``) and the
model are scripted, so the success matrix is the same on every run. Over the success rates:

    CC = (all − base) / ((memory − base) + (reflection − base) + (skills − base))

CC < 0.3 negative synergy, 0.3 ≤ CC < 0.7 independent, ≥ 0.7 closed loop; null when the
denominator is 0 (the components alone change nothing), with the reason. Cases solved only by
components together make CC exceed 1.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

from charter.agent import Agent, AgentOptions
from charter.compile.compiled import CompiledPack
from charter.health.ablation_cases import (
    COMPONENTS,
    AblationError,
    CaseFile,
    Outcome,
    TurnModel,
    load_case_files,
    play,
)
from charter.health.report import percent, text_console
from charter.reflect.engine import Engine
from charter.registry import Registry
from charter.traces.model import iso

NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)  # 10:00 in China, the day of the demo data
# a throwaway key for the temporary databases (the packs encrypt some memory levels)
_KEY = base64.b64encode(b"charter-ablation-throwaway-key!!").decode()
CLOSED_LOOP = Fraction(7, 10)
INDEPENDENT = Fraction(3, 10)
BANDS = {"negative": "negative synergy", "independent": "independent", "closed": "closed loop"}


@dataclass(frozen=True)
class Configuration:
    name: str
    memory: bool
    reflection: bool
    skills: bool

    @property
    def components(self) -> tuple[str, ...]:
        return tuple(c for c in COMPONENTS if getattr(self, c))

    def options(self) -> AgentOptions:
        # assisted: the model answers what no template covers (the shipped packs are strict,
        # where it never speaks and memory and reflection would have nothing to act on)
        return AgentOptions(
            memory=self.memory,
            reflection=self.reflection,
            skills=self.skills,
            trace=False,
            mode="assisted",
        )


CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("base", False, False, False),
    Configuration("memory", True, False, False),
    Configuration("reflection", False, True, False),
    Configuration("skills", False, False, True),
    Configuration("all", True, True, True),
)
NAMES: tuple[str, ...] = tuple(c.name for c in CONFIGURATIONS)
SHORT = {"memory": "mem", "reflection": "refl", "skills": "skills"}  # the table's needs column


# ---- the synergy ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Synergy:
    """CC and its band; ``value`` None (and ``reason`` why) when it cannot be computed."""

    value: Fraction | None
    band: str | None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        value = None if self.value is None else round(float(self.value), 4)
        return {"value": value, "band": self.band, "reason": self.reason or None}

    @property
    def shown(self) -> str:
        return "n/a" if self.value is None else f"{float(self.value):.2f}"


def band(cc: Fraction) -> str:
    if cc < INDEPENDENT:
        return BANDS["negative"]
    if cc < CLOSED_LOOP:
        return BANDS["independent"]
    return BANDS["closed"]


def synergy(rates: Mapping[str, Fraction]) -> Synergy:
    """CC from the success rate of each configuration (``NAMES``)."""
    base = rates["base"]
    gains = sum((rates[c] - base for c in COMPONENTS), Fraction(0))
    if gains == 0:
        if all(rates[c] == base for c in COMPONENTS):
            why = "memory, reflection and skills alone each succeed as often as the baseline"
        else:
            why = "the single components' gains over the baseline cancel out"
        return Synergy(None, None, f"the denominator is 0: {why}")
    cc = (rates["all"] - base) / gains
    if gains < 0:
        why = "the denominator is negative: the components alone do worse than the baseline"
        return Synergy(cc, band(cc), why)
    return Synergy(cc, band(cc))


# ---- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    pack: str
    file: str
    line: int
    name: str
    needs: tuple[str, ...] | None
    outcomes: Mapping[str, Outcome]  # configuration -> outcome

    @property
    def expected(self) -> dict[str, bool] | None:
        """Success predicted by ``needs``: in the configurations that have every component."""
        if self.needs is None:
            return None
        return {c.name: set(self.needs) <= set(c.components) for c in CONFIGURATIONS}

    @property
    def unexpected(self) -> tuple[str, ...]:
        """The configurations whose outcome differs from what ``needs`` predicts."""
        want = self.expected
        if want is None:
            return ()
        return tuple(n for n in NAMES if self.outcomes[n].ok != want[n])

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "file": self.file,
            "line": self.line,
            "name": self.name,
            "needs": None if self.needs is None else list(self.needs),
            "outcomes": {n: self.outcomes[n].as_dict() for n in NAMES},
            "unexpected": list(self.unexpected),
        }


@dataclass(frozen=True)
class Summary:
    """Successes per configuration over ``total`` cases, and the CC they give."""

    total: int
    passed: Mapping[str, int]

    def rate(self, name: str) -> Fraction:
        return Fraction(self.passed[name], self.total) if self.total else Fraction(0)

    @property
    def synergy(self) -> Synergy:
        if not self.total:
            return Synergy(None, None, "no cases")
        return synergy({n: self.rate(n) for n in NAMES})

    def as_dict(self) -> dict[str, Any]:
        base = self.rate("base")
        return {
            "cases": self.total,
            "configurations": {
                n: {
                    "passed": self.passed[n],
                    "rate": round(float(self.rate(n)), 4),
                    "gain": None if n == "base" else round(float(self.rate(n) - base), 4),
                }
                for n in NAMES
            },
            "cc": self.synergy.as_dict(),
        }


def summarize(results: Sequence[CaseResult]) -> Summary:
    return Summary(len(results), {n: sum(r.outcomes[n].ok for r in results) for n in NAMES})


@dataclass(frozen=True)
class AblationReport:
    cases: tuple[CaseResult, ...]
    now: datetime = NOW

    @property
    def packs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.pack for r in self.cases))

    def pack(self, name: str) -> Summary:
        return summarize([r for r in self.cases if r.pack == name])

    @property
    def overall(self) -> Summary:
        return summarize(self.cases)

    @property
    def unexpected(self) -> tuple[CaseResult, ...]:
        return tuple(r for r in self.cases if r.unexpected)

    def as_dict(self) -> dict[str, Any]:
        return {
            "now": iso(self.now),
            "configurations": [
                {"name": c.name, "components": list(c.components)} for c in CONFIGURATIONS
            ],
            "overall": self.overall.as_dict(),
            "packs": [{"pack": p, **self.pack(p).as_dict()} for p in self.packs],
            "cases": [r.as_dict() for r in self.cases],
        }


# ---- running ----------------------------------------------------------------------------------


def _quiet(hook: str, event: object) -> None:
    """Plugins hear nothing of an ablation run."""


def run_ablation(
    paths: Sequence[Path],
    *,
    registry: Registry,
    database_dir: Path | None = None,
    now: datetime = NOW,
) -> AblationReport:
    """Play every case of the case files under ``paths`` (files, or directories of
    ``*.yaml``) in the five configurations. AblationError when a case file or its pack is
    not right. The databases go to ``database_dir`` when given (kept: one per file and
    configuration, replaced when there), else to a temporary directory removed after."""
    files = load_case_files(paths, registry.packs)
    packs = [_compile(f, registry) for f in files]
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="charter-ablation-") as tmp:
        where = database_dir if database_dir is not None else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        empty = Path(tmp) / "empty.db"  # every store's tables, no rows: copied, not migrated
        if packs:
            empty.touch()
            _agent(packs[0], empty, registry, CONFIGURATIONS[0], TurnModel(), now).close()
        for index, (cases, pack) in enumerate(zip(files, packs, strict=True), 1):
            outcomes: dict[str, list[Outcome]] = {}
            engine = Engine(pack, registry)
            for config in CONFIGURATIONS:
                db = where / f"ablation-{index:02d}-{pack.name}-{config.name}.db"
                shutil.copyfile(empty, db)
                outcomes[config.name] = _play(cases, pack, engine, config, db, registry, now)
            for i, case in enumerate(cases.cases):
                results.append(
                    CaseResult(
                        pack.name,
                        cases.path,
                        case.line,
                        case.name,
                        case.needs,
                        {n: outcomes[n][i] for n in NAMES},
                    )
                )
    return AblationReport(tuple(results), now)


def _compile(file: CaseFile, registry: Registry) -> CompiledPack:
    from charter.compile.api import compile_path

    compiled, diags = compile_path(file.pack_root, registry)
    if compiled is None:
        raise AblationError([d for d in diags if d.is_error])
    return compiled


def _agent(
    pack: CompiledPack,
    db: Path,
    registry: Registry,
    config: Configuration,
    model: TurnModel,
    now: datetime,
) -> Agent:
    return Agent.from_pack(
        pack,
        llm=model,
        database_url=f"sqlite:///{db}",
        memory_key=_KEY,
        registry=registry,
        clock=lambda: now,
        notify=_quiet,
        options=config.options(),
    )


def _play(
    file: CaseFile,
    pack: CompiledPack,
    engine: Engine,
    config: Configuration,
    db: Path,
    registry: Registry,
    now: datetime,
) -> list[Outcome]:
    model = TurnModel()
    with _agent(pack, db, registry, config, model, now) as agent:
        cases = enumerate(file.cases, 1)
        return [play(agent, model, engine, case, f"case-{n:02d}") for n, case in cases]


# ---- output -----------------------------------------------------------------------------------


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
