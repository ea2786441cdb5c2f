"""Acceptance (issue 17, points 3 and 4): the facts a conversation leaves, through ``Agent.turn``
with every layer real (SQLite file, the shipped packs, the reference skills).

* A slot's fact is keyed by its intent (or the ``memory_key`` goals.yaml declares): the wealth
  question's 10万 no longer supersedes the transfer's 5000, and a later transfer turn recalls
  ``transfer.amount：5000``.
* A slot's fact is stored as memory.yaml's ``slot_facts`` says: finance's payee, amount and card
  are ``account_fact`` (L2), so encrypted; none of their values is in the fact tables in clear.
  A default the user did not say is ``inferred`` (lower confidence, shorter validity); a field a
  skill's result kept is ``system_verified``.
* What the user says of themselves is remembered as memory.yaml's ``statements`` declare:
  我对青霉素过敏 becomes ``allergy`` (L3, encrypted, doctors only, with consent) and a 用药咨询
  recalls it for a doctor, not for another role.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.agent import Agent, Reply
from charter.llm.scripted import ScriptedLLM
from charter.memory.records import Accessor, Fact

KEY = base64.b64encode(bytes(range(32))).decode()
NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)
Open = Callable[[str], Agent]


@pytest.fixture
def open_agent(tmp_path: Path) -> Iterator[Open]:
    made: list[Agent] = []

    def open_(domain: str) -> Agent:
        db = tmp_path / f"{domain}.db"
        db.touch()
        agent = Agent.from_pack(
            domain,
            llm=ScriptedLLM([], default="好的。"),
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
            clock=lambda: NOW,
        )
        made.append(agent)
        return agent

    yield open_
    for agent in made:
        agent.close()


def facts(agent: Agent, user: str) -> dict[str, Fact]:
    listed = agent.parts.facts.list_facts(Accessor(user, "test", role="admin"))
    return {f.key: f for f in listed}


def revealed(agent: Agent, user: str) -> dict[str, str]:
    return {k: agent.parts.pipeline.reveal(f) for k, f in facts(agent, user).items()}


def recalled(agent: Agent, reply: Reply) -> list[str]:
    """The facts the turn's recall step put before the answer (key：value)."""
    assert agent.parts.traces is not None and reply.trace_id is not None
    trace = agent.parts.traces.get(reply.trace_id)
    assert trace is not None
    outputs: dict[str, Any] = next(dict(s.outputs) for s in trace.steps if s.name == "recall")
    return list(outputs["facts"])


def fact_rows(agent: Agent) -> list[str]:
    """Every row of the fact channel's tables (facts and their audit trail), as text."""
    out = []
    with agent.parts.facts.engine.connect() as conn:
        for table in ("memory_fact", "memory_audit"):
            rows = conn.execute(sa.text(f"SELECT * FROM {table}")).all()
            out += [" ".join(str(v) for v in row) for row in rows]
    return out


# ---- facts collide no more -----------------------------------------------------------------------


def test_the_transfer_amount_and_the_wealth_amount_are_two_facts(open_agent: Open) -> None:
    agent = open_agent("finance")
    agent.turn("u1", "s1", "给张三转账5000元")
    agent.turn("u1", "s1", "想用10万元买一年期的稳健型理财")
    held = revealed(agent, "u1")
    assert (held["transfer.amount"], held["transfer.payee"]) == ("5000", "张三")
    assert (held["wealth-product.amount"], held["wealth-product.risk"]) == ("100000", "稳健")
    assert "amount" not in held
    # the yes to the transfer recalls the transfer's amount, not the last amount said
    reply = agent.turn("u1", "s1", "是")
    # (the serial number depends on what the shared demo ledger did before)
    assert "已向张三转账¥5,000.00（伍仟元整），付款卡尾号1234，交易流水号TR-20240501-" in reply.text
    assert recalled(agent, reply) == ["transfer.amount：5000", "transfer.payee：张三"]


def test_a_card_remembered_by_a_transfer_is_the_card_of_a_later_balance(
    open_agent: Open,
) -> None:
    # account-query and transfer declare memory_key: card_tail: one fact for both
    agent = open_agent("finance")
    agent.turn("u1", "s1", "从尾号5678的卡给张三转账100元")
    reply = agent.turn("u1", "s2", "上次那张卡现在余额多少")
    assert reply.text.startswith("按您上次查询的尾号5678的卡为您查询。")


# ---- facts governed by memory.yaml ---------------------------------------------------------------


def test_finance_slot_values_are_stored_encrypted_as_account_facts(open_agent: Open) -> None:
    agent = open_agent("finance")
    agent.turn("u1", "s1", "从尾号6789的卡给王建国转账38600元")
    held = facts(agent, "u1")
    assert sorted(held) == ["card_tail", "transfer.amount", "transfer.payee"]
    for fact in held.values():
        assert (fact.memory_type, fact.level, fact.encrypted) == ("account_fact", "L2", True)
        assert (fact.source, fact.confidence) == ("user_confirmed", 1.0)
        assert fact.valid_until == NOW + timedelta(days=365)
    assert revealed(agent, "u1") == {
        "card_tail": "6789",
        "transfer.amount": "38600",
        "transfer.payee": "王建国",
    }
    rows = fact_rows(agent)
    assert rows
    for value in ("王建国", "38600", "6789"):
        assert not [row for row in rows if value in row], value


def test_a_default_the_user_did_not_say_is_inferred(open_agent: Open) -> None:
    agent = open_agent("finance")
    agent.turn("u1", "s1", "查账户尾号1234")
    item = facts(agent, "u1")["account-query.item"]
    assert (item.value, item.source, item.confidence, item.memory_type) == (
        "余额",
        "inferred",
        0.6,
        "query",
    )
    # the shorter of the type's 30 d and an inferred value's 7 d × (1 - 0.6)
    assert item.valid_until == NOW + timedelta(days=2.8)


def test_a_field_a_skill_kept_is_system_verified(open_agent: Open) -> None:
    agent = open_agent("ecommerce")
    agent.turn("u1", "s1", "帮我查一下订单DD202405070007")
    held = facts(agent, "u1")
    coupon, order = held["order-query.order_coupon"], held["order_id"]
    assert (coupon.value, coupon.source, coupon.confidence) == ("USED30", "system_verified", 0.9)
    assert (order.source, order.memory_type, order.encrypted) == (
        "user_confirmed",
        "order_fact",
        False,
    )


# ---- statements ----------------------------------------------------------------------------------


def test_an_allergy_said_in_chat_is_recalled_for_a_doctor(open_agent: Open) -> None:
    agent = open_agent("medical")
    agent.turn("u1", "s1", "我对青霉素过敏", role="doctor", consent="app_v1")
    allergy = facts(agent, "u1")["allergy"]
    assert (allergy.memory_type, allergy.level, allergy.encrypted) == ("allergy", "L3", True)
    assert (allergy.intent_type, allergy.consent_source) == ("medication", "app_v1")
    assert agent.parts.pipeline.reveal(allergy) == "青霉素"
    assert not [row for row in fact_rows(agent) if "青霉素" in row]
    asked = "阿莫西林一次吃几片"
    reply = agent.turn("u1", "s2", asked, role="doctor", consent="app_v1")
    assert [g["intent"] for g in reply.goals] == ["medication"]
    assert recalled(agent, reply) == ["allergy：青霉素"]
    # another role does not see it (the drug asked about in s2 it may)
    reply = agent.turn("u1", "s3", asked, role="agent", consent="app_v1")
    assert recalled(agent, reply) == ["medication.drug：阿莫西林"]


def test_a_health_statement_needs_the_user_s_consent(open_agent: Open) -> None:
    agent = open_agent("medical")
    agent.turn("u2", "s1", "我对青霉素过敏，而且我有高血压", role="doctor")
    assert "allergy" not in facts(agent, "u2")
    agent.turn("u2", "s1", "我对青霉素过敏，而且我有高血压", role="doctor", consent="app_v1")
    assert {k: v for k, v in revealed(agent, "u2").items() if "." not in k} == {
        "allergy": "青霉素",
        "chronic_disease": "高血压",
    }


def test_a_negated_statement_is_not_remembered(open_agent: Open) -> None:
    agent = open_agent("medical")
    agent.turn("u3", "s1", "我对青霉素不过敏", role="doctor", consent="app_v1")
    assert "allergy" not in facts(agent, "u3")
