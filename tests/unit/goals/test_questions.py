"""What a question asks for (charter.goals.questions): its kinds from its question words, and
whether it also asks the agent to do something."""

from __future__ import annotations

import pytest

from charter.goals.questions import FACTS, asks_for, kinds, kinds_of


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("挂号费多少", {"how much"}),
        ("一盒几块钱", {"how much"}),
        ("报告多久能出来", {"when"}),
        ("多少天能到", {"when"}),  # 多少 of a duration is no price
        ("哪天到期", {"when"}),
        ("停车场在哪", {"where"}),
        ("快递到哪了", {"where"}),
        ("头疼怎么办", {"how"}),
        ("怎么还款", {"how"}),  # 还 of a debt: a question of method
        ("快递怎么还没到", {"why"}),
        ("我的包裹怎么三天没更新了", {"why"}),  # a stretch of time before the negation
        ("咋又扣钱了", {"why"}),
        ("快递怎么还没到，怎么投诉", {"why", "how"}),
        ("挂哪个科", {"which"}),
        ("钱是谁转的", {"who"}),
        ("能帮我挂个号吗", set()),  # a yes/no question: a polite request
        ("还有号吗", set()),
        ("帮我挂明天的号", set()),
        ("ＡＬＴ８０算高吗", set()),
    ],
)
def test_the_kinds_of_a_question(text: str, expected: set[str]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("帮我挂个号，挂号费多少", True),
        ("麻烦问下报告多久出", True),
        ("我想挂号，多少钱", True),
        ("转账记录在哪里看", True),  # where to see it: show it
        ("物流哪里能查", True),
        ("我想问下挂号费多少", False),  # 我想问 asks, it does not request
        ("请问挂号费多少", False),
        ("挂号费多少", False),
        ("怎么申请退货", False),  # 申请 is a word, no 请 of politeness
        ("请帮我看看退款几天到", True),
    ],
)
def test_a_request_beside_a_question(text: str, expected: bool) -> None:
    assert asks_for(text) is expected


def test_facts_are_price_time_and_place() -> None:
    assert {"how much", "when", "where"} == FACTS
    assert kinds_of(["余额还有多少", "快递到哪了", "帮我查下"]) == {"how much", "where"}
