"""What a pack's ``learning.yaml`` and ``patches/*.yaml`` compile to (seed 001 §3, ARCHITECTURE §9).

Immutable objects, built once by the compile stage ``charter.compile.learning`` and used by the
turn loop (``charter.learn.apply``) and the triggers (``charter.learn.triggers``) without the
parser:

* ``LearningSpec`` — which reflection triggers are on and their thresholds, the similarity a
  patch needs to match an input, and the concept definitions ``charter learn`` writes into
  calibration tables;
* ``ParameterMapping`` — a phrase (去年一季度) mapped to parameter values for one intent, each
  value a constant or an offset from the turn's date (``current_year - 1``);
* ``Calibration`` — a confused pair of concepts (市盈率 / 市净率), what tells them apart and an
  example;
* ``PatchSet`` — every patch of the pack, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

# what ``current_<unit>`` in a mapping's value means, read off the turn's local date
Unit = Literal["year", "quarter", "month", "day"]
UNITS: tuple[Unit, ...] = ("year", "quarter", "month", "day")

DEFAULT_SIMILARITY = 0.85
DEFAULT_ENTROPY = 3.2  # seed 001 §3.1: mean token entropy (nats) above which the model is unsure
DEFAULT_SKILL_FAILURES = 2  # seed 001 §3.1: a skill failing twice in a row
DEFAULT_CONTRADICTION_TURNS = 3  # seed 001 §3.1: contradicting a fact confirmed within 3 turns


@dataclass(frozen=True)
class ValueExpr:
    """A mapping's value: ``constant`` when ``unit`` is None, else ``current_<unit> + offset``."""

    constant: Any = None
    unit: Unit | None = None
    offset: int = 0

    def evaluate(self, now: datetime) -> Any:
        """On the turn's local date; months and quarters go round the year (上个月 said in
        January is 12, 上季度 in the first quarter 4), days round the month."""
        if self.unit is None:
            return self.constant
        if self.unit == "year":
            return now.year + self.offset
        if self.unit == "quarter":
            return ((now.month - 1) // 3 + self.offset) % 4 + 1
        if self.unit == "month":
            return (now.month - 1 + self.offset) % 12 + 1
        return (now.date() + timedelta(days=self.offset)).day

    def source(self) -> Any:
        """As written in a patch file: the constant, or ``current_year - 1``."""
        if self.unit is None:
            return self.constant
        if self.offset == 0:
            return f"current_{self.unit}"
        sign = "+" if self.offset > 0 else "-"
        return f"current_{self.unit} {sign} {abs(self.offset)}"


@dataclass(frozen=True)
class ParameterMapping:
    id: str
    intent: str
    phrase: str
    values: tuple[tuple[str, ValueExpr], ...]  # slot name -> value, in file order
    entity: str | None = None  # the extractor that must see an entity where the phrase matched
    learned_from: tuple[str, ...] = ()  # reflection log ids
    file: str = ""
    line: int = 0

    def resolve(self, now: datetime) -> dict[str, Any]:
        return {name: expr.evaluate(now) for name, expr in self.values}


@dataclass(frozen=True)
class Calibration:
    id: str
    confused_pair: tuple[str, str]  # (what was taken, what was meant) as first learned
    discriminator: str
    example: str = ""
    intent: str | None = None  # None: every intent
    learned_from: tuple[str, ...] = ()
    file: str = ""
    line: int = 0

    def note(self) -> str:
        """The line the prompt carries when the input names one of the pair."""
        a, b = self.confused_pair
        text = f"注意区分{a}与{b}：{self.discriminator}"
        return text + (f"（例：{self.example}）" if self.example else "")


@dataclass(frozen=True)
class PatchSet:
    mappings: tuple[ParameterMapping, ...] = ()
    calibrations: tuple[Calibration, ...] = ()
    files: tuple[str, ...] = ()
    rejected: frozenset[str] = frozenset()  # ids a reviewer decided against (never re-learned)

    def __len__(self) -> int:
        return len(self.mappings) + len(self.calibrations)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.mappings) + tuple(c.id for c in self.calibrations)

    def learned_from(self) -> frozenset[str]:
        """The reflection log ids some patch was compiled from (reflection conversion)."""
        ids = [rid for m in self.mappings for rid in m.learned_from]
        ids += [rid for c in self.calibrations for rid in c.learned_from]
        return frozenset(ids)


@dataclass(frozen=True)
class Triggers:
    skill_failures: int = DEFAULT_SKILL_FAILURES  # 0: off
    negation: bool = True
    entropy: float | None = DEFAULT_ENTROPY  # None: off
    contradiction_turns: int = DEFAULT_CONTRADICTION_TURNS  # 0: off
    rejection: bool = True


@dataclass(frozen=True)
class LearningSpec:
    triggers: Triggers = field(default_factory=Triggers)
    similarity: float = DEFAULT_SIMILARITY
    # concept -> what defines it (市净率: 股价 ÷ 每股净资产), for calibration tables
    concepts: tuple[tuple[str, str], ...] = ()
    patches: PatchSet = field(default_factory=PatchSet)
    patches_dir: str = "patches"  # relative to the pack: where ``charter learn`` writes

    def concept(self, name: str) -> str | None:
        return next((d for n, d in self.concepts if n == name), None)
