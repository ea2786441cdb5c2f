"""A case of the ablation played (seed 001 §5.4, ``charter health --ablation``): its turns said
to an agent whose model answers what each turn scripts (``TurnModel``, one
``charter.llm.scripted`` backend per turn), then its last reply judged against the case's
``success`` (``judge``): the text criteria, and the pack's rules, checked by its engine whatever
the configuration with what the user said in the case as the memory a claim about the user's
past may rest on. The cases are read by ``charter.health.ablation_cases``;
``charter.health.ablation`` plays them in its five configurations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from charter.contracts.models import Completion, Message
from charter.health.ablation_cases import Case, Success, scripted
from charter.llm.errors import LLMError
from charter.llm.scripted import ScriptedLLM
from charter.reflect.engine import Engine


@dataclass(frozen=True)
class Outcome:
    """One case in one configuration: whether it succeeded, its last reply, why it failed."""

    ok: bool
    reply: str
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reply": self.reply, "why": self.why or None}


class TurnModel:
    """The agent's model during a case: the answers of the turn being played (``play``)."""

    def __init__(self) -> None:
        self.current = ScriptedLLM([])

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        return self.current.generate(
            messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar
        )


class Player(Protocol):
    def turn(self, user_id: str, session_id: str, text: str) -> Any: ...


def play(agent: Player, model: TurnModel, engine: Engine, case: Case, user: str) -> Outcome:
    """The case's turns, as ``user`` (sessions ``user-s1``, ``user-s2``...), then ``judge``.
    A turn that asks the model for more than the case scripted fails the case, saying so."""
    said: list[str] = []
    text = ""
    turns = [(s, t) for s, session in enumerate(case.sessions, 1) for t in session]
    for k, (s, turn) in enumerate(turns, 1):
        model.current = scripted(turn.model)
        try:
            text = agent.turn(user, f"{user}-s{s}", turn.user).text
        except LLMError as exc:
            why = str(exc).removeprefix("scripted backend: ").split(" (last user message")[0]
            if turn.model is None:
                why = "the turn asked the model, and it scripts no answer"
            return Outcome(False, "", f"turn {k} ({turn.user}): {why}")
        said.append(turn.user)
    return judge(case.success, text, said, engine)


def judge(success: Success, text: str, said: Sequence[str], engine: Engine) -> Outcome:
    """``text`` (the last reply) against ``success``; ``said`` is what the user said in the
    case, the last turn last."""
    why = success.missed(text)
    if success.passes_rules:
        last = said[-1] if said else ""
        checked = engine.check(text, last, {"memory": {"facts": list(said)}})
        if checked.verdict != "pass":
            why.append("breaks " + ", ".join(checked.failed))
    return Outcome(not why, text, "; ".join(why))
