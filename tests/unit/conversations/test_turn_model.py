"""The conversation tests' model: a turn's scripted answers in order, the calls counted per
turn, and a turn that asks for more than it scripts refused with the reason."""

from __future__ import annotations

import pytest

from charter.contracts.models import Message
from charter.conversations.model import TurnModel, Unscripted
from charter.llm.errors import LLMBadResponse

ASK = [Message("user", "你好")]


def ask(model: TurnModel, grammar: str | None = None) -> str:
    return model.generate(ASK, max_tokens=8, temperature=0.0, grammar=grammar).text


def test_answers_in_order_and_calls_counted_per_turn() -> None:
    model = TurnModel()
    model.begin(["一", "二"])
    assert [ask(model), ask(model)] == ["一", "二"]
    assert model.calls == 2 and model.refused is None
    model.begin(["三"])
    assert (model.calls, ask(model), model.calls) == (0, "三", 1)


@pytest.mark.parametrize(
    ("answers", "calls", "message"),
    [
        ([], 1, "the model was asked (1 call) but the turn scripts no answer"),
        (["一"], 2, "the model was asked (2 calls) but the turn scripts only 1 answer"),
        (["一", "二"], 3, "the model was asked (3 calls) but the turn scripts only 2 answers"),
    ],
)
def test_a_turn_asking_more_than_it_scripts_is_refused(
    answers: list[str], calls: int, message: str
) -> None:
    model = TurnModel()
    model.begin(answers)
    for _ in range(calls - 1):
        ask(model)
    with pytest.raises(Unscripted) as caught:
        ask(model)
    assert str(caught.value) == message
    assert model.refused is caught.value and model.calls == calls
    model.begin(["一"])
    assert model.refused is None


def test_a_grammar_of_literals_is_checked_as_by_the_scripted_backend() -> None:
    model = TurnModel()
    model.begin(["是", "也许"])
    assert ask(model, 'root ::= "是" | "否"') == "是"
    with pytest.raises(LLMBadResponse):
        ask(model, 'root ::= "是" | "否"')
