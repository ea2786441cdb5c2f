"""Checks across the intents of ``goals.yaml``, once each is compiled: part of the ``goals``
stage, mixed into its ``GoalsCompiler`` (``charter.compile.goals``).

A parent names a declared intent and no intent is its own ancestor (CH303); a slot name carried
from memory is read under one fact key (CH317); and two unrelated intents do not both fire on
one of their own words, reported with that word as an example input (CH302, a warning — it
builds the triggers into closures and runs them). None of these can be said of one intent alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from charter.compile.build import Builder
from charter.compile.env import Env
from charter.compile.goal_base import GoalFileStage
from charter.compile.literals import LiteralTable
from charter.compile.specs import goals as S
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, did_you_mean, warning
from charter.pack.typed.goals import GoalsFile
from charter.pack.yamlsrc import LocatedDoc


class IntentChecks(GoalFileStage):
    """Mixed into the goals stage, which provides ``doc``, ``file``, ``registry``,
    ``constants``, ``diagnostics`` and ``_err``."""

    doc: LocatedDoc
    file: GoalsFile
    registry: Registry
    constants: Mapping[str, Any]
    diagnostics: list[Diagnostic]

    def memory_keys(self, intents: list[S.IntentSpec], seen: Mapping[str, int]) -> None:
        """A slot name carried from memory is read under one fact key (the planner takes
        remembered values by slot name): two keys for it would make one of them unread."""
        first: dict[str, tuple[str, str]] = {}  # slot name -> (intent, key)
        for intent in (i for i in intents if i.id in seen):
            written = self.file.intents[seen[intent.id]]
            # the slots as the file has them: the compiled ones leave out those that failed
            names = [s.name if s is not None else None for s in written.slots] if written else []
            for slot in intent.slots:
                if slot.carry != "memory":
                    continue
                k = names.index(slot.name)
                key = intent.fact_key(slot.name)
                held = first.setdefault(slot.name, (intent.id, key))
                if held[1] != key:
                    self._err(
                        "CH317",
                        f"slot '{slot.name}' of intent '{intent.id}' is carried from memory "
                        f"under the key '{key}', but intent '{held[0]}' carries it under "
                        f"'{held[1]}'",
                        ("intents", seen[intent.id], "slots", k, "carry"),
                        f"give both slots the same memory_key (memory_key: {slot.name})",
                    )

    def parents(self, intents: list[S.IntentSpec]) -> None:
        by_id = {i.id: i for i in intents}
        written = self.file.intents
        declared = {item.id for item in written if item is not None and item.id}
        for n, item in enumerate(written):
            if item is None or not item.parent:
                continue
            parent = item.parent
            if parent not in declared:
                self._err(
                    "CH303",
                    f"intent '{item.id}' names unknown parent intent '{parent}'",
                    ("intents", n, "parent"),
                    did_you_mean(parent, declared),
                )
                continue
            chain, cur = [str(item.id)], parent
            while cur in by_id and cur not in chain:
                chain.append(cur)
                cur = by_id[cur].parent or ""
            # every intent on a cycle walks it; report it once, from its least id, and not
            # from an intent that merely leads into it
            if cur == chain[0] and cur == min(chain):
                self._err(
                    "CH303",
                    "parent cycle: " + " -> ".join([*chain, cur]),
                    ("intents", n, "parent"),
                    "an intent may not be its own ancestor",
                )

    def overlaps(self, spec: S.GoalsSpec) -> None:
        """Two unrelated intents firing on one word of theirs: which one did the user mean?"""
        table = LiteralTable(spec.literals)
        builder = Builder(table.ids, self.constants, self.registry.predicates)
        # a safety intent is checked before the others and meant to overlap them; an intent
        # without a trigger fires on nothing
        keyed = [i for i in spec.intents if i.trigger is not None and not i.safety]
        tests: dict[str, Callable[[Env], bool]] = {
            i.id: builder.expr(i.trigger) for i in keyed if i.trigger is not None
        }
        index = {str(item.id): n for n, item in enumerate(self.file.intents) if item is not None}

        def fires(iid: str, text: str) -> bool:
            return tests[iid](Env("", text, {}, table, self.registry.extractors))

        reported: set[tuple[str, str]] = set()
        for a in keyed:
            for b in keyed:
                if a.id >= b.id or a.parent == b.id or b.parent == a.id:
                    continue
                for word in (*a.literals, *b.literals):
                    if (a.id, b.id) not in reported and fires(a.id, word) and fires(b.id, word):
                        reported.add((a.id, b.id))
                        later = b if index.get(b.id, 0) > index.get(a.id, 0) else a
                        other = a if later is b else b
                        self.diagnostics.append(
                            warning(
                                "CH302",
                                f"the triggers of intents '{other.id}' and '{later.id}' overlap: "
                                f"both fire on the input '{word}'",
                                self.doc.loc(("intents", index.get(later.id, 0), "trigger")),
                                "make one trigger more specific, e.g. add "
                                f'and not input contains "{word}"',
                            )
                        )
