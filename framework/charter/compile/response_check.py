"""Every template rendered with sample values and checked by its pack's own rules (ARCHITECTURE
§5a), at compile time: a template that cannot pass its pack is a diagnostic with its location
(CH356), instead of a reply that escalates at run time.

Sample values: a slot's values in the pack's planner tests (goals.yaml ``tests:``), its
default, else one by its type or extractor; a result's fields from its output schema
(``examples``, ``const``, ``enum``, ``format``, a pattern-matching guess, the type). A template
whose fields have no sample, or whose ``when`` holds for no sample, is reported as not checked
(CH357, a warning) rather than silently skipped.

Each text is judged as the runtime judges a reply (``Judge``): the ``fix`` rules' repairs run
(the disclaimers the rules require are added that way), and a rule the text still fails then is
an error when the runtime would retry, escalate or block for it — a fix rule whose repair does
not make it pass does its ``on_unfixed`` (retry by default), and the message shows the repaired
text. ``flag`` only annotates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charter.compile import response_spec as R
from charter.compile.build import Builder, Test
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.compile.repairing import outcome, repaired
from charter.compile.response_samples import (
    aggregate_scope,
    applies,
    event_scopes,
    result_scopes,
    schema_sample,
    slot_samples,
    slot_values,
)
from charter.compile.specs.goals import GoalsSpec, IntentSpec
from charter.compile.specs.skills import SkillsSpec, fill_args
from charter.compile.teller import Teller
from charter.contracts.registry import Registry
from charter.contracts.rules import Repair, RepairArg
from charter.diagnostics import Diagnostic, Location, error, warning
from charter.dsl import ast as A


@dataclass(frozen=True)
class RuleView:
    id: str
    action: str  # block, escalate, retry, fix, flag
    message: str
    when: A.Expr | None
    check: A.Expr
    repair: str | None = None  # a fix rule's repair, and its arguments
    args: tuple[RepairArg, ...] = ()
    on_unfixed: str = "retry"  # what a fix rule does when its repair does not make it pass


@dataclass(frozen=True)
class _Bound:
    """A rule bound to its closures and repair (``charter.compile.repairing.Repairable``)."""

    view: RuleView
    when: Test | None
    check: Test
    when_explain: Test | None
    repair: Repair | None
    repair_args: tuple[RepairArg, ...]


@dataclass(frozen=True)
class Failed:
    """A rule a text still fails when the runtime would send it: what happens then (the
    rule's action, or a fix rule's ``on_unfixed``), and the text the repairs left."""

    rule: RuleView
    action: str
    repaired: str | None = None  # None: no repair changed the text

    def how(self) -> str:
        return f"fix, then {self.action}" if self.rule.action == "fix" else self.action

    def told(self, text: str) -> str:
        return text if self.repaired is None else f"{text} — repaired: {self.repaired}"


class Judge:
    """The pack's rules with their whole behaviour, as the runtime applies them to a reply
    (``charter.reflect.engine``): the fix rules' repairs run, and what still fails afterwards
    decides (a fix rule then does its ``on_unfixed``); ``flag`` only annotates."""

    def __init__(self, rules: Sequence[RuleView], registry: Registry, constants: Any) -> None:
        literals: set[str] = set()
        from charter.compile.primitives import literals_of

        for r in rules:
            literals |= literals_of(r.check) | (literals_of(r.when) if r.when else set())
        self.table = LiteralTable(tuple(sorted(literals)))
        builder = Builder(self.table.ids, constants, registry.predicates)
        self.extractors = registry.extractors
        self.rules = [
            _Bound(
                r,
                builder.expr(r.when) if r.when is not None else None,
                builder.expr(r.check),
                builder.expr(r.when, negated=True) if r.when is not None else None,
                registry.repairs.get(r.repair) if r.action == "fix" and r.repair else None,
                r.args,
            )
            for r in rules
            if r.action != "flag"
        ]

    def _env(self, text: str) -> Env:
        return Env(text, "", {}, self.table, self.extractors)

    def failed(self, text: str) -> list[Failed]:
        env = self._env(text)
        failing = [b for b in self.rules if outcome(b, env) == "fail"]
        if not failing:
            return []
        blocked = any(b.view.action == "block" for b in failing)
        final = text if blocked else repaired(text, self.rules, self._env, self.extractors)
        if final != text:
            env = self._env(final)
            failing = [b for b in self.rules if outcome(b, env) == "fail"]
        out = []
        for b in failing:
            action = b.view.on_unfixed if b.view.action == "fix" else b.view.action
            if action in ("retry", "escalate", "block"):
                out.append(Failed(b.view, action, final if final != text else None))
        return out


@dataclass(frozen=True)
class Sample:
    """One scope a chain of entries is rendered in, and where a failure is reported when the
    entry is not the pack's own (a built-in wording failing for an intent: at the intent)."""

    scope: Mapping[str, Any]
    items: Sequence[Mapping[str, Any]] = ()
    where: Location | None = None
    intent: str | None = None
    asked: bool = False  # ``where`` is the ``ask:`` of the question the texts carry


def check_chain(
    chain: Sequence[R.Entry], samples: Sequence[Sample], teller: Teller, judge: Judge
) -> tuple[list[Diagnostic], set[int]]:
    """In each sample, the first entry of the chain that can tell it (as at run time), every
    alternative of it that renders there checked by the rules; and which alternatives were."""
    out: list[Diagnostic] = []
    checked: set[int] = set()
    seen: set[tuple[str, str, str]] = set()
    for sample in samples:
        for entry in chain:
            told = [
                (alt, t)
                for alt in entry.alternatives
                for t in teller.texts(alt, sample.scope, sample.items)
            ]
            if not told:
                continue
            for alt, t in told:
                checked.add(id(alt))
                mine = sample.intent is None or entry.key.startswith(f"{sample.intent}.")
                what = "" if mine else f" (for intent '{sample.intent}')"
                for f in judge.failed(t.text):
                    rule = f.rule
                    key = (t.id, rule.id, what)
                    if key in seen:
                        continue
                    seen.add(key)
                    own = alt.location is not None
                    out.append(
                        error(
                            "CH356",
                            f"template {t.id}{what} fails rule '{rule.id}' "
                            f"({f.how()}) when rendered with sample values: {f.told(t.text)}",
                            (alt.location if own else sample.where) or Location("<built-in>"),
                            rule.message
                            if own or sample.asked
                            else f"write the {entry.event} template in responses.yaml; "
                            + rule.message,
                        )
                    )
            break
    return out, checked


def _unchecked(entries: Sequence[R.Entry], checked: set[int]) -> list[Diagnostic]:
    return [
        warning(
            "CH357",
            f"template {alt.texts[0][0]} could not be checked against the rules: no sample "
            "value makes it apply",
            alt.location,
            "give the fields examples: in the output schema, or the slots values in the "
            "planner tests of goals.yaml",
        )
        for entry in entries
        for alt in entry.alternatives
        if alt.location is not None and id(alt) not in checked
    ]


def check_templates(
    spec: R.ResponsesSpec,
    goals: GoalsSpec | None,
    skills: SkillsSpec | None,
    teller: Teller,
    judge: Judge,
    constants: Mapping[str, Any],
    where: Location | None,
) -> tuple[list[Diagnostic], tuple[str, ...]]:
    """Every entry a turn of this pack can use, in every sample scope it can be used in; and
    the ids of those entries' texts (what a conversation can exercise)."""
    plans: dict[tuple[str, ...], tuple[tuple[R.Entry, ...], list[Sample]]] = {}
    samples = slot_samples(goals)
    intents: list[IntentSpec | None] = [*(goals.intents if goals else ()), None]
    for intent in intents:
        values = slot_values(intent, samples) if intent is not None else {}
        iid = intent.id if intent is not None else None
        here = intent.location if intent is not None else where
        for event in R.EVENTS:
            chain = spec.chain(event, iid) if applies(event, intent, goals) else ()
            if not chain:
                continue
            found = plans.setdefault(tuple(e.key for e in chain), (chain, []))[1]
            scopes = list(event_scopes(event, intent, values, goals, constants, teller.formatters))
            if event == "unanswered" and intent is None and goals is not None:
                scopes.append(aggregate_scope(goals))
            for scope in scopes:
                asked = _asked_at(intent, scope)
                found.append(Sample(scope, (), asked or here, iid, asked=asked is not None))
    for contract in skills.contracts if skills is not None else ():
        entry = spec.result(contract.name)
        if entry is None:
            continue
        bound = [
            i for i in (goals.intents if goals else ()) if i.skill and i.skill.name == contract.name
        ]
        slot_sets = [{k: v[0] for k, v in slot_values(i, samples).items()} for i in bound] or [{}]
        plans[(entry.key,)] = (
            (entry,),
            [
                Sample(scope, items, where)
                for slots in slot_sets
                for scope, items in result_scopes(contract, slots)
            ],
        )
    out: list[Diagnostic] = []
    checked: set[int] = set()
    for chain, found in plans.values():
        diags, done = check_chain(chain, found, teller, judge)
        out += diags
        checked |= done
    own = {e.key: e for chain, _ in plans.values() for e in chain}
    out += _unchecked(list(own.values()), checked)
    out += check_prepared(skills, judge)
    # what a turn can say: the pack's own texts, and the built-in ones some sample renders (a
    # split's confirmation is no text of a pack that never splits)
    reachable = tuple(
        sorted(
            {
                i
                for e in own.values()
                for alt in e.alternatives
                if alt.location is not None or id(alt) in checked
                for i, _ in alt.texts
            }
        )
    )
    return out, reachable


def _asked_at(intent: IntentSpec | None, scope: Mapping[str, Any]) -> Location | None:
    """Where the slot question a scope tells is written (a built-in text that fails only for
    the question it carries is reported at the ``ask:``, the text the author must change)."""
    if intent is None or "question" not in scope:
        return None
    slot = intent.slot(str(scope.get("slot")))
    return slot.ask_location if slot is not None else None


def check_prepared(skills: SkillsSpec | None, judge: Judge) -> list[Diagnostic]:
    """FAQ answers and the texts of fallback protocols are told as they are: the pack's rules
    must accept them too (a fallback's ``{argument}`` rendered with a sample argument)."""
    out: list[Diagnostic] = []
    if skills is None:
        return out
    if skills.faq is not None:
        for e in skills.faq.entries:
            for f in judge.failed(e.answer):
                out.append(
                    error(
                        "CH356",
                        f"the answer of FAQ entry '{e.id}' fails rule '{f.rule.id}' "
                        f"({f.how()}): {f.told(e.answer)}",
                        e.location or Location("faq.yaml"),
                        f.rule.message,
                    )
                )
    contracts = {c.name: c for c in skills.contracts}
    for name, steps in skills.protocols:
        contract = contracts.get(name)
        args = schema_sample(contract.input_schema) if contract is not None else {}
        args = args if isinstance(args, dict) else {}
        for step in steps:
            if step.do.kind not in ("template", "clarify") or not step.do.text:
                continue
            text = fill_args(step.do.text, args)
            for f in judge.failed(text):
                out.append(
                    error(
                        "CH356",
                        f"the {step.do.kind} text of fallback protocol '{name}' fails rule "
                        f"'{f.rule.id}' ({f.how()}) when rendered with sample arguments: "
                        f"{f.told(text)}",
                        step.do_location or step.location,
                        f.rule.message,
                    )
                )
    return out
