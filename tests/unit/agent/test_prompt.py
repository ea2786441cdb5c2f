"""Prompt assembly by the distillation template: sections, order, the three-fact cap, line
cuts, and what goes first when the budget is short."""

from __future__ import annotations

import pytest

from charter.agent.prompt import MAX_LINE, PromptParts, assemble
from charter.agent.reply import ReflectionRecord, is_negation
from charter.contracts.models import Message


def chars(text: str) -> int:
    return len(text)


FULL = PromptParts(
    query="我的订单到哪了",
    profile=("尺码偏好：M",),
    task=("查询订单DD202405010001的物流",),
    facts=("order_id：DD202405010001", "收货城市：杭州", "常用快递：顺丰", "第四条"),
    skills=("订单由顺丰速运配送，运输中",),
    summaries=("问订单状态", "问发货时间"),
)


def test_every_section_in_order() -> None:
    p = assemble(FULL, intro="你是客服。", budget=10_000, count=chars)
    assert p.messages == (
        Message("system", "你是客服。"),
        Message(
            "user",
            "【用户画像】尺码偏好：M\n"
            "【当前任务】查询订单DD202405010001的物流\n"
            "【关联记忆】order_id：DD202405010001；收货城市：杭州；常用快递：顺丰\n"
            "【技能结果】订单由顺丰速运配送，运输中\n"
            "【近期对话】问订单状态；问发货时间\n"
            "请基于以上信息回答：我的订单到哪了",
        ),
    )
    assert p.dropped == {"facts": 1}  # at most three key facts
    assert p.tokens == len("你是客服。") + len(p.messages[1].content)


def test_guidance_on_a_retry_and_a_default_task() -> None:
    p = assemble(
        PromptParts(query="你好", guidance=("不要编造用户过去说过的话",)),
        intro="i",
        budget=1000,
        count=chars,
    )
    assert p.messages[1].content == (
        "【当前任务】回答用户的问题\n【修改要求】不要编造用户过去说过的话\n请基于以上信息回答：你好"
    )


@pytest.mark.parametrize(
    ("budget", "dropped"),
    [
        (10_000, {"facts": 1}),
        (147, {"facts": 1}),  # exactly the whole prompt
        (146, {"facts": 1, "summaries": 1}),
        (140, {"facts": 1, "summaries": 2}),
        (128, {"facts": 1, "summaries": 2, "profile": 1}),
        (115, {"facts": 2, "summaries": 2, "profile": 1}),
        (107, {"facts": 3, "summaries": 2, "profile": 1}),
        (10, {"facts": 3, "summaries": 2, "profile": 1}),  # the rest is what the turn needs
    ],
)
def test_oldest_summaries_then_profile_then_facts_go_first(
    budget: int, dropped: dict[str, int]
) -> None:
    p = assemble(FULL, intro="你是客服。", budget=budget, count=chars)
    assert p.dropped == dropped
    body = p.messages[1].content
    assert "【当前任务】" in body and "【技能结果】" in body and body.endswith("我的订单到哪了")


def test_long_lines_are_cut_but_never_the_question() -> None:
    p = assemble(
        PromptParts(query="问" * 500, facts=("记" * 500,)), intro="", budget=100_000, count=chars
    )
    _, facts, query = p.messages[1].content.splitlines()
    assert facts == "【关联记忆】" + "记" * (MAX_LINE - 1) + "…"
    assert query == "请基于以上信息回答：" + "问" * 500  # the question is often at the end


@pytest.mark.parametrize(
    ("text", "negation"),
    [
        ("不对，不是这个", True),
        ("错了", True),
        ("重新来一遍", True),
        ("对的，谢谢", False),
        ("好的", False),
    ],
)
def test_negations(text: str, negation: bool) -> None:
    assert is_negation(text) is negation


def test_reflection_lines() -> None:
    r = ReflectionRecord(False, False, True, missing=("金额",), failed_rules=("date-format",))
    assert r.lines() == (
        "【目标对齐】N 缺少：金额",
        "【约束合规】N date-format",
        "【不确定性】高（用到了低置信度信息）",
    )
    assert ReflectionRecord(True, True, False).lines() == (
        "【目标对齐】Y",
        "【约束合规】Y",
        "【不确定性】低",
    )


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        ("【当前任务】查询订单？\n【技能结果】订单已发货\n您的订单已发货。", "您的订单已发货。"),
        ("请基于以上信息回答：我的订单到哪了\n运输中。", "运输中。"),
        ("您的订单已发货。", "您的订单已发货。"),
        ("【当前任务】查询订单？", ""),  # nothing but the prompt: no answer at all
        ("答案里提到【当前任务】也无妨", "答案里提到【当前任务】也无妨"),  # not at a line start
    ],
)
def test_echoed_prompt_lines_are_not_an_answer(output: str, kept: str) -> None:
    from charter.agent.judge import without_echo

    assert without_echo(output) == kept
