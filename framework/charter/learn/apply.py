"""Learned patches applied to a turn before planning, without the model (seed 001 §3.2–3.3).

A parameter mapping matches an input with a similarity of at least the pack's threshold (0.85
by default):

* with an ``entity`` (an extractor's name, as ``charter learn`` writes them), the phrase is
  compared with each entity that extractor finds in the input (``rapidfuzz``'s ``ratio``), and
  the two must also *mean* the same: an entity that resolves differently on the turn's date is
  no match however alike it looks. 去年第一季度 matches 去年一季度 (0.91, the same quarter);
  上上个月 does not match 上个月 (0.86, another month), nor 11月 1月, nor 前年的第一季度
  去年的第一季度;
* without one, ``partial_ratio`` compares the phrase with the best window of the input of the
  phrase's length: 去年一季度 matches “帮我查去年一季度的财报” (1.0), not 今年一季度 (0.8).

The mapping's values are evaluated on the turn's local date (``current_year - 1``)
and handed to the planner as preset slot values of the mapping's intent: they count only when
the planner plans that intent, and then override what its regex or the model would read.

A calibration table matches when the input names either concept of its confused pair: the
discriminator joins the prompt's key facts, so the model is told the difference before it
answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from charter.compile.specs.learn import Calibration, LearningSpec, ParameterMapping
from charter.contracts.rules import Extractor, Item


@dataclass(frozen=True)
class Applied:
    patch: str
    kind: str  # mapping, calibration
    intent: str | None
    score: float
    values: Mapping[str, Any] = field(default_factory=dict)
    span: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.patch,
            "kind": self.kind,
            "intent": self.intent,
            "score": round(self.score, 4),
            "set": dict(self.values),
            "span": list(self.span),
        }


@dataclass(frozen=True)
class Patched:
    """What the patches decided for one input."""

    preset: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # intent -> slots
    notes: tuple[str, ...] = ()  # calibration lines for the prompt
    applied: tuple[Applied, ...] = ()

    def trace(self) -> dict[str, Any]:
        return {"applied": [a.as_dict() for a in self.applied], "notes": list(self.notes)}


NOTHING = Patched()


class PatchMatcher:
    """Built once per agent from the compiled pack's patches; ``match`` per input."""

    def __init__(self, spec: LearningSpec, extractors: Mapping[str, Extractor]) -> None:
        self.threshold = spec.similarity
        self.mappings = spec.patches.mappings
        self.calibrations = spec.patches.calibrations
        self.extractors = extractors
        # what each entity phrase itself means: read once, compared with the input's entities
        self._meaning: dict[str, Any] = {}
        for m in self.mappings:
            extractor = extractors.get(m.entity) if m.entity is not None else None
            if extractor is not None:
                items = [i for i in extractor.extract(m.phrase) if i.text == m.phrase]
                self._meaning[m.id] = items[0].value if items else None

    def __bool__(self) -> bool:
        return bool(self.mappings or self.calibrations)

    def match(self, text: str, now: datetime) -> Patched:
        if not self or not text:
            return NOTHING
        preset: dict[str, dict[str, Any]] = {}
        applied: list[Applied] = []
        found: dict[str, list[Item]] = {}  # extractor -> its entities, read once per input
        for m in self.mappings:
            hit = (
                self._entity(m, text, now, found)
                if m.entity is not None
                else self._score(m.phrase, text)
            )
            if hit is None:
                continue
            score, span = hit
            slots = preset.setdefault(m.intent, {})
            if any(name in slots for name, _ in m.values):
                continue  # an earlier (better placed in the file) mapping decided these slots
            values = m.resolve(now)
            slots.update(values)
            applied.append(Applied(m.id, "mapping", m.intent, score, values, span))
        notes = []
        for c in self.calibrations:
            named = _names(c, text)
            if named is not None:
                notes.append(c.note())
                applied.append(Applied(c.id, "calibration", c.intent, 1.0, {}, named))
        return Patched(preset, tuple(notes), tuple(applied))

    def _score(self, phrase: str, text: str) -> tuple[float, tuple[int, int]] | None:
        if phrase in text:
            start = text.index(phrase)
            return 1.0, (start, start + len(phrase))
        if len(text) < len(phrase):
            return None
        got = fuzz.partial_ratio_alignment(phrase, text)
        if got is None:
            return None
        score = got.score / 100.0
        if score < self.threshold:
            return None
        return score, (got.dest_start, got.dest_end)

    def _entity(
        self,
        m: ParameterMapping,
        text: str,
        now: datetime,
        found: dict[str, list[Item]],
    ) -> tuple[float, tuple[int, int]] | None:
        """The best entity of the mapping's type in the input that looks like the phrase and
        means the same on ``now``."""
        assert m.entity is not None
        extractor = self.extractors.get(m.entity)
        meaning = self._meaning.get(m.id)
        if extractor is None or meaning is None:
            return None  # a plugin removed since compiling, or a phrase it does not read
        if m.entity not in found:
            found[m.entity] = list(extractor.extract(text))
        best: tuple[float, tuple[int, int]] | None = None
        for item in found[m.entity]:
            score = 1.0 if item.text == m.phrase else fuzz.ratio(m.phrase, item.text) / 100.0
            if score < self.threshold or (best is not None and score <= best[0]):
                continue
            if _same(item.value, meaning, now):
                best = (score, (item.start, item.end))
        return best


def _same(a: Any, b: Any, now: datetime) -> bool:
    """Two entity values mean the same: a time expression by what it resolves to on ``now``
    (去年第一季度 and 去年一季度 alike), anything else by equality."""
    if callable(getattr(a, "resolve", None)) and callable(getattr(b, "resolve", None)):
        try:
            return bool(a.resolve(now) == b.resolve(now))
        except (ValueError, OverflowError):
            return False
    return bool(a == b)


def _names(c: Calibration, text: str) -> tuple[int, int] | None:
    for term in c.confused_pair:
        at = text.find(term)
        if at >= 0:
            return at, at + len(term)
    return None
