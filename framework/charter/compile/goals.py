"""Compile stage ``goals``: a loaded ``goals.yaml`` becomes a ``GoalsSpec``, every problem a
Diagnostic pointing into the file (also inside a trigger written as a YAML block scalar).

Checks beyond the schema: DSL syntax and names in triggers and deliverable checks (triggers may
only read the input and the context), slot patterns and extractors, templates and deliverables
naming unknown slots (CH300), parents (CH303), intent ids defined twice (CH304), test cases
naming unknown intents (CH305), one slot name carried from memory under two fact keys (CH317),
and triggers that overlap: two intents firing on one of their own words, reported with that
word as an example input (CH302, a warning).

The slots and the templates naming them are checked by ``charter.compile.goal_slots``, the
checks across intents (CH302, CH303, CH317) by ``charter.compile.goal_checks`` and an intent's
stages by ``charter.compile.goal_stages``; this module reads the file and each intent. All of
them read the file's typed model (``charter.pack.typed.goals``), in which what the schema
rejected is a default, and point their diagnostics into the located document by its indexes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from charter.compile.check import check_expr
from charter.compile.goal_checks import IntentChecks
from charter.compile.goal_slots import SlotChecks
from charter.compile.goal_stages import check_by, stages
from charter.compile.primitives import literals_of
from charter.compile.specs import goals as S
from charter.compile.specs.slots import SLOT_REF
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, did_you_mean
from charter.dsl import ast as A
from charter.pack.typed import goals as T
from charter.pack.yamlsrc import LocatedDoc, Pointer

TRIGGER_SUBJECTS = ("input", "context")
_SLOT_REF = SLOT_REF
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> int | None:
    m = re.fullmatch(r"([0-9]{1,9})([smhd])", text.strip())  # longer: the schema says so
    return int(m[1]) * _UNITS[m[2]] if m else None


def positive_literals(node: A.Expr) -> list[str]:
    """The words whose presence makes the expression true (not those under a ``not``)."""
    out: list[str] = []

    def walk(n: A.Expr, negated: bool) -> None:
        if isinstance(n, A.Not):
            walk(n.item, not negated)
        elif isinstance(n, A.And | A.Or):
            for item in n.items:
                walk(item, negated)
        elif not negated:
            out.extend(sorted(literals_of(n)))

    walk(node, False)
    return list(dict.fromkeys(out))


class GoalsCompiler(SlotChecks, IntentChecks):
    def __init__(self, doc: LocatedDoc, registry: Registry, constants: Mapping[str, Any]) -> None:
        self.doc = doc
        self.file = T.GoalsFile.read(doc.data)
        self.registry = registry
        self.constants = constants
        self.diagnostics: list[Diagnostic] = []

    def _report(self, code: str, message: str, ptr: Pointer, hint: str) -> None:
        self._err(code, message, ptr, hint)

    # ---- DSL pieces ---------------------------------------------------------------------------

    def expr(self, text: str, ptr: Pointer, what: str, subjects: tuple[str, ...]) -> A.Expr | None:
        def locate(span: A.Span) -> Location:
            return self.doc.offset_loc(ptr, span[0], span[1])

        return check_expr(
            text, locate, what, self.registry, self.constants, subjects, self.diagnostics
        )

    # ---- the file -----------------------------------------------------------------------------

    def compile(self) -> S.GoalsSpec | None:
        limits = self.file.limits
        cancel = self.expr(
            self.file.cancel or S.DEFAULT_CANCEL,
            ("cancel",),
            "the cancel trigger",
            ("input",),
        )
        correct = self.expr(
            self.file.correct or S.DEFAULT_CORRECT,
            ("correct",),
            "the correction trigger",
            ("input",),
        )
        intents: list[S.IntentSpec] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(self.file.intents):
            if item is None:
                continue
            iid = item.id or ""
            if iid in seen:
                self._err(
                    "CH304",
                    f"intent id '{iid}' is defined twice",
                    ("intents", i, "id"),
                    f"the first is item {seen[iid] + 1} of 'intents'; rename one",
                )
                continue
            if iid:
                seen[iid] = i
            intent = self.intent(item, ("intents", i), limits)
            if intent is not None:
                intents.append(intent)
        self.parents(intents)
        self.memory_keys(intents, seen)
        check_by(intents, lambda iid, n: ("intents", seen[iid], "stages", n), self._report)
        if cancel is None or correct is None:
            return None
        spec = S.GoalsSpec(
            intents=tuple(intents),
            cancel=cancel,
            correct=correct,
            literals=tuple(
                sorted(
                    set().union(
                        *(literals_of(i.trigger) for i in intents if i.trigger is not None),
                        literals_of(cancel),
                        literals_of(correct),
                        *(literals_of(b.done) for i in intents for b in _bindings(i) if b.done),
                    )
                )
            ),
            max_depth=2 if limits.max_depth is None else limits.max_depth,
            max_new_subgoals=3 if limits.max_new_subgoals is None else limits.max_new_subgoals,
            confirm_split_over=limits.confirm_split_over,
            timeout_s=duration(limits.timeout or "30m") or S.DEFAULT_TIMEOUT_S,
            root=limits.root or S.DEFAULT_ROOT,
            aggregate=limits.aggregate or S.DEFAULT_AGGREGATE,
            cases=tuple(self.cases(set(seen))),
            out_of_scope=tuple(dict.fromkeys(self.file.out_of_scope)),
            affirm=self.file.acts.affirm,
            deny=self.file.acts.deny,
            cancel_words=self.file.acts.cancel,
            margin=self.file.understanding.margin,
            safety_every_turn=self.file.understanding.safety_every_turn,
        )
        self.overlaps(spec)
        return spec

    def intent(self, item: T.Intent, ptr: Pointer, limits: T.Limits) -> S.IntentSpec | None:
        iid = item.id or ""
        if not iid or (item.trigger is None and not item.examples):
            return None  # the schema reported it
        trigger = None
        if item.trigger is not None:
            trigger = self.expr(
                item.trigger, (*ptr, "trigger"), f"the trigger of intent '{iid}'", TRIGGER_SUBJECTS
            )
            if trigger is None:
                return None
        if item.safety:
            self.safety(item, ptr, iid)
        slots = tuple(
            s
            for j, written in enumerate(item.slots)
            if (s := self.slot(written, (*ptr, "slots", j), iid)) is not None
        )
        names = [s.name for s in slots]
        description = item.description or item.describe or iid
        self.refs(description, names, (*ptr, "description"), iid, "description")
        for j, name in enumerate(item.inherits):
            if isinstance(name, str) and name not in names:
                self._err(
                    "CH300",
                    f"intent '{iid}' inherits '{name}', which is not one of its slots",
                    (*ptr, "inherits", j),
                    did_you_mean(name, names) or "declare the slot under slots: first",
                )
        deliverables = tuple(
            d
            for j, written in enumerate(item.deliverables)
            if (d := self.deliverable(written, (*ptr, "deliverables", j), iid, names)) is not None
        )
        skill = self.skill(item.skill, (*ptr, "skill"), iid, names)
        kept = [k for k, _ in skill.keep] if skill is not None else []
        staged = stages(
            item.stages,
            (*ptr, "stages"),
            iid,
            names,
            lambda binding, at: self.skill(binding, at, iid, [*names, *kept]),
            self._report,
        )
        return S.IntentSpec(
            id=iid,
            describe=item.describe or iid,
            trigger=trigger,
            literals=tuple(positive_literals(trigger)) if trigger is not None else (),
            location=self.doc.loc(ptr),
            group=item.group or None,
            parent=item.parent or None,
            slots=slots,
            description=description,
            deliverables=deliverables,
            timeout_s=duration(item.timeout)
            or duration(limits.timeout or "30m")
            or S.DEFAULT_TIMEOUT_S,
            inherits=tuple(n for n in item.inherits if isinstance(n, str)),
            skill=skill,
            confirm=bool(item.confirm),
            confirm_text=item.confirm if isinstance(item.confirm, str) else None,
            stages=staged,
            examples=tuple(dict.fromkeys(item.examples)),
            not_examples=tuple(dict.fromkeys(item.not_examples)),
            threshold=item.threshold,
            safety=item.safety,
            handoff=item.handoff and item.safety,
        )

    def safety(self, item: T.Intent, ptr: Pointer, iid: str) -> None:
        """A safety intent answers with its own template at once: nothing to ask, run or
        confirm first (CH383)."""
        for key, what in (
            ("slots", item.slots),
            ("skill", item.skill),
            ("confirm", item.confirm),
            ("stages", item.stages),
        ):
            if what:
                self._err(
                    "CH383",
                    f"safety intent '{iid}' has {key}:, which a safety intent cannot have",
                    (*ptr, key),
                    "a safety intent answers at once with its completed template; "
                    "remove the key, or make it an ordinary intent (safety: false)",
                )

    def skill(
        self, binding: T.SkillBinding | None, ptr: Pointer, iid: str, names: list[str]
    ) -> S.SkillBinding | None:
        """The intent's skill binding; its templates may name only the intent's slots (the
        skill itself is checked by the skills stage, which knows the contracts)."""
        if binding is None or binding.name is None:
            return None
        keep = tuple(sorted((str(k), str(v)) for k, v in binding.keep.items()))
        # an argument may pass what a result kept (the booking a move replaces)
        known = [*names, *(k for k, _ in keep)]
        for arg, value in binding.args.items():
            if isinstance(value, str):
                self.refs(value, known, (*ptr, "args", arg), iid, f"skill argument '{arg}'")
        moves = binding.moves
        for j, name in enumerate(moves):
            if name not in dict(keep):
                self._err(
                    "CH307",
                    f"the skill of intent '{iid}' moves '{name}', which its keep: does not keep",
                    (*ptr, "moves", j),
                    did_you_mean(name, dict(keep)) or "moves: lists fields named under keep:",
                )
        done = None
        if binding.done is not None:
            done = self.expr(
                binding.done, (*ptr, "done"), f"the done: condition of intent '{iid}'", ("result",)
            )
        return S.SkillBinding(
            binding.name,
            json.dumps(binding.args, ensure_ascii=False, sort_keys=True),
            self.doc.loc(ptr),
            keep,
            done,
            moves,
        )

    def deliverable(
        self, item: str | T.Deliverable | None, ptr: Pointer, iid: str, names: list[str]
    ) -> S.Deliverable | None:
        if isinstance(item, str):
            found = _SLOT_REF.findall(item)
            if not found:
                self._err(
                    "CH301",
                    f"deliverable '{item}' of intent '{iid}' names no slot",
                    ptr,
                    "write it as a template such as '{to_city}', or as {id: ..., check: ...}",
                )
                return None
            self.refs(item, names, ptr, iid, "deliverable")
            return S.Deliverable(id=item, describe=item, template=item)
        if item is None or item.check is None:
            return None
        did = item.id or "deliverable"
        check = self.expr(
            item.check, (*ptr, "check"), f"deliverable '{did}' of intent '{iid}'", ("output",)
        )
        if check is None:
            return None
        return S.Deliverable(id=did, describe=item.describe or did, check=check)

    def cases(self, intent_ids: set[str]) -> list[S.GoalCase]:
        out = []
        known = intent_ids | {S.ROOT_INTENT, S.AGGREGATE_INTENT}
        for n, case in enumerate(self.file.tests):
            if case is None or case.input is None:
                continue
            # j of the open goals counts only those that are mappings, as it always has
            named = (
                ("goals", [g.intent for g in case.open_goals]),
                ("plan", [g.intent if g is not None else None for g in case.expected.goals]),
            )
            for key, intents in named:
                for j, intent in enumerate(intents):
                    if intent is not None and intent not in known:
                        where = ("tests", n, *(("plan",) if key == "plan" else ()), "goals", j)
                        self._err(
                            "CH305",
                            f"planner test '{case.name}' names unknown intent '{intent}'",
                            (*where, "intent"),
                            did_you_mean(intent, known),
                        )
            out.append(
                S.GoalCase(
                    name=case.name or f"case {n + 1}",
                    input=case.input,
                    location=self.doc.loc(("tests", n)),
                    now=case.now or "2026-01-07T09:00",
                    goals_json=_json(case.written_goals, default=str),
                    plan_json=_json(case.plan, default=str),
                    remembered_json=_json(case.remembered),
                )
            )
        return out


def _bindings(intent: S.IntentSpec) -> list[S.SkillBinding]:
    """The intent's skill and its stages' skills."""
    own = [intent.skill] if intent.skill is not None else []
    return own + [s.skill for s in intent.stages if s.skill is not None]


def _json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """A planner test's part as the test runner reads it back: as written, keys sorted."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=default)


def compile_goals(
    doc: LocatedDoc, registry: Registry, constants: Mapping[str, Any]
) -> tuple[S.GoalsSpec | None, list[Diagnostic]]:
    compiler = GoalsCompiler(doc, registry, constants)
    spec = compiler.compile()
    return spec, compiler.diagnostics
