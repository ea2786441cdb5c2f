"""The rules and the test cases of one ``rules.yaml``, merged over the rules a pack inherits.

A rule id defined twice in the file (CH022), an inherited rule replaced without
``override: true`` (CH023) and an ``override: true`` replacing nothing (CH024) are reported
here; a rule or case the schema rejected is left out (the schema stage reported it).
"""

from __future__ import annotations

from collections.abc import Mapping

from charter.diagnostics import Diagnostic, Location, error, warning
from charter.pack.model import CaseSource, Located, RuleSource
from charter.pack.typed.rules import RulesFile
from charter.pack.yamlsrc import LocatedDoc


def read_rules(
    doc: LocatedDoc,
    data: RulesFile,
    origin: str,
    inherited_at: Mapping[str, Location],
    rules_at: dict[str, Location],
    inherited: list[RuleSource],
    diagnostics: list[Diagnostic],
) -> list[RuleSource]:
    """``inherited`` with the rules of ``data`` (the model of ``doc``) merged in by id;
    ``rules_at`` gets where each rule of the result is defined, problems go to
    ``diagnostics``."""
    merged = list(inherited)
    own_seen: dict[str, Location] = {}
    for i, raw in enumerate(data.rules):
        if raw is None or raw.id is None or raw.check is None or raw.on_fail is None:
            continue  # the schema stage reported it
        rid = raw.id
        id_loc = doc.loc(("rules", i, "id"))
        if rid in own_seen:
            first = own_seen[rid]
            diagnostics.append(
                error(
                    "CH022",
                    f"rule id '{rid}' defined twice (first at line {first.line})",
                    id_loc,
                    "rename one of them, or merge them into one rule",
                )
            )
            continue
        own_seen[rid] = id_loc
        rule = RuleSource(
            id=rid,
            describe=raw.describe,
            check=raw.check,
            on_fail=raw.on_fail,
            origin=origin,
            at=Located(doc, ("rules", i)),
            when=raw.when,
            message=raw.message,
            on_unfixed=raw.on_unfixed,
            override=raw.override,
            tags=raw.tags,
        )
        pos = next((k for k, r in enumerate(merged) if r.id == rid), None)
        if pos is None:
            if rule.override:
                diagnostics.append(
                    warning(
                        "CH024",
                        f"rule '{rid}' has override: true but no inherited rule '{rid}'",
                        doc.key_loc(("rules", i, "override")),
                        "remove override: true, or check the id and the pack's extends",
                    )
                )
            merged.append(rule)
        elif not rule.override:
            parent = merged[pos]
            diagnostics.append(
                error(
                    "CH023",
                    f"rule '{rid}' is already defined by '{parent.origin}' "
                    f"({inherited_at.get(rid, parent.at.loc())})",
                    id_loc,
                    "add override: true to replace the inherited rule, or choose another id",
                )
            )
            continue  # the inherited rule stays, and so does where it is defined
        else:
            merged[pos] = rule
        rules_at[rid] = id_loc
    return merged


def read_cases(doc: LocatedDoc, data: RulesFile, origin: str) -> list[CaseSource]:
    """The test cases of ``data`` (the model of ``doc``), naming only the rules that were
    loaded."""
    # a rule left out for its schema error (CH010, CH011) is no unknown rule (CH030)
    unloaded = {
        rule.id
        for rule in data.rules
        if rule is not None and rule.id is not None and (rule.check is None or rule.on_fail is None)
    }

    def named(rules: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(r for r in rules if r not in unloaded)

    out = []
    for i, case in enumerate(data.tests):
        if case is None or case.output is None:
            continue
        out.append(
            CaseSource(
                name=case.name or f"case {i + 1}",
                output=case.output,
                origin=origin,
                at=Located(doc, ("tests", i)),
                input=case.input,
                context=case.context,
                expect_pass=named(case.pass_),
                expect_fail=named(case.fail),
                verdict=case.verdict,
                fixed=case.fixed,
            )
        )
    return out
