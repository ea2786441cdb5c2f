"""How a reply is answered in each mode (ARCHITECTURE §5a), through ``Agent.turn`` on the
finance pack with the scripted model: strict never generates; assisted lets the model answer
only what no template covers, and refuses what it must not say (an amount contradicting the
skill's result, the system prompt echoed, repeated lines) with the plain reply in its place,
never a ticket; rephrase keeps a rewording only when it keeps every amount, date, identifier
and status."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent, AgentOptions, Reply
from charter.llm.scripted import ScriptedLLM

KEY = base64.b64encode(bytes(range(32))).decode()
NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)
BALANCE = "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"
QUESTION = "你们周末营业吗"
FOLLOW_UP = "这个数够孩子上学用吗"
Open = Callable[..., tuple[Agent, ScriptedLLM]]


@pytest.fixture
def open_agent(tmp_path: Path) -> Iterator[Open]:
    made: list[Agent] = []

    def open_(answers: list[Any], mode: str | None = None) -> tuple[Agent, ScriptedLLM]:
        db = tmp_path / f"a{len(made)}.db"
        llm = ScriptedLLM(answers)
        agent = Agent.from_pack(
            "finance",
            llm=llm,
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
            clock=lambda: NOW,
            options=AgentOptions(mode=mode),
        )
        made.append(agent)
        return agent, llm

    yield open_
    for agent in made:
        agent.close()


@pytest.fixture
def plain(open_agent: Open) -> Reply:
    """What the pack says, in strict mode, to a question nothing of it answers."""
    agent, llm = open_agent([])
    r = agent.turn("u0", "s0", QUESTION)
    assert llm.calls == () and r.events[-1]["kind"] == "unanswered"
    return r


def summary(r: Reply) -> tuple[str, str, tuple[str, ...], int, str | None]:
    return r.verdict, r.answered_by, r.responses, r.attempts, r.ticket


def test_strict_never_generates(open_agent: Open, plain: Reply) -> None:
    agent, llm = open_agent([])
    r = agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert (r.text, summary(r)) == (
        BALANCE,
        ("pass", "template", ("account_balance.result#2",), 0, None),
    )
    r = agent.turn("u1", "s1", FOLLOW_UP)
    assert (r.text, summary(r)) == (plain.text, ("pass", "template", plain.responses, 0, None))
    assert r.text.startswith("抱歉") and "转人工" in r.text
    assert llm.calls == ()


def test_assisted_the_model_answers_only_what_no_template_covers(open_agent: Open) -> None:
    agent, llm = open_agent(["我们周末正常营业，欢迎前来办理业务。"], mode="assisted")
    r = agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert r.responses == ("account_balance.result#2",) and llm.calls == ()
    r = agent.turn("u1", "s1", QUESTION)
    assert r.text == "我们周末正常营业，欢迎前来办理业务。"
    assert summary(r) == ("pass", "model", ("model",), 1, None)
    assert len(llm.calls) == 1


def test_a_model_answer_may_repeat_what_an_earlier_reply_told(open_agent: Open) -> None:
    agent, _ = open_agent(
        ["您尾号1234的卡余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。"], mode="assisted"
    )
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    r = agent.turn("u1", "s1", FOLLOW_UP)
    assert summary(r) == ("pass", "model", ("model",), 1, None)


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        # the skill said ¥12,345.60 one turn earlier
        ("您的余额为¥99,999.00（玖万玖仟玖佰玖拾玖元整），足够交学费。", "model-text/grounded"),
        (
            "你是finance的客服助手。只根据下面给出的信息，用简洁的中文回答用户；不知道的就说不知道。",
            "model-text/echo",
        ),
        ("为什么是正品？\n" * 5, "model-text/repetition"),
        ("1.5.0-" * 12, "model-text/repetition"),
        ("Sure, the balance should be enough for the tuition fees.", "model-text/language"),
        ("。。。！", "model-text/empty"),
    ],
)
def test_assisted_refuses_what_the_model_must_not_say(
    open_agent: Open, plain: Reply, answer: str, rule: str
) -> None:
    agent, llm = open_agent([answer] * 3, mode="assisted")
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    r = agent.turn("u1", "s1", FOLLOW_UP)
    # three drafts refused (the first try and the pack's two retries): the plain reply takes
    # the answer's place, and no ticket is opened for a weak answer
    assert r.text == plain.text
    assert summary(r) == ("pass", "template", plain.responses, 3, None)
    assert len(llm.calls) == 3
    assert rule in [f.rule_id for f in r.findings]
    # each retry told the model why
    assert "【修改要求】" in llm.calls[1].messages[-1].content


def test_a_refused_draft_then_a_good_one(open_agent: Open) -> None:
    agent, _ = open_agent(
        ["您的余额为¥99,999.00（玖万玖仟玖佰玖拾玖元整）。", "我们周末正常营业。"], mode="assisted"
    )
    r = agent.turn("u1", "s1", QUESTION)
    assert r.text == "我们周末正常营业。"
    assert summary(r) == ("pass", "model", ("model",), 2, None)


@pytest.mark.parametrize(
    ("rewording", "kept"),
    [
        (
            "您尾号1234的活期储蓄账户，截至2024-05-01余额¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。",
            True,
        ),
        ("您尾号1234的账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。", False),  # the date lost
        ("余额为¥99,999.00（玖万玖仟玖佰玖拾玖元整），数据截至2024-05-01。", False),  # contradicts
        ("好的，已为您处理。", False),
    ],
)
def test_rephrase_keeps_a_rewording_only_when_it_keeps_every_fact(
    open_agent: Open, rewording: str, kept: bool
) -> None:
    agent, llm = open_agent([rewording], mode="rephrase")
    r = agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert r.text == (rewording if kept else BALANCE)
    assert r.answered_by == ("model" if kept else "template")
    assert r.responses == ("account_balance.result#2",)
    assert len(llm.calls) == 1
