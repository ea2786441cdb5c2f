"""The ``skills`` compile stage: ``skills/*.yaml`` contracts, ``fallbacks.yaml`` protocols and
``faq.yaml`` into a ``SkillsSpec``.

Checked here, each a diagnostic at the place to fix: an input or output schema that is not
valid JSON Schema 2020-12 (CH320); a constraint naming an argument the input schema does not
declare (CH321); a fallback naming an unknown protocol, skill or an FAQ the pack does not have
(CH322); a contract no installed plugin implements (CH323, a warning — ``--strict`` fails on
it); two contracts of one name, or a file named unlike its skill (CH324); a fallback condition
or action that does not parse (CH325); a message for a property the input schema does not
declare (CH326, a warning); an intent calling an executing skill (``effect: execute``) without
``confirm: true`` (CH327). Constraints are DSL expressions over ``args`` (CH100 and the other
DSL codes as for rules).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs

from charter.compile.check import check_expr
from charter.compile.fallbacks import FallbackStage
from charter.compile.redos import catastrophe, catastrophic
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.dsl import ast as A
from charter.goals.spec import GoalsSpec, IntentSpec, SkillBinding
from charter.pack.model import PackSource
from charter.pack.yamlsrc import LocatedDoc, Pointer
from charter.registry import Registry
from charter.skills import spec as S

_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0}


# the longest duration a contract may give: a call, a slow call or a cool-down beyond a day is a
# typo (and a float beyond what a lock's timeout takes made `charter test` crash)
MAX_DURATION_S = 86_400.0


def seconds(text: Any, default: float) -> float:
    """``500ms`` / ``2s`` / ``1m`` in seconds; ``default`` when it is no duration or is longer
    than ``MAX_DURATION_S`` (the stage reports that as CH013)."""
    m = _DURATION.match(str(text)) if text is not None else None
    if not m or len(m[1]) > 12:
        return default
    value = float(m[1]) * _SCALE[m[2]]
    return value if value <= MAX_DURATION_S else default


def _count(value: Any, default: int) -> int:
    """A whole number of at least 1 as the schema wants it, else ``default`` (the schema said
    so; a number of more than 4,300 digits stays a string, which ``int`` refuses)."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    return value if whole and value >= 1 else default


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _declared(schema: Any) -> set[str] | None:
    """The properties an input schema declares, even when another part of it is not valid
    JSON Schema (CH320 says so, and CH321 still names an undeclared argument); None when the
    schema or its ``properties`` is no mapping, so nothing can be said about the arguments."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties", {})
    return set(props) if isinstance(props, dict) else None


class _Stage(FallbackStage):
    def __init__(self, source: PackSource, registry: Registry) -> None:
        self.source = source
        self.registry = registry
        self.constants = source.constants()
        self.diagnostics: list[Diagnostic] = []

    def expr(
        self,
        doc: LocatedDoc,
        text: str,
        ptr: Pointer,
        what: str,
        subjects: tuple[str, ...],
        offset: int = 0,
    ) -> A.Expr | None:
        """``text`` starts at character ``offset`` of the scalar at ``ptr`` (an ``expr``
        condition's DSL comes after the word ``expr``)."""

        def locate(span: A.Span) -> Location:
            return doc.offset_loc(ptr, offset + span[0], offset + span[1])

        return check_expr(
            text, locate, what, self.registry, self.constants, subjects, self.diagnostics
        )

    # ---- contracts -----------------------------------------------------------------------------

    def schema(self, doc: LocatedDoc, key: str, name: str) -> dict[str, Any] | None:
        raw = _dict(_dict(doc.data).get(key))
        if jsonschema_rs.meta.is_valid(raw):
            self.patterns(doc, raw, (key,))
            return raw  # the usual case, fast; jsonschema explains the rest
        meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
        # every problem at once (check_schema would stop at the first), in document order
        problems = sorted(meta.iter_errors(raw), key=lambda e: _path_key(e.absolute_path))
        for exc in problems:
            ptr: Pointer = (key, *exc.absolute_path)
            self.diagnostics.append(
                error(
                    "CH320",
                    f"the {key} of skill '{name}' is not valid JSON Schema: {exc.message}",
                    doc.loc(ptr),
                    _schema_hint(exc),
                )
            )
        return None if problems else raw

    def patterns(self, doc: LocatedDoc, schema: Any, ptr: Pointer) -> None:
        """CH112 for a ``pattern`` (or ``patternProperties`` key) that can backtrack
        catastrophically: the guard bounds its search in time, the author should fix it."""
        if isinstance(schema, list):
            for n, item in enumerate(schema):
                self.patterns(doc, item, (*ptr, n))
            return
        if not isinstance(schema, dict):
            return
        for k, v in schema.items():
            if k == "pattern" and isinstance(v, str):
                for found in catastrophic(v)[:1]:
                    at = doc.loc((*ptr, k))
                    self.diagnostics.append(warning("CH112", *catastrophe(found, at)))
            elif k == "patternProperties" and isinstance(v, dict):
                for prop in v:
                    for found in catastrophic(str(prop))[:1]:
                        at = doc.loc((*ptr, k))
                        self.diagnostics.append(warning("CH112", *catastrophe(found, at)))
            if k not in ("const", "enum", "examples", "default"):
                self.patterns(doc, v, (*ptr, k))

    def contract(self, doc: LocatedDoc) -> S.SkillContract | None:
        data = _dict(doc.data)
        name = data.get("name")
        if not isinstance(name, str) or not isinstance(data.get("description"), str):
            return None  # the schema reported it
        stem = Path(doc.path).stem
        if stem != name:
            self.diagnostics.append(
                error(
                    "CH324",
                    f"skills/{stem}.yaml declares skill '{name}'",
                    doc.loc(("name",)),
                    f"name the file skills/{name}.yaml, or the skill '{stem}'",
                )
            )
        inp = self.schema(doc, "input_schema", name)
        out = self.schema(doc, "output_schema", name)
        declared = _declared(data.get("input_schema"))
        props = declared or set()
        constraints = []
        for n, raw in enumerate(data.get("constraints") or []):
            raw = _dict(raw)
            if not isinstance(raw.get("check"), str) or not isinstance(raw.get("message"), str):
                continue
            ptr: Pointer = ("constraints", n, "check")
            node = self.expr(doc, raw["check"], ptr, f"a constraint of skill '{name}'", ("args",))
            if node is None:
                continue
            if declared is not None and not self._args_known(doc, node, ptr, name, props):
                continue
            asks = raw.get("asks")
            named = tuple(str(a) for a in asks) if isinstance(asks, list) else ()
            for k, arg in enumerate(named):
                if declared is not None and arg not in props:
                    self.diagnostics.append(
                        error(
                            "CH321",
                            f"constraint of skill '{name}' asks for '{arg}', which the input "
                            "schema does not declare",
                            doc.loc(("constraints", n, "asks", k)),
                            did_you_mean(arg, props) or "name an argument of input_schema",
                        )
                    )
            constraints.append(
                S.Constraint(node, raw["message"], raw["check"], doc.loc(ptr), named)
            )
        for key in _dict(data.get("messages")):
            prop = key.split(".")[0]
            whole = prop in _WHOLE  # a keyword about the arguments together (anyOf: 至少给一个)
            if declared is not None and key != "default" and prop not in props and not whole:
                self.diagnostics.append(
                    warning(
                        "CH326",
                        f"message '{key}' of skill '{name}' is for property '{prop}', which "
                        "the input schema does not declare",
                        doc.key_loc(("messages", key)),
                        did_you_mean(prop, props) or "declare it under input_schema.properties",
                    )
                )
        if name not in self.registry.skills:
            self.diagnostics.append(
                warning(
                    "CH323",
                    f"no installed plugin implements skill '{name}'",
                    doc.loc(("name",)),
                    did_you_mean(name, self.registry.skills)
                    or "install the plugin that registers it (charter plugins lists them)",
                )
            )
        if inp is None or out is None:
            return None
        limits, breaker = _dict(data.get("limits")), _dict(data.get("breaker"))
        for ptr, value in (
            (("limits", "timeout"), limits.get("timeout")),
            (("breaker", "slow"), breaker.get("slow")),
            (("breaker", "cooldown"), breaker.get("cooldown")),
        ):
            m = _DURATION.match(value) if isinstance(value, str) else None
            if m and seconds(value, -1.0) < 0:
                self.diagnostics.append(
                    error(
                        "CH013",
                        f"{ptr[-1]} of skill '{name}' is longer than a day ({MAX_DURATION_S:.0f}s)",
                        doc.loc(ptr),
                        "write a duration such as 500ms, 2s or 1m",
                    )
                )
        return S.SkillContract(
            name=name,
            description=data["description"],
            input_schema_json=json.dumps(inp, ensure_ascii=False, sort_keys=True),
            output_schema_json=json.dumps(out, ensure_ascii=False, sort_keys=True),
            location=doc.loc(("name",)),
            messages=tuple(
                sorted((str(k), str(v)) for k, v in _dict(data.get("messages")).items())
            ),
            constraints=tuple(constraints),
            max_results=limits.get("max_results")
            if isinstance(limits.get("max_results"), int)
            else None,
            results_key=str(limits.get("results_key") or S.DEFAULT_RESULTS_KEY),
            timeout_s=seconds(limits.get("timeout"), S.DEFAULT_TIMEOUT_S),
            breaker=S.BreakerSpec(
                failures=_count(breaker.get("failures"), 3),
                slow_s=seconds(breaker.get("slow"), 2.0),
                cooldown_s=seconds(breaker.get("cooldown"), 30.0),
            ),
            fallback=data.get("fallback") if isinstance(data.get("fallback"), str) else None,
            cases=tuple(self.cases(doc, data)),
            executes=data.get("effect") == "execute",
        )

    def _args_known(
        self, doc: LocatedDoc, node: A.Expr, ptr: Pointer, name: str, props: set[str]
    ) -> bool:
        ok = True
        for sub in A.walk(node):
            if not isinstance(sub, A.Path) or sub.root.text != "args" or not sub.parts:
                continue
            first = sub.parts[0]
            if isinstance(first, str) and first not in props:
                if not ok:
                    continue  # one report per constraint: the first place it is read
                ok = False
                self.diagnostics.append(
                    error(
                        "CH321",
                        f"a constraint of skill '{name}' reads args.{first}, which the input "
                        "schema does not declare",
                        doc.offset_loc(ptr, sub.span[0], sub.span[1]),
                        did_you_mean(first, props) or "declare it under input_schema.properties",
                    )
                )
        return ok

    def cases(self, doc: LocatedDoc, data: Mapping[str, Any]) -> list[S.SkillCase]:
        out = []
        for n, raw in enumerate(data.get("tests") or []):
            raw = _dict(raw)
            expect = _dict(raw.get("expect"))
            if not isinstance(raw.get("name"), str) or "status" not in expect:
                continue
            out.append(
                S.SkillCase(
                    name=raw["name"],
                    args_json=json.dumps(
                        _dict(raw.get("args")), ensure_ascii=False, sort_keys=True
                    ),
                    location=doc.loc(("tests", n)),
                    context_json=json.dumps(_dict(raw.get("context")), ensure_ascii=False),
                    inject=raw.get("inject"),
                    status=str(expect["status"]),
                    message=expect.get("message"),
                    results=expect.get("results"),
                    failure=expect.get("failure"),
                    action=expect.get("action"),
                )
            )
        return out

    def references(
        self,
        contracts: list[S.SkillContract],
        declared: Mapping[str, tuple[str | None, LocatedDoc]],
        protocols: list[tuple[str, tuple[S.FallbackStep, ...]]],
        faq: Any,
    ) -> None:
        names = set(declared)
        known_protocols = {p for p, _ in protocols}
        for skill, (fallback, doc) in declared.items():
            if fallback is not None and fallback not in known_protocols:
                self.diagnostics.append(
                    error(
                        "CH322",
                        f"skill '{skill}' names fallback protocol '{fallback}', which "
                        "fallbacks.yaml does not define",
                        doc.loc(("fallback",)),
                        did_you_mean(fallback, known_protocols)
                        or "define it under protocols: in fallbacks.yaml",
                    )
                )
        users = {p: [c.name for c in contracts if c.fallback == p] for p in known_protocols}
        for pname, steps in protocols:
            for step in steps:
                act = step.do
                at = step.do_location or step.location
                if act.kind in ("call", "recommend_skill") and act.target not in names:
                    self.diagnostics.append(
                        error(
                            "CH322",
                            f"fallback '{pname}' names skill '{act.target}', which the pack "
                            "has no contract for",
                            at,
                            did_you_mean(act.target, names) or "add skills/<name>.yaml",
                        )
                    )
                if act.kind == "degrade_to_faq" and not self._faq_serves(faq, users.get(pname, [])):
                    self.diagnostics.append(
                        error(
                            "CH322",
                            f"fallback '{pname}' degrades to the FAQ, but the pack has no FAQ "
                            "entry for " + (", ".join(users.get(pname, [])) or "it"),
                            at,
                            "add entries to faq.yaml (without skills:, or listing the skill)",
                        )
                    )

    @staticmethod
    def _faq_serves(faq: Any, skills: list[str]) -> bool:
        if faq is None:
            return False
        if not skills:
            return bool(faq.entries)
        return all(any(e.serves(s) for e in faq.entries) for s in skills)


def _path_key(path: Any) -> tuple[tuple[int, int, str], ...]:
    """A JSON path as a sort key: list indexes in number order, before names."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path)


_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def _schema_hint(exc: Any) -> str:
    """An unknown type name gets the type names; any other problem the reference."""
    path = list(exc.absolute_path)
    if path and path[-1] == "type" and isinstance(exc.instance, str):
        return did_you_mean(exc.instance, _TYPES)
    return "see https://json-schema.org/draft/2020-12 for the keywords"


# JSON Schema keywords a message may be keyed by at the top level: they are about the
# arguments together, not one property
_WHOLE = frozenset(
    {
        "required",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "additionalProperties",
    }
)


def _bindings(
    stage: _Stage, goals: GoalsSpec | None, declared: Mapping[str, tuple[str | None, LocatedDoc]]
) -> None:
    """Every intent's skill binding names a contract of the pack and only its arguments."""
    for intent in goals.intents if goals is not None else ():
        staged = [(s.id, s.skill) for s in intent.stages if s.skill is not None]
        for sid, b in [(None, intent.skill), *staged]:
            if b is not None:
                _binding(stage, intent, b, sid, declared)


def _binding(
    stage: _Stage,
    intent: IntentSpec,
    b: SkillBinding,
    sid: str | None,
    declared: Mapping[str, tuple[str | None, LocatedDoc]],
) -> None:
    """One binding: the intent's own (``sid`` None) or a stage's."""
    at = b.location or intent.location
    if b.name not in declared:
        stage.diagnostics.append(
            error(
                "CH322",
                f"intent '{intent.id}' calls skill '{b.name}', which the pack has no contract for",
                at,
                did_you_mean(b.name, declared) or "add skills/<name>.yaml",
            )
        )
        return
    data = _dict(declared[b.name][1].data)
    if data.get("effect") == "execute" and sid is not None:
        stage.diagnostics.append(
            error(
                "CH328",
                f"stage '{sid}' of intent '{intent.id}' calls skill '{b.name}', which "
                "executes (effect: execute)",
                at,
                "a stage checks before the intent acts: bind the executing skill to the "
                "intent itself (with confirm: true)",
            )
        )
    elif data.get("effect") == "execute" and not intent.confirm:
        stage.diagnostics.append(
            error(
                "CH327",
                f"intent '{intent.id}' calls skill '{b.name}', which executes "
                "(effect: execute), without asking the user first",
                at,
                "add confirm: true to the intent: nothing executes before the user's yes",
            )
        )
    props = _dict(_dict(data.get("input_schema")).get("properties"))
    for arg in b.args:
        if arg not in props:
            stage.diagnostics.append(
                error(
                    "CH321",
                    f"intent '{intent.id}' passes argument '{arg}', which the input schema "
                    f"of skill '{b.name}' does not declare",
                    at,
                    did_you_mean(arg, props) or "declare it under input_schema.properties",
                )
            )


def compile_skills(
    source: PackSource, registry: Registry, goals: GoalsSpec | None = None
) -> tuple[S.SkillsSpec | None, list[Diagnostic]]:
    """The pack's skills, fallbacks and FAQ; None when it has none of them (and no intent of
    ``goals`` calls a skill)."""
    binds = goals is not None and any(i.skill is not None for i in goals.intents)
    if not source.skills and source.fallbacks is None and source.faq is None and not binds:
        return None, []
    stage = _Stage(source, registry)
    contracts: list[S.SkillContract] = []
    declared: dict[str, tuple[str | None, LocatedDoc]] = {}
    for doc in source.skills:
        data = _dict(doc.data)
        name = data.get("name")
        if isinstance(name, str) and name in declared:
            stage.diagnostics.append(
                error(
                    "CH324",
                    f"skill '{name}' is declared twice, also in {declared[name][1].path}",
                    doc.loc(("name",)),
                    "keep one contract per skill",
                )
            )
            continue
        c = stage.contract(doc)
        if isinstance(name, str):
            fallback = data.get("fallback")
            declared[name] = (fallback if isinstance(fallback, str) else None, doc)
        if c is not None:
            contracts.append(c)
    protocols = stage.protocols(source.fallbacks) if source.fallbacks is not None else []
    faq = None
    if source.faq is not None:
        from charter.skills.faq import compile_faq

        faq, more = compile_faq(source.faq, registry)
        stage.diagnostics.extend(more)
    stage.references(contracts, declared, protocols, faq)
    _bindings(stage, goals, declared)
    spec = S.SkillsSpec(
        contracts=tuple(contracts),
        protocols=tuple(protocols),
        faq=faq,
        uncertainty=float(source.thresholds.get("uncertainty", 0.72)),
    )
    return spec, stage.diagnostics
