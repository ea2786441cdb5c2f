"""An intent's slots in ``goals.yaml`` and the templates naming them: part of the ``goals``
stage, mixed into its ``GoalsCompiler`` (``charter.compile.goals``).

A slot takes its value with exactly one of a regular expression, an extractor and a role (the
words around the value: CH319 when it has none, a blank one, or a type) (CH013); the
expression must compile (CH105) and not backtrack catastrophically (CH112, a warning), its
``personal:`` kinds must fit what it can capture (``charter.compile.slot_pii``), the extractor
must be installed (CH102), and a required slot needs a question (CH011). A template (an intent's
description, a deliverable, a skill argument) may name only the intent's slots (CH300) and the
installed formatters (CH353). What one slot may be is its own idea, apart from how intents fit
together.
"""

from __future__ import annotations

import regex

from charter.compile.goal_base import GoalFileStage
from charter.compile.redos import catastrophe, catastrophic
from charter.compile.slot_pii import slot_diagnostics
from charter.compile.specs import goals as S
from charter.compile.specs.slots import SLOT_REF
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, did_you_mean, error, warning
from charter.pack.typed import goals as T
from charter.pack.yamlsrc import LocatedDoc, Pointer


class SlotChecks(GoalFileStage):
    """Mixed into the goals stage, which provides ``doc``, ``registry``, ``diagnostics`` and
    ``_err``."""

    doc: LocatedDoc
    registry: Registry
    diagnostics: list[Diagnostic]

    def slot(self, slot: T.Slot | None, ptr: Pointer, iid: str) -> S.SlotSpec | None:
        if slot is None or slot.name is None:
            return None
        name = slot.name
        pattern, extractor = slot.regex or None, slot.extractor or None
        role = self.role(slot, ptr, name, iid) if slot.role is not None else None
        if [pattern, extractor, slot.role].count(None) != 2:
            self._err(
                "CH013",
                f"slot '{name}' of intent '{iid}' needs exactly one of regex, extractor and role",
                ptr,
                "regex: finds the value in the input; extractor: takes it from an extractor; "
                "role: finds it by the words around it",
            )
        if pattern is not None:
            try:
                compiled = regex.compile(pattern, regex.V1)
            except regex.error as exc:
                self._err(
                    "CH105",
                    f"invalid regular expression in slot '{name}' of intent '{iid}': {exc}",
                    (*ptr, "regex"),
                )
            else:
                self.personal(compiled, slot, ptr, name, iid)
                for found in catastrophic(pattern, regex.V1):
                    at = self.doc.offset_loc((*ptr, "regex"), found.offset)
                    self.diagnostics.append(warning("CH112", *catastrophe(found, at)))
        if extractor is not None and extractor not in self.registry.extractors:
            self._err(
                "CH102",
                f"unknown extractor '{extractor}'",
                (*ptr, "extractor"),
                did_you_mean(extractor, self.registry.extractors),
            )
        if slot.required and not slot.ask:
            self._err(
                "CH011",
                f"required slot '{name}' of intent '{iid}' has no question to ask",
                ptr,
                "add ask: with the question put to the user when the slot is missing",
            )
        kind = slot.type or ("time" if extractor == "time" else "text")
        return S.SlotSpec(
            name=name,
            regex=pattern,
            extractor=extractor,
            role=role,
            type=kind if kind in S.SLOT_TYPES else "text",
            required=slot.required,
            ask=slot.ask,
            default=slot.default,
            multiple=slot.multiple,
            model=slot.model,
            label=slot.label,
            carry=slot.carry or None,
            personal=tuple(str(k) for k in slot.personal),
            memory_key=slot.memory_key or None,
            ask_location=self.doc.loc((*ptr, "ask")) if slot.ask else None,
        )

    def role(self, slot: T.Slot, ptr: Pointer, name: str, iid: str) -> S.RoleSpec | None:
        """``role:``: words on at least one side, none of them blank (CH319), and a value a
        text slot holds. An unknown ``kind`` was reported by the schema (CH013)."""
        role = slot.role
        assert role is not None
        at = (*ptr, "role")
        words: dict[str, tuple[str, ...]] = {}
        for side in ("before", "after"):
            kept = []
            for k, word in enumerate(getattr(role, side)):
                if isinstance(word, str) and not word.strip():
                    self._err(
                        "CH319",
                        f"a word of '{side}' in the role of slot '{name}' of intent '{iid}' "
                        "is blank",
                        (*at, side, k),
                        "write the word as the customer says it (给, 收款人, 那边)",
                    )
                elif isinstance(word, str):
                    kept.append(word.strip())
            words[side] = tuple(dict.fromkeys(kept))
        if not words["before"] and not words["after"]:
            self._err(
                "CH319",
                f"the role of slot '{name}' of intent '{iid}' has no words to find it by",
                at,
                "list the words said before the value (before: [给, 向]) or after it "
                "(after: [那边, 卡上])",
            )
            return None
        if slot.type and slot.type != "text":
            self._err(
                "CH319",
                f"slot '{name}' of intent '{iid}' reads a {role.kind or 'name'} by its role, "
                f"which is no {slot.type}",
                (*ptr, "type"),
                "a role slot holds text: drop type:",
            )
        return S.RoleSpec(kind=role.kind or "name", before=words["before"], after=words["after"])

    def personal(
        self, pattern: regex.Pattern[str], slot: T.Slot, ptr: Pointer, name: str, iid: str
    ) -> None:
        self.diagnostics += slot_diagnostics(
            pattern,
            list(slot.personal),
            self.registry.pii_recognizers.values(),
            lambda *more: self.doc.loc((*ptr, *more)),
            f"slot '{name}' of intent '{iid}'",
        )

    def refs(self, template: str, names: list[str], ptr: Pointer, iid: str, where: str) -> None:
        for m in SLOT_REF.finditer(template):
            for name in (n for n in m[2].split("|") if n):
                if name not in self.registry.formatters:
                    self.diagnostics.append(
                        error(
                            "CH353",
                            f"unknown formatter '{name}' in the {where} of intent '{iid}'",
                            self.doc.offset_loc(ptr, m.start(), m.end()),
                            did_you_mean(name, self.registry.formatters),
                        )
                    )
            if m[1] not in names:
                self.diagnostics.append(
                    error(
                        "CH300",
                        f"the {where} of intent '{iid}' names unknown slot '{m[1]}'",
                        self.doc.offset_loc(ptr, m.start(1), m.end(1)),
                        did_you_mean(m[1], names) or "declare the slot under slots:",
                    )
                )
