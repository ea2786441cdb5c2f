"""The shared pool in an agent (charter.agent.shared, docs/memory.md §8): the configuration
builds it, ``Parts.build`` opens it, a turn reads the shared facts it names after the user's
own memories — the trace and ``memories_used`` say so — and writes the values of the slots
``shared_keys`` lists, only with the user's consent and never personal data, every read and
write in the user's audit trail."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError

from charter.agent import Agent, Reply
from charter.agent import shared as agent_shared
from charter.agent.configured import agent_options
from charter.agent.parts import AgentOptions
from charter.agent.steps import Planned
from charter.compile.specs.memory import MemoryPolicy
from charter.config import load_config
from charter.llm.scripted import ScriptedLLM
from charter.memory.records import Accessor
from charter.memory.shared import SharedMemory, SharedSettings
from charter.plugins.host import default_registry

KEY = b"k" * 32
NOW = datetime.fromisoformat("2025-06-30T10:00:00+08:00")
Make = Callable[..., Agent]


@pytest.fixture
def pool_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'shared.db'}"


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[Make]:
    made: list[Agent] = []
    reg, _ = default_registry()

    def make(domain: str = "ecommerce", shared: SharedSettings | None = None) -> Agent:
        agent = Agent.from_pack(
            domain,
            llm=ScriptedLLM(default="好的"),
            database_url=f"sqlite:///{tmp_path / f'{domain}-{len(made)}.db'}",
            memory_key=KEY,
            registry=reg,
            clock=lambda: NOW,
            options=AgentOptions(shared=shared),
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def step(agent: Agent, reply: Reply, name: str) -> Any:
    assert agent.parts.traces is not None and reply.trace_id is not None
    trace = agent.parts.traces.get(reply.trace_id)
    assert trace is not None
    return next(s for s in trace.steps if s.name == name)


def audit(agent: Agent, user: str) -> list[tuple[str, str | None, bool, str]]:
    rows = agent.parts.facts.audit_trail(Accessor(user, "test", role="admin"))
    return [
        (r.action, r.memory_id, r.allowed, r.reason)
        for r in rows
        if (r.memory_id or "").startswith("shared:") or "share" in r.reason
    ]


# ---- configuration ----------------------------------------------------------------------


def test_the_configuration_gives_the_agent_its_pool(tmp_path: Path) -> None:
    (tmp_path / "charter.toml").write_text(
        '[memory]\nshared_namespace = "acme-support"\nshared_keys = "coupon, price-query.product"\n',
        encoding="utf-8",
    )
    config, diags = load_config(tmp_path, {})
    assert diags == []
    assert agent_options(config).shared is None  # no URL: no pool
    env = {"CHARTER_SHARED_MEMORY_URL": "postgresql://db/shared"}
    config, diags = load_config(tmp_path, env)
    assert diags == []
    assert config.source("memory.shared_url") == "env CHARTER_SHARED_MEMORY_URL"
    assert agent_options(config).shared == SharedSettings(
        "postgresql://db/shared", "acme-support", frozenset({"coupon", "price-query.product"})
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'shared_url = "mysql://db/x"',
            "CH404 memory.shared_url names an unsupported database 'mysql'",
        ),
        (
            'shared_namespace = "Acme Support"',
            "CH403 memory.shared_namespace must be a name such as 'acme-support', "
            "not 'Acme Support'",
        ),
        (
            'shared_keys = "coupon, 优惠券"',
            "CH403 memory.shared_keys must list slots such as 'price-query.product, coupon', "
            "not 'coupon, 优惠券'",
        ),
    ],
)
def test_a_bad_setting_is_a_diagnostic(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "charter.toml").write_text(f"[memory]\n{line}\n", encoding="utf-8")
    _, diags = load_config(tmp_path, {})
    assert [f"{d.code} {d.message}" for d in diags] == [message]
    assert [d.location.line for d in diags] == [2]


def test_the_password_of_the_pool_url_is_masked(tmp_path: Path) -> None:
    env = {"CHARTER_SHARED_MEMORY_URL": "postgresql://u:s3cret@db/shared"}
    config, _ = load_config(tmp_path, env)
    assert "s3cret" not in repr(config.memory)
    assert config.masked()["memory"]["shared_url"] == "postgresql://u:***@db/shared"


def test_parts_open_the_pool_and_close_it(agents: Make, pool_url: str) -> None:
    assert agents().parts.shared is None
    agent = agents(shared=SharedSettings(pool_url, "acme", frozenset({"coupon"})))
    pool = agent.parts.shared
    assert pool is not None and pool.namespace == "acme"
    assert agent.parts.shared_keys == frozenset({"coupon"})


# ---- reading ------------------------------------------------------------------------------


def test_a_turn_reads_the_shared_facts_it_names(agents: Make, pool_url: str) -> None:
    with SharedMemory(pool_url, namespace="acme") as ops:
        ops.put("保温杯", "已停产，库存售完不再补货", updated_by="ops:alice")
        ops.put("智能手表", "新品上市", updated_by="ops:alice")
    agent = agents(shared=SharedSettings(pool_url, "acme"))
    reply = agent.turn("u1", "s1", "保温杯多少钱")
    assert reply.memories_used == ("shared:保温杯@v1",)
    recall = step(agent, reply, "recall")
    assert recall.decision == "ladder: shared"
    assert recall.outputs["reason"] == "shared pool: 保温杯"
    assert recall.outputs["shared"] == {
        "facts": [
            {"key": "保温杯", "value": "已停产，库存售完不再补货", "version": 1, "by": "ops:alice"}
        ]
    }
    assert audit(agent, "u1") == [("read", "shared:保温杯@v1", True, "shared 保温杯")]


def test_the_users_own_memory_answers_first(agents: Make, pool_url: str) -> None:
    with SharedMemory(pool_url, namespace="acme") as ops:
        ops.put("240107123456789", "该批订单因暴雨延迟发货", updated_by="ops")
    agent = agents(shared=SharedSettings(pool_url, "acme"))
    agent.turn("u1", "s1", "帮我查一下订单240107123456789")
    reply = agent.turn("u1", "s1", "订单240107123456789到哪了")
    recall = step(agent, reply, "recall")
    assert recall.outputs["step"] == "entity"  # the user's fact answered ...
    assert [f["key"] for f in recall.outputs["shared"]["facts"]] == ["240107123456789"]
    assert reply.memories_used[-1] == "shared:240107123456789@v1"  # ... and the pool after it


def test_a_role_the_policy_restricts_does_not_see_the_key(agents: Make, pool_url: str) -> None:
    with SharedMemory(pool_url, namespace="acme") as ops:
        ops.put("保温杯进价", "32元", updated_by="ops")
    agent = agents(shared=SharedSettings(pool_url, "acme"))
    policy = MemoryPolicy(roles={"保温杯进价": frozenset({"buyer"})})
    parts = dataclasses.replace(agent.parts, policy=policy)
    planned = Planned(None, "s1", user_id="u1")
    got = agent_shared.recall(parts, Accessor("u1", "agent"), "保温杯进价多少", planned)
    assert (got.facts, got.hidden) == ((), ("保温杯进价",))
    seen = agent_shared.recall(
        parts, Accessor("u2", "agent", role="buyer"), "保温杯进价多少", planned
    )
    assert seen.texts() == ["保温杯进价：32元"]
    assert audit(agent, "u1") == [
        ("deny", None, False, "read shared 保温杯进价: role agent"),
    ]


def test_an_unreachable_pool_leaves_the_turn_to_the_users_memory(
    agents: Make, pool_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = agents(shared=SharedSettings(pool_url, "acme"))

    def down(*_: object) -> None:
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    monkeypatch.setattr(agent.parts.shared, "mentioned", down)
    reply = agent.turn("u1", "s1", "保温杯多少钱")
    assert "89.90" in reply.text
    assert step(agent, reply, "recall").outputs["shared"] == {
        "facts": [],
        "error": "the shared pool could not be read (OperationalError)",
    }


# ---- writing ------------------------------------------------------------------------------


def test_a_shareable_slot_is_shared_with_consent_and_without_the_user(
    agents: Make, pool_url: str
) -> None:
    agent = agents(shared=SharedSettings(pool_url, "acme", frozenset({"coupon"})))
    reply = agent.turn("u1", "s1", "满300减30的优惠券怎么用", consent="app_v3.2")
    memory = step(agent, reply, "memory").outputs
    assert memory["shared"] == ["coupon"]
    assert audit(agent, "u1") == [("write", "shared:coupon@v1", True, "shared coupon")]
    engine = sa.create_engine(pool_url)
    with engine.connect() as conn:
        rows = [
            tuple(r)
            for r in conn.execute(sa.text("SELECT key, value, updated_by FROM memory_shared"))
        ]
    engine.dispose()
    assert rows == [("acme\x1fcoupon", "满300减30", "ecommerce:agent")]
    assert "u1" not in json.dumps(rows)
    # another user of the same pool reads it when the turn is about that slot
    other = agent.turn("u2", "s2", "优惠券怎么领")
    assert other.memories_used == ("shared:coupon@v1",)


def test_without_consent_nothing_is_shared(agents: Make, pool_url: str) -> None:
    agent = agents(shared=SharedSettings(pool_url, "acme", frozenset({"coupon"})))
    reply = agent.turn("u1", "s1", "满300减30的优惠券怎么用")
    assert step(agent, reply, "memory").outputs["shared_refused"] == ["coupon"]
    assert agent.parts.shared.facts() == ()  # type: ignore[union-attr]
    assert audit(agent, "u1") == [
        ("deny", None, False, "share coupon: the turn carries no consent of the user")
    ]


def test_personal_data_is_never_shared(agents: Make, pool_url: str) -> None:
    agent = agents("medical", SharedSettings(pool_url, "acme", frozenset({"registration.phone"})))
    reply = agent.turn("u1", "s1", "我要挂明天上午的内科，电话13812345678", consent="app_v3.2")
    assert step(agent, reply, "memory").outputs["shared_refused"] == ["registration.phone"]
    assert agent.parts.shared.facts() == ()  # type: ignore[union-attr]
    assert audit(agent, "u1") == [
        ("deny", None, False, "share registration.phone: personal data: phone")
    ]


def test_forget_leaves_the_pool_which_holds_nothing_of_the_user(
    agents: Make, pool_url: str
) -> None:
    agent = agents(shared=SharedSettings(pool_url, "acme", frozenset({"coupon"})))
    agent.turn("u1", "s1", "满300减30的优惠券怎么用", consent="app_v3.2")
    agent.forget("u1")
    assert [f.key for f in agent.parts.shared.facts()] == ["coupon"]  # type: ignore[union-attr]
