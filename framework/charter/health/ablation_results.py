"""The ablation's configurations and what playing the cases in them gives (seed 001 §5.4): the
five configurations (``base``, ``memory``, ``reflection``, ``skills``, ``all``), each case's
outcome in each (``CaseResult``, with the configurations its ``needs`` predict it succeeds in),
the successes per configuration (``Summary``) and the synergy coefficient over their rates:

    CC = (all − base) / ((memory − base) + (reflection − base) + (skills − base))

CC < 0.3 negative synergy, 0.3 ≤ CC < 0.7 independent, ≥ 0.7 closed loop; null when the
denominator is 0 (the components alone change nothing), with the reason. Cases solved only by
components together make CC exceed 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from charter.agent import AgentOptions
from charter.health.ablation_cases import COMPONENTS
from charter.health.ablation_play import Outcome
from charter.traces.model import iso

NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)  # 10:00 in China, the day of the demo data
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
