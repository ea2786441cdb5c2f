"""Slots the model reads (``model: true`` in goals.yaml): asked only when neither the slot's
regex nor its extractor nor a learned patch found the value.

The model answers one JSON object under a GBNF grammar (backends without grammars get the same
request and their answer is parsed the same way); each value is checked against the slot's
type, and anything else — no JSON, a wrong type, null — leaves the slot missing, so the planner's
question is asked as before. What the model read is what ``charter learn`` later replaces with a
deterministic patch when the user corrects it (seed 001 §3.2: 去年一季度 read as the wrong year).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from charter.compile.specs.goals import GoalsSpec, SlotSpec
from charter.contracts.models import LLM, Message
from charter.goals.tables import Goal

SYSTEM = "你从用户的话里读出办理业务需要的参数，只输出一个JSON对象；读不出的参数写null。"


@dataclass
class Filled:
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # goal id -> slot -> value
    asked: int = 0  # model calls
    answers: list[str] = field(default_factory=list)

    def trace(self) -> dict[str, Any]:
        return {"filled": self.values, "model_calls": self.asked, "answers": self.answers}


def missing_model_slots(
    spec: GoalsSpec | None, goal: Goal, slots: Mapping[str, Any]
) -> list[SlotSpec]:
    """The goal's ``model`` slots that still have no value."""
    intent = spec.intent(goal.intent) if spec is not None else None
    if intent is None:
        return []
    return [s for s in intent.slots if s.model and slots.get(s.name) in (None, "", [])]


def grammar(slots: Sequence[SlotSpec]) -> str:
    """A GBNF grammar for ``{"a": <value|null>, "b": ...}`` with the slots in order."""
    parts = ' "," ws '.join(
        f'"\\"{s.name}\\"" ws ":" ws ({"number" if s.type == "number" else "string"} | "null")'
        for s in slots
    )
    return "\n".join(
        (
            f'root ::= "{{" ws {parts} ws "}}"',
            'number ::= "-"? [0-9]+ ("." [0-9]+)?',
            'string ::= "\\"" [^"\\\\]* "\\""',
            "ws ::= [ ]?",
        )
    )


def request(text: str, slots: Sequence[SlotSpec], now: datetime) -> list[Message]:
    wanted = "、".join(f"{s.name}（{'数字' if s.type == 'number' else '文字'}）" for s in slots)
    return [
        Message("system", SYSTEM),
        Message("user", f"今天是{now:%Y年%m月%d日}。用户说：{text}\n需要的参数：{wanted}"),
    ]


def parse(answer: str, slots: Sequence[SlotSpec]) -> dict[str, Any]:
    try:
        data = json.loads(answer.strip())
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for s in slots:
        value = data.get(s.name)
        if value is None or isinstance(value, bool):
            continue
        if s.type == "number":
            if isinstance(value, int | float):
                out[s.name] = int(value) if float(value).is_integer() else value
            elif isinstance(value, str) and _numeric(value):
                number = Decimal(value)
                out[s.name] = int(number) if number == number.to_integral() else float(number)
        elif isinstance(value, str) and value.strip():
            out[s.name] = value.strip()
    return out


def _numeric(text: str) -> bool:
    try:
        Decimal(text)
    except ArithmeticError:
        return False
    return True


def fill(
    llm: LLM,
    spec: GoalsSpec | None,
    text: str,
    goals: Sequence[Goal],
    slots: Mapping[str, Mapping[str, Any]],
    now: datetime,
    *,
    max_tokens: int = 64,
) -> Filled:
    """Ask the model for each goal's missing ``model`` slots; the values found are stored in
    the goal's context (and complete a pending goal) by the caller."""
    out = Filled()
    for goal in goals:
        wanted = missing_model_slots(spec, goal, slots.get(goal.id, {}))
        if not wanted:
            continue
        messages = request(text, wanted, now)
        try:
            done = llm.generate(
                messages, max_tokens=max_tokens, temperature=0.0, grammar=grammar(wanted)
            )
        except NotImplementedError:  # a backend without grammars reads the same request
            done = llm.generate(messages, max_tokens=max_tokens, temperature=0.0)
        out.asked += 1
        out.answers.append(done.text)
        found = parse(done.text, wanted)
        if found:
            out.values[goal.id] = found
    return out
