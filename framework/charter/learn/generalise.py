"""From reflection log entries to patches: what ``charter learn`` compiles (seed 001 §3.3).

Two kinds of entry become patches, both from the ``negation`` trigger (the user said 不对):

* a correction of skill arguments (``{"year": 2025}``) becomes a ``ParameterMapping``. The
  words of the user's input are read by the registry's extractors; an argument of the corrected
  call (the tool call's params overridden by the correction) is *explained* by an entity when
  its value is what the entity means at the input's timestamp (on the local calendar, as the
  planner reads times and the patches are applied). A time expression is taken apart into
  year, quarter, month and day; each part is written relative to the turn's date when it
  depends on the date the words were said (去年 said in 2026 is ``current_year - 1``) and as a
  constant otherwise (一季度 is ``1``). Every corrected argument must be explained, or the
  entry is not generalised. The mapping is for the intent and the entity type, never
  for the user: id ``<intent>/<entity>/<phrase>``, entries generalising to one id merge.
* ``{"concept": B, "instead_of": A}`` becomes a ``Calibration`` of the pair [A, B], told apart
  by the definitions learning.yaml's ``concepts`` give.

Whether a part of a time expression depends on the date is not read off the plugin's step
names: the expression is resolved again as if said a day, and one to twelve months, earlier
and later; a part that moves with the date by a fixed N is relative, one that moves by an N
that changes (the year 上季度 means) cannot be written and explains nothing. Any extractor
whose values have ``resolve(reference)`` (a span with ``start`` and ``granularity``) is read
so; dates give their parts as constants; other values are compared as they are.

Every other entry is reported as not converted, with why and, where a person can do something
about it, how.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from charter.compile.specs.goals import GoalsSpec, IntentSpec
from charter.compile.specs.learn import Calibration, LearningSpec, ParameterMapping, ValueExpr
from charter.contracts.rules import Extractor
from charter.learn.log import Evidence, LogEntry
from charter.learn.meaning import Entity, entities, explain

_SLOT_REF = re.compile(r"^\{([^{}]+)\}$")
_P = TypeVar("_P", ParameterMapping, Calibration)


@dataclass(frozen=True)
class Skipped:
    """An entry that became no patch: why, and how to make it one (empty when it is not meant
    to be one: another trigger, no correction)."""

    entry: str
    trigger: str
    reason: str
    hint: str = ""

    @property
    def warning(self) -> bool:
        return bool(self.hint)


@dataclass(frozen=True)
class Learned:
    mappings: tuple[ParameterMapping, ...]
    calibrations: tuple[Calibration, ...]
    skipped: tuple[Skipped, ...]
    entries: int  # how many entries were read

    @property
    def converted(self) -> int:
        return self.entries - len(self.skipped)


class _Skip(Exception):
    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(reason)
        self.reason, self.hint = reason, hint


def generalise(
    entries: Sequence[LogEntry],
    *,
    goals: GoalsSpec | None,
    learning: LearningSpec,
    extractors: Mapping[str, Extractor],
    patches_file: str = "patches/learned.yaml",
) -> Learned:
    """The patches ``entries`` (oldest first) generalise to, in the order first learned.

    ``patches_file`` is only named in hints (where a mapping can be written by hand)."""
    mappings: dict[str, ParameterMapping] = {}
    calibrations: dict[str, Calibration] = {}
    skipped: list[Skipped] = []
    reader = _Reader(goals, extractors, patches_file)
    rejected = learning.patches.rejected
    for entry in entries:
        try:
            if entry.trigger != "negation":
                raise _Skip("not compiled into patches (only negation entries are)", "")
            if not entry.correction:
                raise _Skip("no correction (the turn gave no new value)", "")
            if "concept" in entry.correction or "instead_of" in entry.correction:
                found = _calibration(entry, entry.correction, goals, learning)
                _not_rejected([found.id], rejected)
                calibrations[found.id] = _merged(calibrations.get(found.id, found), found)
            else:
                learned = reader.mappings(entry, entry.correction)
                _not_rejected([m.id for m in learned], rejected)
                merged = [_merged(mappings.get(m.id, m), m) for m in learned]  # all or none
                mappings.update((m.id, m) for m in merged)
        except _Skip as exc:
            skipped.append(Skipped(entry.id, entry.trigger, exc.reason, exc.hint))
    return Learned(
        tuple(mappings.values()), tuple(calibrations.values()), tuple(skipped), len(entries)
    )


def _not_rejected(ids: Sequence[str], rejected: frozenset[str]) -> None:
    """A reviewer's ``rejected:`` list: what it names is never written again."""
    named = [i for i in ids if i in rejected]
    if named:
        raise _Skip(f"rejected in review ({', '.join(named)})", "")


def _merged(first: _P, patch: _P) -> _P:
    """Entries generalising to one id make one patch, learned from all of them. A mapping
    that sets other values than the first one with its id is not merged: the person reviewing
    the file decides."""
    if first is patch:
        return patch
    both = (*first.learned_from, *patch.learned_from)
    if (
        isinstance(first, ParameterMapping)
        and isinstance(patch, ParameterMapping)
        and first.values != patch.values
    ):
        raise _Skip(
            f"generalises to {patch.id} like {', '.join(first.learned_from)}, but sets "
            f"{_shown_values(patch)} instead of {_shown_values(first)}",
            "look at both entries; if the later one is right, edit the patch by hand",
        )
    return replace(first, learned_from=both)


def _shown_values(mapping: ParameterMapping) -> str:
    return ", ".join(f"{name} = {expr.source()}" for name, expr in mapping.values)


def _evidence(entry: LogEntry, kind: str, name: str | None = None) -> Evidence | None:
    """The entry's first evidence of the kind (a tool call: the one of skill ``name``)."""
    found = [e for e in entry.evidence if e.type == kind]
    return next((e for e in found if name is None or e.name == name), found[0] if found else None)


# ---- calibrations ---------------------------------------------------------------------------


def _calibration(
    entry: LogEntry,
    correction: Mapping[str, Any],
    goals: GoalsSpec | None,
    learning: LearningSpec,
) -> Calibration:
    meant, taken = correction.get("concept"), correction.get("instead_of")
    if not (isinstance(meant, str) and meant and isinstance(taken, str) and taken):
        raise _Skip(
            "a concept correction needs both concept and instead_of",
            "write the calibration by hand in the patches file",
        )
    if meant == taken:
        raise _Skip(f"the correction confuses {meant} with itself", "nothing to calibrate")
    missing = [name for name in (taken, meant) if learning.concept(name) is None]
    if missing:
        shown = ", ".join(f"{name}: …" for name in missing)
        raise _Skip(
            f"no definition of {' and '.join(missing)} to tell {taken} from {meant}",
            f"add concepts: {{{shown}}} to learning.yaml, then run charter learn again",
        )
    known = goals is not None and entry.intent is not None and goals.intent(entry.intent)
    return Calibration(
        id=f"calibration/{taken}-{meant}",
        confused_pair=(taken, meant),
        discriminator=f"{taken}：{learning.concept(taken)}；{meant}：{learning.concept(meant)}",
        # not the user's question: a patch is committed and reaches every user's prompt, so
        # it carries no one's words (a reviewer may write a better example by hand)
        example=f"问的是{meant}，不是{taken}",
        intent=entry.intent if known else None,
        learned_from=(entry.id,),
    )


# ---- parameter mappings ---------------------------------------------------------------------


class _Reader:
    def __init__(
        self, goals: GoalsSpec | None, extractors: Mapping[str, Extractor], patches_file: str
    ) -> None:
        self.goals = goals
        self.extractors = extractors
        self.patches_file = patches_file

    def mappings(self, entry: LogEntry, correction: Mapping[str, Any]) -> list[ParameterMapping]:
        intent = self._intent(entry)
        said = _evidence(entry, "user_input")
        if said is None or not said.content:
            raise _Skip(
                "the evidence holds no user_input: nothing to generalise from",
                "only entries logged with the user's words can be learned",
            )
        call = _evidence(entry, "tool_call", entry.skill)
        args = {**(dict(call.params) if call is not None else {}), **correction}
        slots = {arg: _slot_of(intent, arg) for arg in args}
        for arg in correction:
            if slots[arg] is None:
                raise _Skip(
                    f"the corrected argument {arg} is bound to no slot of intent {intent.id}",
                    f"bind it to a slot in goals.yaml (skill: {{args: {{{arg}: '{{slot}}'}}}})",
                )
        entities = self._entities(said, intent)
        reads = [{a: explain(e, intent, a, slots[a], v) for a, v in args.items()} for e in entities]
        explains = [{a: x for a, x in r.items() if isinstance(x, ValueExpr)} for r in reads]
        chosen: set[int] = set()
        for arg in correction:
            n = next((i for i, found in enumerate(explains) if arg in found), None)
            moving = [(entities[i], r[arg]) for i, r in enumerate(reads) if isinstance(r[arg], str)]
            if n is None and moving:
                entity, unit = moving[0]
                raise _Skip(
                    f"{arg} = {_json(correction[arg])} is the {unit} {entity.item.text!r} means "
                    f"at the time it was said, but which {unit} that is depends on when in the "
                    f"year it is said: current_{unit} + N cannot write it",
                    f"if it matters, write the mapping by hand in {self.patches_file}",
                )
            if n is None:
                raise _Skip(
                    f"nothing in the input {said.content!r} explains "
                    f"{arg} = {_json(correction[arg])}",
                    f"no extractor finds that value in those words (slot {slots[arg]} of intent "
                    f"{intent.id}); if they always mean it, write the mapping by hand in "
                    f"{self.patches_file}",
                )
            chosen.add(n)
        out: list[ParameterMapping] = []
        taken: set[str] = set()
        for n in sorted(chosen):
            values = [(a, x) for a, x in explains[n].items() if a not in taken]
            taken.update(a for a, _ in values)
            entity = entities[n]
            out.append(
                ParameterMapping(
                    id=f"{intent.id}/{entity.extractor}/{entity.item.text}",
                    intent=intent.id,
                    phrase=entity.item.text,
                    values=tuple((str(slots[a]), x) for a, x in values),
                    entity=entity.extractor,
                    learned_from=(entry.id,),
                )
            )
        return out

    def _intent(self, entry: LogEntry) -> IntentSpec:
        if entry.intent is None:
            raise _Skip(
                "the entry names no intent, and a mapping is for one intent",
                "add an intent for such inputs to goals.yaml",
            )
        intent = self.goals.intent(entry.intent) if self.goals is not None else None
        if intent is None:
            raise _Skip(
                f"intent {entry.intent} is not an intent of goals.yaml",
                "restore the intent, or leave the entry out with --since",
            )
        return intent

    def _entities(self, said: Evidence, intent: IntentSpec) -> list[Entity]:
        return entities(self.extractors, intent, said)


def _slot_of(intent: IntentSpec, arg: str) -> str | None:
    """The slot an argument of the intent's skill takes its value from."""
    bound = intent.skill.args if intent.skill is not None else {}
    if arg in bound:
        m = _SLOT_REF.match(bound[arg]) if isinstance(bound[arg], str) else None
        return m[1] if m is not None and intent.slot(m[1]) is not None else None
    return arg if intent.slot(arg) is not None else None


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
