"""The model of a conversation test: each turn's scripted answers, in order, and nothing more.

A turn that asks the model more often than it scripts answers fails with the reason
(``the model was asked (1 call) but the turn scripts no answer``) instead of getting a made-up
text: a test whose reply came from nowhere would pass for the wrong reason. The calls of each
turn are counted (``model_calls``). Answers go through the ``scripted`` backend, so a grammar
that lists its only allowed strings is checked as it is there.
"""

from __future__ import annotations

from collections.abc import Sequence

from charter.contracts.models import Completion, Message
from charter.llm.errors import LLMError
from charter.llm.scripted import ScriptedLLM


class Unscripted(LLMError):
    """The model was asked once more than the turn has answers for."""

    def __init__(self, calls: int, scripted: int) -> None:
        self.calls = calls
        self.scripted = scripted
        asked = f"{calls} call" if calls == 1 else f"{calls} calls"
        has = (
            "no answer"
            if scripted == 0
            else f"only {scripted} answer" + ("" if scripted == 1 else "s")
        )
        super().__init__(f"the model was asked ({asked}) but the turn scripts {has}")


class TurnModel:
    """An ``LLM`` whose answers are set turn by turn (``begin``)."""

    def __init__(self) -> None:
        self._script = ScriptedLLM([])
        self._scripted = 0
        self.calls = 0
        self.refused: Unscripted | None = None  # kept even when the agent swallows the error

    def begin(self, answers: Sequence[str]) -> None:
        """A new turn: these answers, in order; the call count starts again."""
        self._script = ScriptedLLM(list(answers))
        self._scripted = len(answers)
        self.calls = 0
        self.refused = None

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        self.calls += 1
        if self.calls > self._scripted:
            self.refused = Unscripted(self.calls, self._scripted)
            raise self.refused
        return self._script.generate(
            messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar
        )
