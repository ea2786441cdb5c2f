"""The rules and the test cases of one ``rules.yaml``, merged over the rules a pack inherits.

A rule id defined twice in the file (CH022), an inherited rule replaced without
``override: true`` (CH023) and an ``override: true`` replacing nothing (CH024) are reported
here; a rule or case the schema rejected is left out (the schema stage reported it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charter.diagnostics import Diagnostic, Location, error, warning
from charter.pack._values import _dict, _list, _str
from charter.pack.model import CaseSource, Located, RuleSource
from charter.pack.yamlsrc import LocatedDoc


def read_rules(
    doc: LocatedDoc,
    origin: str,
    inherited_at: Mapping[str, Location],
    rules_at: dict[str, Location],
    inherited: list[RuleSource],
    diagnostics: list[Diagnostic],
) -> list[RuleSource]:
    """``inherited`` with the rules of ``doc`` merged in by id; ``rules_at`` gets where each
    rule of the result is defined, problems go to ``diagnostics``."""
    merged = list(inherited)
    data = doc.data if isinstance(doc.data, dict) else {}
    own_seen: dict[str, Location] = {}
    for i, raw in enumerate(_list(data.get("rules"))):
        if not isinstance(raw, dict):
            continue
        rid, check, on_fail = raw.get("id"), raw.get("check"), raw.get("on_fail")
        if not (isinstance(rid, str) and isinstance(check, str) and isinstance(on_fail, str)):
            continue  # the schema stage reported it
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
        when = raw.get("when")
        unfixed = raw.get("on_unfixed")
        rule = RuleSource(
            id=rid,
            describe=_str(raw.get("describe")),
            check=check,
            on_fail=on_fail,
            origin=origin,
            at=Located(doc, ("rules", i)),
            when=when if isinstance(when, str) else None,
            message=_str(raw.get("message")),
            on_unfixed=unfixed if isinstance(unfixed, str) else None,
            override=raw.get("override") is True,
            tags=tuple(t for t in _list(raw.get("tags")) if isinstance(t, str)),
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


def read_cases(doc: LocatedDoc, origin: str) -> list[CaseSource]:
    """The test cases of ``doc``, naming only the rules that were loaded."""
    data = doc.data if isinstance(doc.data, dict) else {}
    # a rule left out for its schema error (CH010, CH011) is no unknown rule (CH030)
    unloaded = {
        raw["id"]
        for raw in _list(data.get("rules"))
        if isinstance(raw, dict)
        and isinstance(raw.get("id"), str)
        and not (isinstance(raw.get("check"), str) and isinstance(raw.get("on_fail"), str))
    }

    def named(raw: dict[str, Any], key: str) -> tuple[str, ...]:
        return tuple(r for r in _list(raw.get(key)) if isinstance(r, str) and r not in unloaded)

    out = []
    for i, raw in enumerate(_list(data.get("tests"))):
        if not isinstance(raw, dict) or not isinstance(raw.get("output"), str):
            continue
        verdict, fixed = raw.get("verdict"), raw.get("fixed")
        out.append(
            CaseSource(
                name=_str(raw.get("name")) or f"case {i + 1}",
                output=raw["output"],
                origin=origin,
                at=Located(doc, ("tests", i)),
                input=_str(raw.get("input")),
                context=_dict(raw.get("context")),
                expect_pass=named(raw, "pass"),
                expect_fail=named(raw, "fail"),
                verdict=verdict if isinstance(verdict, str) else None,
                fixed=fixed if isinstance(fixed, str) else None,
            )
        )
    return out
