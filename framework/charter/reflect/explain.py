"""``charter check --explain``: for every rule of a pack, why it failed, was skipped or passed.

A rule *fails* with the spans its check blames (as a finding shows them); it is *skipped* when
its ``when`` did not hold; it *passes* either because nothing it looks for is in the text or
because its check held on what was there. In each case the phrases and extracted items of the
rule found in the output are listed with their spans, so an author sees what the rule saw.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from charter.compile.compiled import CompiledRule
from charter.compile.repairing import Outcome
from charter.diagnostics import Location
from charter.dsl import ast as A
from charter.reflect.engine import Engine


@dataclass(frozen=True)
class Seen:
    """A phrase (``what`` is the phrase) or an extracted item (``what`` is the extractor) of
    the rule, found in the output at ``start:end``."""

    kind: Literal["phrase", "extractor"]
    what: str
    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RuleExplanation:
    rule: str
    origin: str
    location: Location
    action: str
    outcome: Outcome
    reason: str
    blamed: tuple[tuple[int, int], ...]  # the spans a failure points at
    seen: tuple[Seen, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "origin": self.origin,
            "location": str(self.location),
            "action": self.action,
            "outcome": self.outcome,
            "reason": self.reason,
            "blamed": [list(s) for s in self.blamed],
            "seen": [s.as_dict() for s in self.seen],
        }


def explain(
    engine: Engine, output: str, input: str = "", context: Mapping[str, Any] | None = None
) -> tuple[RuleExplanation, ...]:
    """One explanation per rule of the pack, in rule order, on ``output`` as given (before any
    repair: what a repair changes is what ``check`` reports)."""
    env = engine.env(output, input, context or {})
    outcomes = engine.evaluate(output, input, context)
    hits = env.hits("output", output)
    out = []
    for bound in engine.bound:
        rule = bound.rule
        outcome = outcomes[rule.id]
        seen: list[Seen] = []
        phrases, extractors = _sources(rule)
        for phrase in phrases:
            lid = engine.literals.ids.get(phrase)
            for start, end in hits.get(lid, ()) if lid is not None else ():
                seen.append(Seen("phrase", phrase, start, end, output[start:end]))
        for name in extractors:
            if name in engine.extractors:
                for item in env.items(name, "output", output):
                    seen.append(Seen("extractor", name, item.start, item.end, item.text))
        seen.sort(key=lambda s: (s.start, s.end, s.what))
        blamed: tuple[tuple[int, int], ...] = ()
        if outcome == "fail":
            blamed = engine.blame(bound, engine.env(output, input, context or {})).spans
        out.append(
            RuleExplanation(
                rule.id,
                rule.origin,
                rule.location,
                rule.action.kind,
                outcome,
                _reason(rule, outcome, bool(seen)),
                blamed,
                tuple(dict.fromkeys(seen)),
            )
        )
    return tuple(out)


def _reason(rule: CompiledRule, outcome: Outcome, saw: bool) -> str:
    if outcome == "fail":
        return f"failed: {rule.message}" if rule.message else "failed: its check did not hold"
    if outcome == "skip":
        return f"skipped: its when did not hold ({rule.source_when})"
    if not saw:
        return "passed: nothing it looks for is in the text"
    return f"passed: its check held ({rule.source_check})"


def _sources(rule: CompiledRule) -> tuple[list[str], list[str]]:
    """The phrases and extractors the rule reads from the output, in the order written."""
    phrases: dict[str, None] = {}
    extractors: dict[str, None] = {}
    for node in _walk([rule.when, rule.check]):
        if isinstance(node, A.Contains) and node.subject.root.text == "output":
            phrases.update(dict.fromkeys(node.terms.values))
        elif isinstance(node, A.Mentions | A.Quantified) and node.subject.root.text == "output":
            extractors[node.extractor.text] = None
    return list(phrases), list(extractors)


def _walk(nodes: list[Any]) -> Iterator[Any]:
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, str | int | float | bool):
            continue
        if isinstance(node, tuple | list):
            stack.extend(reversed(node))
            continue
        if dataclasses.is_dataclass(node):
            yield node
            parts = [getattr(node, f.name) for f in dataclasses.fields(node) if f.name != "span"]
            stack.extend(reversed(parts))
