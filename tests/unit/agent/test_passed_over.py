"""A question for a slot says what became of personal data the input gave for it (issue 16):
a broad regex passes a card number over (it reaches no goal), and the user is told so instead
of being asked as if they had said nothing."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from charter.agent import Agent
from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM

GOALS = """\
intents:
  - id: refund
    describe: 退款
    trigger: input contains "退款"
    slots:
      - name: order_id
        regex: (?<![0-9])(?P<value>[0-9]{12,20})(?![0-9])
        required: true
        ask: 请提供订单号。
        label: 订单号
    description: 订单{order_id}退款
"""


@pytest.fixture
def agent(tmp_path: Path, registry: Registry) -> Agent:
    pack_dir = tmp_path / "pack"
    pack_dir.mkdir()
    (pack_dir / "pack.yaml").write_text("name: shop\nversion: 0.1.0\n", encoding="utf-8")
    (pack_dir / "goals.yaml").write_text(GOALS, encoding="utf-8")
    pack, diags = compile_path(pack_dir, registry, cache_dir=None)
    assert pack is not None, diags
    assert [d.code for d in diags] == ["CH308"]  # the regex would take card numbers
    return Agent.from_pack(
        pack,
        llm=ScriptedLLM(default="好的"),
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        memory_key=base64.b64encode(bytes(range(32))).decode(),
        registry=registry,
    )


@pytest.mark.parametrize(
    ("turns", "reply"),
    [
        (
            ["退款请打到我的银行卡6222026815398387"],
            "为保护您的信息安全，银行卡号不会用作订单号。请提供订单号。",
        ),
        (["我要退款，订单202405070007"], None),  # an order number is taken: nothing to ask
        (
            ["我要退款", "我的手机号是13812345678"],  # not meant as the answer: nothing to tell
            "抱歉，这个问题我暂时无法回答。我可以帮您办理退款；如需人工服务，请说“转人工”。\n"
            "我们继续刚才的退款：请提供订单号。",
        ),
        (
            ["我要退款", "１３８　１２３４　５６７８"],
            "我们继续刚才的退款：为保护您的信息安全，手机号不会用作订单号。请提供订单号。",
        ),
    ],
)
def test_a_question_tells_what_was_passed_over(
    agent: Agent, turns: list[str], reply: str | None
) -> None:
    for text in turns:
        last = agent.turn("u1", "s1", text)
    if reply is None:
        assert "请提供订单号" not in last.text
    else:
        assert last.text == reply
