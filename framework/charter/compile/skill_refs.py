"""What names a skill or a fallback protocol, checked against the contracts the pack declares:
part of the ``skills`` stage (``charter.compile.skills``).

A contract's ``fallback:`` names a protocol of ``fallbacks.yaml``, a protocol's ``call`` and
``recommend_skill`` name contracts, and ``degrade_to_faq`` needs FAQ entries for the skills
using it (CH322); an intent's (or a stage's) skill binding names a contract and only the
arguments of its input schema (CH322, CH321), and an executing skill is bound only to an intent
that asks first (CH327) and never to a stage (CH328). These checks run once every contract is
read, across files, so they live apart from the checks of one contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charter.compile.specs import skills as S
from charter.compile.specs.goals import GoalsSpec, IntentSpec, SkillBinding
from charter.diagnostics import Diagnostic, did_you_mean, error
from charter.pack.typed.skills import SkillFile
from charter.pack.yamlsrc import LocatedDoc

# skill name -> its contract as written (compiled or not: a name is declared even when another
# part of the contract has an error) and the file it is in
Declared = Mapping[str, tuple[SkillFile, LocatedDoc]]


def references(
    contracts: list[S.SkillContract],
    declared: Declared,
    protocols: list[tuple[str, tuple[S.FallbackStep, ...]]],
    faq: Any,
    diagnostics: list[Diagnostic],
) -> None:
    """Every fallback protocol a contract names is defined, and every skill a protocol names
    has a contract; a protocol degrading to the FAQ has entries for the skills using it."""
    names = set(declared)
    known_protocols = {p for p, _ in protocols}
    for skill, (data, doc) in declared.items():
        fallback = data.fallback
        if fallback is not None and fallback not in known_protocols:
            diagnostics.append(
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
                diagnostics.append(
                    error(
                        "CH322",
                        f"fallback '{pname}' names skill '{act.target}', which the pack "
                        "has no contract for",
                        at,
                        did_you_mean(act.target, names) or "add skills/<name>.yaml",
                    )
                )
            if act.kind == "degrade_to_faq" and not _faq_serves(faq, users.get(pname, [])):
                diagnostics.append(
                    error(
                        "CH322",
                        f"fallback '{pname}' degrades to the FAQ, but the pack has no FAQ "
                        "entry for " + (", ".join(users.get(pname, [])) or "it"),
                        at,
                        "add entries to faq.yaml (without skills:, or listing the skill)",
                    )
                )


def _faq_serves(faq: Any, skills: list[str]) -> bool:
    if faq is None:
        return False
    if not skills:
        return bool(faq.entries)
    return all(any(e.serves(s) for e in faq.entries) for s in skills)


def bindings(
    goals: GoalsSpec | None,
    declared: Declared,
    diagnostics: list[Diagnostic],
) -> None:
    """Every intent's skill binding names a contract of the pack and only its arguments."""
    for intent in goals.intents if goals is not None else ():
        staged = [(s.id, s.skill) for s in intent.stages if s.skill is not None]
        for sid, b in [(None, intent.skill), *staged]:
            if b is not None:
                _binding(intent, b, sid, declared, diagnostics)


def _binding(
    intent: IntentSpec,
    b: SkillBinding,
    sid: str | None,
    declared: Declared,
    diagnostics: list[Diagnostic],
) -> None:
    """One binding: the intent's own (``sid`` None) or a stage's."""
    at = b.location or intent.location
    if b.name not in declared:
        diagnostics.append(
            error(
                "CH322",
                f"intent '{intent.id}' calls skill '{b.name}', which the pack has no contract for",
                at,
                did_you_mean(b.name, declared) or "add skills/<name>.yaml",
            )
        )
        return
    data = declared[b.name][0]
    if data.effect == "execute" and sid is not None:
        diagnostics.append(
            error(
                "CH328",
                f"stage '{sid}' of intent '{intent.id}' calls skill '{b.name}', which "
                "executes (effect: execute)",
                at,
                "a stage checks before the intent acts: bind the executing skill to the "
                "intent itself (with confirm: true)",
            )
        )
    elif data.effect == "execute" and not intent.confirm:
        diagnostics.append(
            error(
                "CH327",
                f"intent '{intent.id}' calls skill '{b.name}', which executes "
                "(effect: execute), without asking the user first",
                at,
                "add confirm: true to the intent: nothing executes before the user's yes",
            )
        )
    props = data.properties or {}
    for arg in b.args:
        if arg not in props:
            diagnostics.append(
                error(
                    "CH321",
                    f"intent '{intent.id}' passes argument '{arg}', which the input schema "
                    f"of skill '{b.name}' does not declare",
                    at,
                    did_you_mean(arg, props) or "declare it under input_schema.properties",
                )
            )
