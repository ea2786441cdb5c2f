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
stages by ``charter.compile.goal_stages``; this module reads the file and each intent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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
        data = self.doc.data if isinstance(self.doc.data, dict) else {}
        limits = _dict(data.get("limits"))
        cancel = self.expr(
            _s(data.get("cancel")) or S.DEFAULT_CANCEL,
            ("cancel",),
            "the cancel trigger",
            ("input",),
        )
        correct = self.expr(
            _s(data.get("correct")) or S.DEFAULT_CORRECT,
            ("correct",),
            "the correction trigger",
            ("input",),
        )
        raw = _list(data.get("intents"))
        intents: list[S.IntentSpec] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                continue
            iid = _s(item.get("id"))
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
        self.parents(intents, raw)
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
                        *(literals_of(i.trigger) for i in intents),
                        literals_of(cancel),
                        literals_of(correct),
                        *(literals_of(b.done) for i in intents for b in _bindings(i) if b.done),
                    )
                )
            ),
            max_depth=_int(limits.get("max_depth"), 2),
            max_new_subgoals=_int(limits.get("max_new_subgoals"), 3),
            confirm_split_over=limits.get("confirm_split_over")
            if isinstance(limits.get("confirm_split_over"), int)
            else None,
            timeout_s=duration(_s(limits.get("timeout")) or "30m") or S.DEFAULT_TIMEOUT_S,
            root=_s(limits.get("root")) or S.DEFAULT_ROOT,
            aggregate=_s(limits.get("aggregate")) or S.DEFAULT_AGGREGATE,
            cases=tuple(self.cases(data.get("tests"), set(seen))),
        )
        self.overlaps(spec, raw)
        return spec

    def intent(
        self, item: dict[str, Any], ptr: Pointer, limits: Mapping[str, Any]
    ) -> S.IntentSpec | None:
        iid = _s(item.get("id"))
        if not iid or not isinstance(item.get("trigger"), str):
            return None  # the schema reported it
        trigger = self.expr(
            item["trigger"], (*ptr, "trigger"), f"the trigger of intent '{iid}'", TRIGGER_SUBJECTS
        )
        slots = tuple(
            s
            for j, raw in enumerate(_list(item.get("slots")))
            if (s := self.slot(raw, (*ptr, "slots", j), iid)) is not None
        )
        names = [s.name for s in slots]
        description = _s(item.get("description")) or _s(item.get("describe")) or iid
        self.refs(description, names, (*ptr, "description"), iid, "description")
        for j, name in enumerate(_list(item.get("inherits"))):
            if isinstance(name, str) and name not in names:
                self._err(
                    "CH300",
                    f"intent '{iid}' inherits '{name}', which is not one of its slots",
                    (*ptr, "inherits", j),
                    did_you_mean(name, names) or "declare the slot under slots: first",
                )
        deliverables = tuple(
            d
            for j, raw in enumerate(_list(item.get("deliverables")))
            if (d := self.deliverable(raw, (*ptr, "deliverables", j), iid, names)) is not None
        )
        skill = self.skill(item.get("skill"), (*ptr, "skill"), iid, names)
        kept = [k for k, _ in skill.keep] if skill is not None else []
        staged = stages(
            item.get("stages"),
            (*ptr, "stages"),
            iid,
            names,
            lambda raw, at: self.skill(raw, at, iid, [*names, *kept]),
            self._report,
        )
        if trigger is None:
            return None
        return S.IntentSpec(
            id=iid,
            describe=_s(item.get("describe")) or iid,
            trigger=trigger,
            literals=tuple(positive_literals(trigger)),
            location=self.doc.loc(ptr),
            group=_s(item.get("group")) or None,
            parent=_s(item.get("parent")) or None,
            slots=slots,
            description=description,
            deliverables=deliverables,
            timeout_s=duration(_s(item.get("timeout")) or "")
            or duration(_s(limits.get("timeout")) or "30m")
            or S.DEFAULT_TIMEOUT_S,
            inherits=tuple(n for n in _list(item.get("inherits")) if isinstance(n, str)),
            skill=skill,
            confirm=bool(item.get("confirm")),
            confirm_text=item["confirm"] if isinstance(item.get("confirm"), str) else None,
            stages=staged,
        )

    def skill(self, raw: Any, ptr: Pointer, iid: str, names: list[str]) -> S.SkillBinding | None:
        """The intent's skill binding; its templates may name only the intent's slots (the
        skill itself is checked by the skills stage, which knows the contracts)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return None
        found = raw.get("args")
        args: dict[str, Any] = found if isinstance(found, dict) else {}
        kept = raw.get("keep")
        keep = tuple(
            sorted((str(k), str(v)) for k, v in (kept if isinstance(kept, dict) else {}).items())
        )
        # an argument may pass what a result kept (the booking a move replaces)
        known = [*names, *(k for k, _ in keep)]
        for arg, value in args.items():
            if isinstance(value, str):
                self.refs(value, known, (*ptr, "args", arg), iid, f"skill argument '{arg}'")
        moves = tuple(m for m in raw.get("moves") or [] if isinstance(m, str))
        for j, name in enumerate(moves):
            if name not in dict(keep):
                self._err(
                    "CH307",
                    f"the skill of intent '{iid}' moves '{name}', which its keep: does not keep",
                    (*ptr, "moves", j),
                    did_you_mean(name, dict(keep)) or "moves: lists fields named under keep:",
                )
        done = None
        if isinstance(raw.get("done"), str):
            done = self.expr(
                raw["done"], (*ptr, "done"), f"the done: condition of intent '{iid}'", ("result",)
            )
        return S.SkillBinding(
            raw["name"],
            json.dumps(args, ensure_ascii=False, sort_keys=True),
            self.doc.loc(ptr),
            keep,
            done,
            moves,
        )

    def deliverable(
        self, raw: Any, ptr: Pointer, iid: str, names: list[str]
    ) -> S.Deliverable | None:
        if isinstance(raw, str):
            found = _SLOT_REF.findall(raw)
            if not found:
                self._err(
                    "CH301",
                    f"deliverable '{raw}' of intent '{iid}' names no slot",
                    ptr,
                    "write it as a template such as '{to_city}', or as {id: ..., check: ...}",
                )
                return None
            self.refs(raw, names, ptr, iid, "deliverable")
            return S.Deliverable(id=raw, describe=raw, template=raw)
        if not isinstance(raw, dict) or not isinstance(raw.get("check"), str):
            return None
        did = _s(raw.get("id")) or "deliverable"
        check = self.expr(
            raw["check"], (*ptr, "check"), f"deliverable '{did}' of intent '{iid}'", ("output",)
        )
        if check is None:
            return None
        return S.Deliverable(id=did, describe=_s(raw.get("describe")) or did, check=check)

    def cases(self, raw: Any, intent_ids: set[str]) -> list[S.GoalCase]:
        out = []
        known = intent_ids | {S.ROOT_INTENT, S.AGGREGATE_INTENT}
        for n, case in enumerate(_list(raw)):
            if not isinstance(case, dict) or not isinstance(case.get("input"), str):
                continue
            plan = _dict(case.get("plan"))
            goals = [g for g in _list(case.get("goals")) if isinstance(g, dict)]
            for key, items in (("goals", goals), ("plan", _list(plan.get("goals")))):
                for j, g in enumerate(items):
                    intent = g.get("intent") if isinstance(g, dict) else None
                    if isinstance(intent, str) and intent not in known:
                        where = ("tests", n, *(("plan",) if key == "plan" else ()), "goals", j)
                        self._err(
                            "CH305",
                            f"planner test '{case.get('name')}' names unknown intent '{intent}'",
                            (*where, "intent"),
                            did_you_mean(intent, known),
                        )
            out.append(
                S.GoalCase(
                    name=_s(case.get("name")) or f"case {n + 1}",
                    input=case["input"],
                    location=self.doc.loc(("tests", n)),
                    now=_s(case.get("now")) or "2026-01-07T09:00",
                    goals_json=json.dumps(goals, ensure_ascii=False, sort_keys=True, default=str),
                    plan_json=json.dumps(plan, ensure_ascii=False, sort_keys=True, default=str),
                    remembered_json=json.dumps(
                        _dict(case.get("remembered")), ensure_ascii=False, sort_keys=True
                    ),
                )
            )
        return out


def _bindings(intent: S.IntentSpec) -> list[S.SkillBinding]:
    """The intent's skill and its stages' skills."""
    own = [intent.skill] if intent.skill is not None else []
    return own + [s.skill for s in intent.stages if s.skill is not None]


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def compile_goals(
    doc: LocatedDoc, registry: Registry, constants: Mapping[str, Any]
) -> tuple[S.GoalsSpec | None, list[Diagnostic]]:
    compiler = GoalsCompiler(doc, registry, constants)
    spec = compiler.compile()
    return spec, compiler.diagnostics
