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

This module reads each contract (its arguments, constraints, messages, limits and tests) and
runs the stage; the schemas' own validity (CH320, CH112) is ``charter.compile.skill_schemas``,
the names across files (CH321 for bindings, CH322, CH327, CH328) ``charter.compile.skill_refs``
and the fallback protocols ``charter.compile.fallbacks``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from charter.compile.check import check_expr
from charter.compile.conversation_spec import parse_time
from charter.compile.fallbacks import FallbackStage
from charter.compile.skill_refs import bindings, references
from charter.compile.skill_schemas import contract_schema
from charter.compile.specs import skills as S
from charter.compile.specs.goals import GoalsSpec
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.dsl import ast as A
from charter.pack.model import PackSource
from charter.pack.typed.skills import SkillFile
from charter.pack.yamlsrc import LocatedDoc, Pointer

_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0}


# the longest duration a contract may give: a call, a slow call or a cool-down beyond a day is a
# typo (and a float beyond what a lock's timeout takes made `charter test` crash)
MAX_DURATION_S = 86_400.0


def seconds(text: str | None, default: float) -> float:
    """``500ms`` / ``2s`` / ``1m`` in seconds; ``default`` when it is no duration or is longer
    than ``MAX_DURATION_S`` (the stage reports that as CH013)."""
    m = _DURATION.match(text) if text is not None else None
    if not m or len(m[1]) > 12:
        return default
    value = float(m[1]) * _SCALE[m[2]]
    return value if value <= MAX_DURATION_S else default


def _count(value: int | None, default: int) -> int:
    """A whole number of at least 1 as the schema wants it, else ``default`` (the schema said
    so)."""
    return value if value is not None and value >= 1 else default


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

    def contract(self, doc: LocatedDoc, data: SkillFile) -> S.SkillContract | None:
        name = data.name
        if name is None or data.description is None:
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
        inp = contract_schema(doc, "input_schema", data.input_schema, name, self.diagnostics)
        out = contract_schema(doc, "output_schema", data.output_schema, name, self.diagnostics)
        # CH320 says what else is wrong with the input schema; CH321 still names an argument
        # it does not declare
        properties = data.properties
        declared = set(properties) if properties is not None else None
        props = declared or set()
        constraints = []
        for n, raw in enumerate(data.constraints):
            if raw is None or raw.check is None or raw.message is None:
                continue
            ptr: Pointer = ("constraints", n, "check")
            node = self.expr(doc, raw.check, ptr, f"a constraint of skill '{name}'", ("args",))
            if node is None:
                continue
            if declared is not None and not self._args_known(doc, node, ptr, name, props):
                continue
            named = tuple(str(a) for a in raw.asks)
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
            constraints.append(S.Constraint(node, raw.message, raw.check, doc.loc(ptr), named))
        for key in data.messages:
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
        limits, breaker = data.limits, data.breaker
        for ptr, value in (
            (("limits", "timeout"), limits.timeout),
            (("breaker", "slow"), breaker.slow),
            (("breaker", "cooldown"), breaker.cooldown),
        ):
            m = _DURATION.match(value) if value is not None else None
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
            description=data.description,
            input_schema_json=json.dumps(inp, ensure_ascii=False, sort_keys=True),
            output_schema_json=json.dumps(out, ensure_ascii=False, sort_keys=True),
            location=doc.loc(("name",)),
            messages=tuple(sorted(data.messages.items())),
            constraints=tuple(constraints),
            max_results=limits.max_results,
            results_key=limits.results_key or S.DEFAULT_RESULTS_KEY,
            timeout_s=seconds(limits.timeout, S.DEFAULT_TIMEOUT_S),
            breaker=S.BreakerSpec(
                failures=_count(breaker.failures, 3),
                slow_s=seconds(breaker.slow, 2.0),
                cooldown_s=seconds(breaker.cooldown, 30.0),
            ),
            fallback=data.fallback,
            cases=tuple(self.cases(doc, data)),
            executes=data.effect == "execute",
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

    def cases(self, doc: LocatedDoc, data: SkillFile) -> list[S.SkillCase]:
        out = []
        for n, raw in enumerate(data.tests):
            if raw is None or raw.name is None:
                continue  # the schema reported it
            expect = raw.expect
            if expect.status is None:
                continue
            if raw.now is not None and parse_time(raw.now) is None:
                self.diagnostics.append(
                    error(
                        "CH329",
                        f"'{raw.now}' is not an ISO date-time with a UTC offset",
                        doc.loc(("tests", n, "now")),
                        "write a date, a time and the offset: 2026-01-20T10:00:00+08:00",
                    )
                )
                continue
            out.append(
                S.SkillCase(
                    name=raw.name,
                    args_json=json.dumps(raw.args, ensure_ascii=False, sort_keys=True),
                    location=doc.loc(("tests", n)),
                    context_json=json.dumps(raw.context, ensure_ascii=False),
                    inject=raw.inject,
                    now=raw.now,
                    status=expect.status,
                    message=expect.message,
                    reply=expect.reply,
                    results=expect.results,
                    failure=expect.failure,
                    action=expect.action,
                )
            )
        return out


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
    declared: dict[str, tuple[SkillFile, LocatedDoc]] = {}
    for doc in source.skills:
        data = SkillFile.read(doc.data)
        name = data.name
        if name is not None and name in declared:
            stage.diagnostics.append(
                error(
                    "CH324",
                    f"skill '{name}' is declared twice, also in {declared[name][1].path}",
                    doc.loc(("name",)),
                    "keep one contract per skill",
                )
            )
            continue
        c = stage.contract(doc, data)
        if name is not None:
            declared[name] = (data, doc)
        if c is not None:
            contracts.append(c)
    protocols = stage.protocols(source.fallbacks) if source.fallbacks is not None else []
    faq = None
    if source.faq is not None:
        from charter.compile.faq import compile_faq

        faq, more = compile_faq(source.faq, registry)
        stage.diagnostics.extend(more)
    references(contracts, declared, protocols, faq, stage.diagnostics)
    bindings(goals, declared, stage.diagnostics)
    spec = S.SkillsSpec(
        contracts=tuple(contracts),
        protocols=tuple(protocols),
        faq=faq,
        uncertainty=float(source.thresholds.get("uncertainty", 0.72)),
    )
    return spec, stage.diagnostics
