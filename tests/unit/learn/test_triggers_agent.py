"""Issue 8, acceptance 1: each reflection trigger fires when it should and stays silent on
healthy turns — through ``Agent.turn`` with the real finance pack, its skills and a SQLite
file; the reflection log is read back from the database.

The finance pack is strict: its replies are templates, and the model only reads the slots it may
read (the fill step: 去年 of a quarterly report). The entropy trigger is about a model's answer,
so those tests run the agent with ``AgentOptions(mode="assisted")`` on an input no intent claims,
the one kind of input the model answers there."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent, AgentOptions
from charter.compile.api import compile_path
from charter.compile.specs.learn import LearningSpec, Triggers
from charter.contracts.registry import Registry
from charter.learn.log import LogEntry
from charter.llm.scripted import ScriptedLLM
from charter.plugins.host import default_host

KEY = base64.b64encode(bytes(range(32))).decode()
NOW = datetime(2026, 11, 30, 2, 22, 5, tzinfo=UTC)
FINANCE = Path(__file__).parents[3] / "domains" / "finance"
Open = Callable[..., Agent]


class Broken:
    """account_balance standing in for a back end that is down."""

    name = "account_balance"
    description = "按卡号后四位查询演示账户余额"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        raise ConnectionError("core banking unreachable")


class Boasting:
    """account_balance whose back end answers nothing while claiming it found the account."""

    name = "account_balance"
    description = "按卡号后四位查询演示账户余额"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"results": [], "summary": "已为您查到账户余额。"}


@pytest.fixture
def open_agent(tmp_path: Path) -> Iterator[Open]:
    made: list[Agent] = []
    clock = {"now": NOW}

    def open_(
        answers: Sequence[Any] = (),
        *,
        skill: Any = None,
        triggers: Triggers | None = None,
        mode: str | None = None,
    ) -> Agent:
        registry: Registry = default_host().registry
        if skill is not None:
            registry = dataclasses.replace(registry, skills={**registry.skills, skill.name: skill})
        pack, diags = compile_path(FINANCE, registry)
        assert pack is not None, diags
        if triggers is not None:
            learning = pack.learning or LearningSpec()
            pack = dataclasses.replace(
                pack, learning=dataclasses.replace(learning, triggers=triggers)
            )
        db = tmp_path / f"agent{len(made)}.db"

        def tick() -> datetime:
            clock["now"] += timedelta(seconds=30)
            return clock["now"]

        agent = Agent.from_pack(
            pack,
            llm=ScriptedLLM(list(answers), default="好的。"),
            database_url=f"sqlite:///{db}",
            registry=registry,
            memory_key=KEY,
            clock=tick,
            options=AgentOptions(mode=mode),
        )
        made.append(agent)
        return agent

    yield open_
    for agent in made:
        agent.close()


def log(agent: Agent) -> list[LogEntry]:
    assert agent.parts.log is not None
    return agent.parts.log.entries("finance")


def learn_step(agent: Agent, trace_id: str | None) -> dict[str, Any]:
    assert agent.parts.traces is not None and trace_id is not None
    trace = agent.parts.traces.get(trace_id)
    assert trace is not None
    return next(dict(s.outputs) for s in trace.steps if s.name == "learn")


# ---- skill failing twice in a row ---------------------------------------------------------------


def test_a_skill_failing_twice_in_a_row_reflects_once_the_second_failure_is_seen(
    open_agent: Open,
) -> None:
    agent = open_agent(skill=Broken())
    first = agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert first.skills[0]["failure"] == "error"
    assert learn_step(agent, first.trace_id) == {"patches": [], "triggers": [], "logged": []}
    second = agent.turn("u1", "s1", "再查一次尾号1234的余额")
    assert learn_step(agent, second.trace_id) == {
        "patches": [],
        "triggers": ["skill_failure"],
        "logged": ["R-000001"],
    }
    (entry,) = log(agent)
    assert (entry.trigger, entry.skill, entry.intent, entry.correction) == (
        "skill_failure",
        "account_balance",
        "account-query",
        None,
    )
    assert entry.hypothesis == "技能account_balance连续2次调用失败（error），应改用兜底或检查服务"
    assert [e.type for e in entry.evidence] == ["user_input", "tool_call", "tool_call"]
    assert entry.evidence[0].content == "再查一次尾号1234的余额"
    assert [(e.name, dict(e.params), e.result["failure"]) for e in entry.evidence[1:]] == [
        ("account_balance", {"account_tail": "1234"}, "error"),
        ("account_balance", {"account_tail": "1234"}, "error"),
    ]


def test_a_success_between_two_failures_breaks_the_streak(open_agent: Open) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u1", "s1", "再查一次尾号1234的余额")
    assert log(agent) == []


def test_the_streak_is_counted_per_user(open_agent: Open) -> None:
    agent = open_agent(skill=Broken())
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u2", "s1", "查一下尾号1234的余额")
    assert log(agent) == []


def test_the_skill_failure_trigger_can_be_switched_off(open_agent: Open) -> None:
    agent = open_agent(skill=Broken(), triggers=Triggers(skill_failures=0))
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u1", "s1", "再查一次尾号1234的余额")
    assert log(agent) == []


# ---- negation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("second", "fires"),
    [
        ("不对，重新来", True),
        ("错了，我问的不是这个", True),
        ("你理解错了", True),
        ("没错，谢谢", False),  # approval
        ("这个数对不对？", False),  # a question about the answer
        ("是不是错了？", False),
        ("那转账手续费是多少", False),  # goes on to something else
    ],
)
def test_negation_fires_on_a_rejection_of_the_previous_answer(
    open_agent: Open, second: str, fires: bool
) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    reply = agent.turn("u1", "s1", second)
    assert learn_step(agent, reply.trace_id)["triggers"] == (["negation"] if fires else [])
    if fires:
        (entry,) = log(agent)
        assert entry.hypothesis == "用户需要查询尾号1234账户的余额"
        assert [e.type for e in entry.evidence] == ["user_input", "tool_call", "user_feedback"]
        assert (entry.evidence[0].content, entry.evidence[2].content) == (
            "查一下尾号1234的余额",
            second,
        )
        assert entry.correction is None  # nothing in the turn says what was right


def test_a_negation_with_nothing_before_it_rejects_nothing(open_agent: Open) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "不对")
    assert log(agent) == []


def test_a_negation_in_another_session_rejects_nothing(open_agent: Open) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u1", "s2", "不对")
    assert log(agent) == []


def test_negation_followed_by_the_same_skill_with_other_arguments_gives_the_correction(
    open_agent: Open,
) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u1", "s1", "不对，是尾号5678的余额")
    (entry,) = log(agent)
    assert (entry.trigger, entry.correction, entry.skill) == (
        "negation",
        {"account_tail": "5678"},
        "account_balance",
    )
    assert entry.hypothesis == "用户需要查询尾号5678账户的余额"
    assert dict(entry.evidence[1].params) == {"account_tail": "1234"}


def test_the_negation_trigger_can_be_switched_off(open_agent: Open) -> None:
    agent = open_agent(triggers=Triggers(negation=False))
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    agent.turn("u1", "s1", "不对，重新来")
    assert log(agent) == []


# ---- entropy ------------------------------------------------------------------------------------

# no intent claims it (nor an FAQ entry): in assisted mode the model answers
OPEN = "风险承受能力是什么意思"


def _answer(logprob: float) -> dict[str, Any]:
    text = "您好，理财产品的收益以产品说明书为准（历史业绩不预示未来表现），风险等级为R2。"
    return {"text": text, "logprobs": [logprob] * 8}


@pytest.mark.parametrize(
    ("logprob", "triggers", "fires"),
    [
        (-4.0, None, True),  # mean surprisal 4.0 nats > 3.2
        (-3.2, None, False),  # at the threshold: not above it
        (-0.1, None, False),
        (-4.0, Triggers(entropy=5.0), False),  # the pack's own threshold
        (-4.0, Triggers(entropy=None), False),  # switched off
    ],
)
def test_entropy_above_the_threshold_fires(
    open_agent: Open, logprob: float, triggers: Triggers | None, fires: bool
) -> None:
    agent = open_agent([_answer(logprob)], triggers=triggers, mode="assisted")
    reply = agent.turn("u1", "s1", OPEN)
    assert (reply.answered_by, reply.text) == ("model", _answer(logprob)["text"])
    assert learn_step(agent, reply.trace_id)["triggers"] == (["entropy"] if fires else [])
    if fires:
        (entry,) = log(agent)
        # no goal to name: the hypothesis quotes the user's words
        assert entry.hypothesis == (
            "模型对“风险承受能力是什么意思”的回答没有把握（平均熵4.00 > 3.2）"
        )
        assert [e.type for e in entry.evidence] == ["user_input"]


def test_an_answer_without_logprobs_has_no_entropy(open_agent: Open) -> None:
    agent = open_agent([_answer(-4.0)["text"]], mode="assisted")
    reply = agent.turn("u1", "s1", OPEN)
    assert reply.answered_by == "model"
    assert learn_step(agent, reply.trace_id)["triggers"] == []
    assert log(agent) == []


def test_a_strict_pack_s_template_reply_has_no_entropy(open_agent: Open) -> None:
    # as shipped (strict) the wealth request is told by its completed template: nothing was
    # generated, so there is no entropy to judge, whatever the model would have said
    agent = open_agent([_answer(-4.0)])
    reply = agent.turn("u1", "s1", "我有10万元想买理财，稳健一点")
    assert (reply.answered_by, reply.attempts) == ("template", 0)
    assert learn_step(agent, reply.trace_id)["triggers"] == []
    assert log(agent) == []


# ---- contradiction ------------------------------------------------------------------------------


def _read(year: int) -> str:
    return f'{{"year": {year}, "quarter": null}}'


@pytest.mark.parametrize(
    ("model_year", "between", "fires"),
    [
        (2025, 0, True),  # the model read 2025; the user confirmed 2024 a turn before
        (2024, 0, False),  # agrees with the confirmed fact
        (2025, 2, True),  # confirmed 3 turns back: still within the window
        (2025, 3, False),  # confirmed 4 turns back: out of the window
    ],
)
def test_a_value_contradicting_a_recently_confirmed_fact_fires(
    open_agent: Open, model_year: int, between: int, fires: bool
) -> None:
    # the model's only call is the reading of 第1季度's year (the fill step); the turns between
    # (谢谢) are answered without it
    agent = open_agent([_read(model_year)])
    agent.turn("u1", "s1", "查一下2024年第2季度的财报")
    for _ in range(between):
        assert agent.turn("u1", "s1", "谢谢").attempts == 0
    reply = agent.turn("u1", "s1", "那第1季度的财报呢")
    assert reply.skills[0]["args"] == {"quarter": 1, "year": model_year}
    assert learn_step(agent, reply.trace_id)["triggers"] == (["contradiction"] if fires else [])
    if fires:
        (entry,) = log(agent)
        assert entry.hypothesis == f"year应为用户已确认的2024，本轮却用了{model_year}"
        assert entry.correction == {"year": "2024"}
        assert [e.type for e in entry.evidence] == ["user_input", "tool_call"]


def test_a_value_the_user_gives_anew_is_a_change_of_mind_not_a_contradiction(
    open_agent: Open,
) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下2024年第2季度的财报")
    agent.turn("u1", "s1", "查一下2025年第1季度的财报")
    assert log(agent) == []


def test_a_value_the_model_reads_from_the_input_is_the_user_s(open_agent: Open) -> None:
    # 前年 said in 2026 is 2024: the model read what the user said, no contradiction with the
    # 2025 confirmed a turn before
    agent = open_agent(['{"year": 2024, "quarter": null}'])
    agent.turn("u1", "s1", "查一下2025年第2季度的财报")
    reply = agent.turn("u1", "s1", "那前年第1季度的财报呢")
    assert reply.skills[0]["args"] == {"quarter": 1, "year": 2024}
    assert log(agent) == []


# ---- external validation ------------------------------------------------------------------------


def test_a_result_refused_by_the_output_contract_fires(open_agent: Open) -> None:
    agent = open_agent(skill=Boasting())
    reply = agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert reply.skills[0]["failure"] == "contract_violation"
    (entry,) = log(agent)
    assert (entry.trigger, entry.skill) == ("rejection", "account_balance")
    assert entry.hypothesis.startswith("技能account_balance的结果未通过校验：")
    assert [e.type for e in entry.evidence] == ["user_input", "tool_call"]


def test_the_rejection_trigger_can_be_switched_off(open_agent: Open) -> None:
    agent = open_agent(skill=Boasting(), triggers=Triggers(rejection=False))
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    assert log(agent) == []


# ---- healthy turns ------------------------------------------------------------------------------


def test_healthy_turns_never_reflect(open_agent: Open) -> None:
    # assisted, so that the last turn is a model answer (a confident one)
    agent = open_agent([_answer(-0.2)], mode="assisted")
    for text in (
        "查一下尾号1234的余额",
        "我有10万元想买理财，稳健一点",
        "查一下2025年第1季度的财报",
        "帮我给张三转账500元",
        OPEN,
    ):
        reply = agent.turn("u1", "s1", text)
        assert learn_step(agent, reply.trace_id)["triggers"] == [], text
    assert reply.answered_by == "model"
    assert log(agent) == []


# ---- what the review found ----------------------------------------------------------------------


def test_a_threshold_of_one_reflects_on_the_first_failure(open_agent: Open) -> None:
    agent = open_agent(skill=Broken(), triggers=Triggers(skill_failures=1))
    agent.turn("u1", "s1", "查一下尾号1234的余额")
    (entry,) = log(agent)
    assert [e.type for e in entry.evidence] == ["user_input", "tool_call"]


def test_an_outage_is_one_reflection_per_streak_not_one_per_turn(open_agent: Open) -> None:
    agent = open_agent(skill=Broken())
    for n in range(5):
        agent.turn("u1", "s1", f"第{n + 1}次查尾号1234的余额")
    assert [e.id for e in log(agent)] == ["R-000001", "R-000002"]  # failures 2 and 4


def test_the_user_s_words_are_stored_scrubbed(open_agent: Open) -> None:
    agent = open_agent()
    agent.turn("u1", "s1", "查一下尾号1234的余额，我的手机13812345678")
    agent.turn("u1", "s1", "不对，手机号是13987654321，重新来")
    (entry,) = log(agent)
    stored = str(entry.as_dict())
    assert "13812345678" not in stored and "13987654321" not in stored
    assert "[PHONE]" in entry.evidence[0].content and "[PHONE]" in entry.evidence[2].content


def test_a_question_for_a_slot_the_model_could_not_read_is_asked(open_agent: Open) -> None:
    agent = open_agent(['{"year": 2025, "quarter": null}'])
    reply = agent.turn("u1", "s1", "给我去年的财报")
    # the model read the year (the fill step, its only call); the quarter it could not read is
    # the slot question, told by its template
    assert (reply.verdict, reply.answered_by, reply.responses, reply.text) == (
        "ask",
        "template",
        ("builtin.slot_asked#2",),
        "请问要查询第几季度？",
    )
    assert [e["kind"] for e in reply.events] == ["slot_asked"]
    assert reply.events[0]["slot"] == "quarter"
    assert reply.goals[0]["description"] == "查询2025年第？季度的业绩"
