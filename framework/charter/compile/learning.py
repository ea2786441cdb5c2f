"""Compile stage ``learning``: ``learning.yaml`` and the patch files into a ``LearningSpec``.

``learning.yaml`` gives the reflection triggers, the similarity a patch needs and the concept
definitions (every key optional, the defaults of ``charter.compile.specs.learn``); the patch files
under ``patches_dir`` (``patches/*.yaml``, by file name) hold the parameter mappings and
calibrations ``charter learn`` wrote. The file shapes are checked by their JSON Schemas
(CH010-CH013); here, each at the place to fix: a patch naming an intent goals.yaml does not define
(CH340), a mapping setting a slot its intent does not have (CH341), a value that does not read as a
constant or ``current_<unit> [+|- N]`` (CH342, the caret at the bad token), an entity no installed
extractor finds (CH343), a patch id used twice (CH344), a calibration confusing a term with itself
(CH345), a value a number slot cannot hold (CH346), two mappings of one phrase and intent setting
the same slot (CH347, a warning: the first in file order wins), and a ``patches_dir`` outside the
pack (CH348). The values are read by ``charter.compile.values``.
"""

from __future__ import annotations

from typing import Any

from charter.compile.specs import learn as L
from charter.compile.specs.goals import GoalsSpec, IntentSpec
from charter.compile.values import ValueSyntaxError, is_numeric, parse_value
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.pack.model import PackSource, patches_dir
from charter.pack.typed.goals import GoalsFile
from charter.pack.typed.learning import (
    Calibration,
    LearningFile,
    ParameterMapping,
    PatchFile,
    Triggers,
)
from charter.pack.yamlsrc import LocatedDoc, Pointer


def _count(value: int | None, default: int) -> int:
    """A count as the schema wants it (0 turns a trigger off), else ``default``."""
    return value if value is not None and value >= 0 else default


def _triggers(raw: Triggers) -> L.Triggers:
    default = L.Triggers()
    # null turns the entropy trigger off; absent, or not above 0 (the schema reported it), it
    # keeps its default
    entropy = raw.entropy if "entropy" in raw.model_fields_set else default.entropy
    if entropy is not None and not entropy > 0:
        entropy = default.entropy
    return L.Triggers(
        skill_failures=_count(raw.skill_failures, default.skill_failures),
        negation=raw.negation is not False,
        entropy=entropy,
        contradiction_turns=_count(raw.contradiction_turns, default.contradiction_turns),
        rejection=raw.rejection is not False,
    )


def _settings(doc: LocatedDoc, diags: list[Diagnostic]) -> L.LearningSpec:
    data = LearningFile.read(doc.data)
    similarity = data.similarity
    if similarity is None or not 0 < similarity <= 1:
        similarity = L.DEFAULT_SIMILARITY  # absent, or the schema reported it
    directory = patches_dir(data.patches_dir)
    if directory is None:
        diags.append(
            error(
                "CH348",
                f"patches_dir '{data.patches_dir}' is not a directory inside the pack",
                doc.loc(("patches_dir",)),
                "give a path relative to the pack, below it: patches, or learned/patches",
            )
        )
    return L.LearningSpec(
        triggers=_triggers(data.triggers),
        similarity=float(similarity),
        concepts=tuple((name, text) for name, text in data.concepts.items() if text),
        patches_dir=directory or L.LearningSpec().patches_dir,
    )


class _Patches:
    """The patch files, one after the other, sharing the ids seen so far."""

    def __init__(self, source: PackSource, registry: Registry, goals: GoalsSpec | None) -> None:
        self.registry = registry
        self.goals = goals
        self.has_goals = source.goals is not None
        # intents goals.yaml declares, compiled or not (one that does not compile has its error)
        intents = GoalsFile.read(source.goals.data).intents if source.goals else ()
        self.declared = {i.id for i in intents if i is not None and i.id is not None}
        self.diagnostics: list[Diagnostic] = []
        self.ids: dict[str, Location] = {}
        # (intent, phrase) -> (mapping id, where its phrase is, the slots it sets), in file order
        self.phrases: dict[tuple[str, str], list[tuple[str, Location, frozenset[str]]]] = {}
        self.mappings: list[L.ParameterMapping] = []
        self.calibrations: list[L.Calibration] = []
        self.rejected: dict[str, Location] = {}  # id -> where a rejected: list names it

    def file(self, doc: LocatedDoc) -> None:
        data = PatchFile.read(doc.data)
        for i, rid in enumerate(data.rejected):
            if rid:
                self.rejected.setdefault(rid, doc.loc(("rejected", i)))
        for i, raw in enumerate(data.parameter_mappings):
            mapping = self.mapping(doc, ("parameter_mappings", i), raw) if raw is not None else None
            if mapping is not None:
                self.mappings.append(mapping)
        for i, cal in enumerate(data.calibrations):
            calibration = (
                self.calibration(doc, ("calibrations", i), cal) if cal is not None else None
            )
            if calibration is not None:
                self.calibrations.append(calibration)

    # ---- shared ---------------------------------------------------------------------------

    def _new_id(self, doc: LocatedDoc, ptr: Pointer, pid: str) -> bool:
        at = doc.loc((*ptr, "id"))
        first = self.ids.get(pid)
        if first is None:
            self.ids[pid] = at
            return True
        where = f"line {first.line}" if first.path == at.path else str(first)
        self.diagnostics.append(
            error(
                "CH344",
                f"patch id '{pid}' is defined twice (first at {where})",
                at,
                "rename one of them, or merge the two patches and their learned_from",
            )
        )
        return False

    def _intent(
        self, doc: LocatedDoc, ptr: Pointer, what: str, name: str
    ) -> tuple[bool, IntentSpec | None]:
        """Whether the intent is known, and its compiled spec when it compiled."""
        at = doc.loc((*ptr, "intent"))
        if not self.has_goals:
            self.diagnostics.append(
                error(
                    "CH340",
                    f"{what} names intent '{name}', but the pack has no goals.yaml",
                    at,
                    "patches apply to the intents of goals.yaml; add it, or remove the patch",
                )
            )
            return False, None
        if name not in self.declared:
            self.diagnostics.append(
                error(
                    "CH340",
                    f"unknown intent '{name}' in {what}",
                    at,
                    did_you_mean(name, self.declared) or "goals.yaml declares no such intent",
                )
            )
            return False, None
        return True, self.goals.intent(name) if self.goals is not None else None

    # ---- parameter mappings -----------------------------------------------------------------

    def mapping(
        self, doc: LocatedDoc, ptr: Pointer, raw: ParameterMapping
    ) -> L.ParameterMapping | None:
        pid, intent_id, phrase, values = raw.id, raw.intent, raw.phrase, raw.set_
        if not pid or not intent_id or not phrase or values is None:
            return None  # the schema reported it
        what = f"parameter mapping '{pid}'"
        ok = self._new_id(doc, ptr, pid)
        known, intent = self._intent(doc, ptr, what, intent_id)
        entity = raw.entity or None
        if entity is not None and entity not in self.registry.extractors:
            names = sorted(self.registry.extractors)
            self.diagnostics.append(
                error(
                    "CH343",
                    f"unknown extractor '{entity}' for the entity of {what}",
                    doc.loc((*ptr, "entity")),
                    did_you_mean(entity, names)
                    or "install the plugin that registers it, or remove entity",
                )
            )
            ok = False
        exprs = []
        for name, value in values.items():
            expr = self.value(doc, (*ptr, "set", name), what, intent if known else None, value)
            ok = ok and expr is not None
            if expr is not None:
                exprs.append((name, expr))
        if not ok or not known:
            return None
        self._overlap(doc, ptr, pid, intent_id, phrase, frozenset(values))
        return L.ParameterMapping(
            id=pid,
            intent=intent_id,
            phrase=phrase,
            values=tuple(exprs),
            entity=entity,
            learned_from=raw.learned_from,
            file=doc.path,
            line=doc.loc(ptr).line,
        )

    def value(
        self, doc: LocatedDoc, ptr: Pointer, what: str, intent: IntentSpec | None, raw: Any
    ) -> L.ValueExpr | None:
        name = str(ptr[-1])
        slot = intent.slot(name) if intent is not None else None
        if intent is not None and slot is None:
            slots = [s.name for s in intent.slots]
            self.diagnostics.append(
                error(
                    "CH341",
                    f"intent '{intent.id}' has no slot '{name}' ({what})",
                    doc.key_loc(ptr),
                    did_you_mean(name, slots)
                    or f"declare the slot under the slots of intent '{intent.id}' in goals.yaml",
                )
            )
            return None
        if raw is None or isinstance(raw, list | dict):
            return None  # the schema reported it
        try:
            expr = parse_value(raw)
        except ValueSyntaxError as exc:
            self.diagnostics.append(
                error(
                    "CH342",
                    f"cannot read the value of slot '{name}' in {what}: {exc.message}",
                    doc.offset_loc(ptr, exc.start, exc.end),
                    exc.hint,
                )
            )
            return None
        if (
            intent is not None
            and slot is not None
            and slot.type == "number"
            and not is_numeric(expr)
        ):
            self.diagnostics.append(
                error(
                    "CH346",
                    f"slot '{name}' of intent '{intent.id}' is a number, "
                    f"but {what} sets it to {_shown(raw)}",
                    doc.loc(ptr),
                    "write a number (1, 2.5) or current_<unit> + N / - N",
                )
            )
            return None
        return expr

    def _overlap(
        self,
        doc: LocatedDoc,
        ptr: Pointer,
        pid: str,
        intent: str,
        phrase: str,
        slots: frozenset[str],
    ) -> None:
        earlier = self.phrases.setdefault((intent, phrase), [])
        at = doc.loc((*ptr, "phrase"))
        for first, first_at, first_slots in earlier:
            both = sorted(slots & first_slots)
            if both:
                where = f"line {first_at.line}" if first_at.path == at.path else str(first_at)
                self.diagnostics.append(
                    warning(
                        "CH347",
                        f"parameter mapping '{pid}' sets slot '{both[0]}' for phrase '{phrase}' "
                        f"like '{first}' ({where}), which comes first and wins",
                        at,
                        "keep one of the two mappings (merge their learned_from)",
                    )
                )
                break
        earlier.append((pid, at, slots))

    # ---- calibrations -----------------------------------------------------------------------

    def calibration(self, doc: LocatedDoc, ptr: Pointer, raw: Calibration) -> L.Calibration | None:
        pid, discriminator = raw.id, raw.discriminator
        pair = [t for t in raw.confused_pair if t]
        if not pid or not discriminator or len(pair) != 2:
            return None  # the schema reported it
        what = f"calibration '{pid}'"
        ok = self._new_id(doc, ptr, pid)
        if pair[0] == pair[1]:
            self.diagnostics.append(
                error(
                    "CH345",
                    f"{what} confuses '{pair[0]}' with itself",
                    doc.loc((*ptr, "confused_pair", 1)),
                    "name two different concepts: [what was taken, what was meant]",
                )
            )
            ok = False
        intent = raw.intent or None
        if intent is not None:
            ok = self._intent(doc, ptr, what, intent)[0] and ok
        if not ok:
            return None
        return L.Calibration(
            id=pid,
            confused_pair=(pair[0], pair[1]),
            discriminator=discriminator,
            example=raw.example or "",
            intent=intent,
            learned_from=raw.learned_from,
            file=doc.path,
            line=doc.loc(ptr).line,
        )


def _shown(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower()


def compile_learning(
    source: PackSource, registry: Registry, goals: GoalsSpec | None
) -> tuple[L.LearningSpec | None, list[Diagnostic]]:
    """The pack's ``LearningSpec``; None when it has neither learning.yaml nor patch files."""
    if source.learning is None and not source.patches:
        return None, []
    diags: list[Diagnostic] = []
    spec = _settings(source.learning, diags) if source.learning else L.LearningSpec()
    patches = _Patches(source, registry, goals)
    for doc in source.patches:
        patches.file(doc)
    diags += patches.diagnostics
    rejected = patches.rejected
    ids = [m.id for m in patches.mappings] + [c.id for c in patches.calibrations]
    for pid in ids:
        if pid in rejected:
            diags.append(
                warning(
                    "CH349",
                    f"patch '{pid}' is deployed and rejected: the rejection wins, "
                    "it is not applied",
                    patches.ids.get(pid, rejected[pid]),
                    f"delete the patch, or take '{pid}' off rejected: ({rejected[pid]})",
                )
            )
    patch_set = L.PatchSet(
        mappings=tuple(m for m in patches.mappings if m.id not in rejected),
        calibrations=tuple(c for c in patches.calibrations if c.id not in rejected),
        files=tuple(doc.path for doc in source.patches),
        rejected=frozenset(rejected),
    )
    return L.LearningSpec(
        triggers=spec.triggers,
        similarity=spec.similarity,
        concepts=spec.concepts,
        patches=patch_set,
        patches_dir=spec.patches_dir,
    ), diags
