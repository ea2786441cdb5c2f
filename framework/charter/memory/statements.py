"""Facts from what the user said: the slot values of their goals, and the statements about
themselves that memory.yaml declares (``我对{X}过敏`` → ``allergy: 青霉素``), as ``Candidate``s
for the write pipeline, so that personal data, levels, encryption and consent apply to them as
to any fact.

A slot value's fact is governed by ``slot_facts``: the rule of its key (``transfer.amount``, a
shared ``memory_key``, ``transfer.*``, else the default) gives the memory type, the least level
and a validity; its origin gives the source and the confidence:

* ``stated``: the user said it (typed, or read from their words by a pattern, a learned patch
  or the model) — ``user_confirmed``;
* ``inferred``: a slot's default the user did not say (余额 when only the card was given) —
  ``inferred``;
* ``verified``: a field a skill's result kept (the coupon order_lookup found) —
  ``system_verified``.

A statement is read from every input by the regular expressions the compile stage made of its
phrases (once per policy here): the first phrase that matches gives the value, unless the value
is negated (我对青霉素不过敏 reads 青霉素不: nothing is remembered), a question word (我对什么过敏)
or the sentence asks (我对青霉素过敏吗).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from charter.compile.specs.memory import ORIGIN_SOURCE, MemoryPolicy, Origin, Statement
from charter.memory.pipeline import Candidate

# a value ending so is a negated statement (青霉素不 of 我对青霉素不过敏)
_NEGATED = re.compile(r"(?:不|没|没有|未|并不|从不|从没|不会)$")
_ASKED = re.compile(r"什么|哪些|哪种|哪个|啥|多少")
_QUESTION_AFTER = ("吗", "么", "嘛", "？", "?")


@dataclass(frozen=True)
class Said:
    """A statement the input makes: the value to remember under the statement's key."""

    statement: Statement
    value: str


class StatementReader:
    """The declared statements with their phrases compiled, read from texts."""

    def __init__(self, statements: tuple[Statement, ...]) -> None:
        self.statements = statements
        self._patterns = tuple(tuple(re.compile(p) for p in s.patterns) for s in statements)

    def read(self, text: str) -> list[Said]:
        """Each statement ``text`` makes, once per key, in declaration order."""
        out: list[Said] = []
        keys: set[str] = set()
        for statement, patterns in zip(self.statements, self._patterns, strict=True):
            if statement.key in keys:
                continue
            for pattern in patterns:
                value = _value(pattern, text)
                if value is not None:
                    shown = statement.value.replace("{value}", value)
                    out.append(Said(statement, shown))
                    keys.add(statement.key)
                    break
        return out


def _value(pattern: re.Pattern[str], text: str) -> str | None:
    for m in pattern.finditer(text):
        value = m.groupdict().get("value") or ""
        if _NEGATED.search(value) or _ASKED.search(value):
            continue
        if text[m.end() : m.end() + 1] in _QUESTION_AFTER:
            continue
        return value.strip() if value else m.group(0)
    return None


@lru_cache(maxsize=32)
def reader(statements: tuple[Statement, ...]) -> StatementReader:
    """The reader of a policy's statements, compiled once (a policy is immutable)."""
    return StatementReader(statements)


def statements_of(policy: MemoryPolicy, text: str) -> list[Said]:
    return reader(policy.statements).read(text) if policy.statements else []


def slot_candidate(
    policy: MemoryPolicy,
    key: str,
    value: str,
    origin: Origin,
    *,
    domain: str,
    intent_type: str | None,
    entity_ref: str | None = None,
) -> Candidate | None:
    """The candidate fact of a slot value, as ``slot_facts`` governs its key and origin;
    None when the rule says values of the key are not remembered."""
    rule = policy.slot_facts.rule(key)
    if not rule.remember:
        return None
    trust = policy.slot_facts.origin(origin)
    return Candidate(
        key=key,
        value=value,
        memory_type=rule.type,
        confidence=round(trust.confidence * rule.confidence, 4),
        source=ORIGIN_SOURCE[origin],
        domain=domain,
        entity_ref=entity_ref,
        intent_type=intent_type,
        level=rule.level,
        validity=tuple(v for v in (rule.validity, trust.validity) if v is not None),
    )


def statement_candidate(said: Said, *, domain: str, intent_type: str | None) -> Candidate:
    """The candidate fact of a statement: stated by the user, under the statement's rule;
    recalled with the statement's intent when it names one, else the turn's."""
    s = said.statement
    return Candidate(
        key=s.key,
        value=said.value,
        memory_type=s.rule.type,
        confidence=s.rule.confidence,
        source="user_confirmed",
        domain=domain,
        intent_type=s.intent or intent_type,
        level=s.rule.level,
        validity=(s.rule.validity,) if s.rule.validity is not None else (),
        consent_required=s.consent,
    )
