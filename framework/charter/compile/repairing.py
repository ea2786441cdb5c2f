"""The ``fix`` rules' repair loop (ARCHITECTURE §4), written once for the two places a text is
judged with a rule's whole behaviour: the runtime engine (``charter.reflect.engine``) and the
compile-time check of every text the agent can say (``charter.compile.response_check``).

Each failing ``fix`` rule's repair runs in rule order, the text re-checked before each; rounds
repeat until a round changes nothing, at most ``MAX_REPAIR_ROUNDS``. What a repair sees — the
spans and items the failing check found — is recorded by running the check in explaining mode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from charter.compile.build import Test
from charter.compile.env import Env
from charter.contracts.rules import Extractor, Item, Repair, RepairArg, RepairInput

MAX_REPAIR_ROUNDS = 3
Outcome = Literal["pass", "fail", "skip"]


class Repairable(Protocol):
    """A rule bound to its closures and, for a ``fix`` rule, its repair."""

    @property
    def when(self) -> Test | None: ...
    @property
    def check(self) -> Test: ...
    @property
    def when_explain(self) -> Test | None: ...  # the guard, recording what made it apply
    @property
    def repair(self) -> Repair | None: ...
    @property
    def repair_args(self) -> tuple[RepairArg, ...]: ...


@dataclass(frozen=True)
class Failure:
    """Where a failing check found what it objects to."""

    spans: tuple[tuple[int, int], ...]
    items: tuple[Item, ...]


def outcome(rule: Repairable, env: Env) -> Outcome:
    if rule.when is not None and not rule.when(env):
        return "skip"
    return "pass" if rule.check(env) else "fail"


def explain(rule: Repairable, env: Env) -> Failure:
    env.start_explaining()
    try:
        rule.check(env)
        if not env.spans and rule.when_explain is not None:
            # a missing phrase has no span: point at what made the rule apply instead
            rule.when_explain(env)
    finally:
        env.stop_explaining()
    spans = tuple(sorted(set(env.spans)))
    items = tuple(
        sorted({(i.start, i.end): i for i in env.witnesses}.values(), key=lambda i: i.start)
    )
    return Failure(spans, items)


def repaired(
    text: str,
    rules: Sequence[Repairable],
    env_of: Callable[[str], Env],
    extractors: Mapping[str, Extractor],
) -> str:
    """``text`` after the repairs of the ``fix`` rules it fails (see the module docstring)."""
    for _ in range(MAX_REPAIR_ROUNDS):
        before = text
        for rule in rules:
            if rule.repair is None:
                continue
            env = env_of(text)
            if outcome(rule, env) != "fail":
                continue
            found = explain(rule, env)
            text = rule.repair.apply(
                rule.repair_args, RepairInput(text, found.spans, found.items, extractors)
            )
        if text == before:
            break
    return text


__all__ = [
    "MAX_REPAIR_ROUNDS",
    "Failure",
    "Outcome",
    "Repairable",
    "explain",
    "outcome",
    "repaired",
]
