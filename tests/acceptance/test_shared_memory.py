"""Acceptance (issue 17, point 8): the shared pool (seed 000 §6.1) used by agents built from the
configuration, as ``charter chat`` and ``charter serve`` build theirs, and by ``charter serve``
itself over HTTP.

Two agents with their own databases and the same ``[memory] shared_url`` and namespace share
global facts: what an operator published answers a user of either (the trace says the pool
answered), and a value of a shareable slot one user gave with consent is read by another user
of the other agent. A third agent without ``shared_url``, and a fourth in another namespace,
see nothing. On PostgreSQL the second agent listens: the first one's write reaches its cache
through NOTIFY (a listening cache never expires, so nothing else could refresh it).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.agent import Agent
from charter.agent.configured import agent_from_config
from charter.config import load_config
from charter.llm.scripted import ScriptedLLM
from charter.memory.shared import SharedMemory
from tests.support.console import free_port, serving
from tests.support.paths import ROOT
from tests.support.postgres import fresh_schema

# slow: agents in several processes and charter serve in a subprocess (3-5 s each)
pytestmark = pytest.mark.slow

KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="  # bytes 0..31, base64
MakeAgent = Callable[..., Agent]


@pytest.fixture(params=["sqlite", "postgresql"])
def pool_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
        return
    with fresh_schema("charter_shared") as url:
        yield url


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[MakeAgent]:
    """``configured(name, memory_toml)``: an agent built by ``agent_from_config`` from a
    charter.toml of its own directory (its own SQLite database)."""
    made: list[Agent] = []

    def make(name: str, memory: str = "") -> Agent:
        home = tmp_path / name
        home.mkdir()
        (home / "charter.toml").write_text(
            f'[database]\nurl = "sqlite:///{home / "charter.db"}"\n'
            f'[agent]\ndomain = "ecommerce"\n[memory]\n{memory}',
            encoding="utf-8",
        )
        config, diags = load_config(home, {"CHARTER_MEMORY_KEY": KEY})
        assert [d for d in diags if d.is_error] == []
        agent = agent_from_config(
            config, llm=ScriptedLLM(default="好的"), environ={}, narrative=False
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def recall_of(agent: Agent, trace_id: str | None) -> dict[str, Any]:
    assert agent.parts.traces is not None and trace_id is not None
    trace = agent.parts.traces.get(trace_id)
    assert trace is not None
    return dict(next(s.outputs for s in trace.steps if s.name == "recall"))


def test_agents_of_one_pool_share_and_the_others_see_nothing(
    configured: MakeAgent, pool_url: str
) -> None:
    shared = f'shared_url = "{pool_url}"\nshared_namespace = "acme"\nshared_keys = "coupon"\n'
    sales = configured("sales", shared)
    support = configured("support", shared)
    alone = configured("alone")
    globex = configured("globex", f'shared_url = "{pool_url}"\nshared_namespace = "globex"\n')
    assert alone.parts.shared is None
    pg = pool_url.startswith("postgresql")
    # PostgreSQL: charter's agents listen, and a listening cache never expires (notifications
    # keep it current); SQLite: no broadcast, the cache expires after max_age_s
    assert support.parts.shared.listening is pg  # type: ignore[union-attr]
    if pg:
        assert support.parts.shared.facts() == ()  # type: ignore[union-attr]  # cached: empty

    with SharedMemory(pool_url, namespace="acme") as ops:
        ops.put("保温杯", "已停产，库存售完不再补货", updated_by="ops:alice")
    if pg:
        wait_for(lambda: support.parts.shared.facts())  # type: ignore[union-attr]

    for agent, user in ((sales, "u1"), (support, "u2")):
        reply = agent.turn(user, f"{user}-s", "保温杯多少钱")
        assert reply.memories_used == ("shared:保温杯@v1",)
        recall = recall_of(agent, reply.trace_id)
        assert (recall["step"], recall["reason"]) == ("shared", "shared pool: 保温杯")
        assert recall["shared"]["facts"] == [
            {"key": "保温杯", "value": "已停产，库存售完不再补货", "version": 1, "by": "ops:alice"}
        ]

    # a shareable slot's value, given with consent in one agent, read by another's user
    sales.turn("u1", "u1-s", "满300减30的优惠券怎么用", consent="app_v3.2")
    # PostgreSQL: the notification refreshes support's cache; SQLite: its cached listing
    # expires after max_age_s (5 s by default) and is read again
    wait_for(lambda: len(support.parts.shared.facts()) == 2)  # type: ignore[union-attr]
    reply = support.turn("u3", "u3-s", "优惠券怎么领")
    assert reply.memories_used == ("shared:coupon@v1",)
    assert recall_of(support, reply.trace_id)["shared"]["facts"] == [
        {"key": "coupon", "value": "满300减30", "version": 1, "by": "ecommerce:agent"}
    ]

    for agent in (alone, globex):
        for text in ("保温杯多少钱", "优惠券怎么领"):
            reply = agent.turn("u9", "u9-s", text)
            assert reply.memories_used == ()
            assert "已停产" not in json.dumps(recall_of(agent, reply.trace_id), ensure_ascii=False)


def wait_for(ready: Callable[[], object], seconds: float = 10) -> None:
    """Until the cache shows the write (on PostgreSQL only a notification can do it, as the
    cache never expires within the test)."""
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, "no notification refreshed the cache"
        time.sleep(0.05)


# ---- charter serve -----------------------------------------------------------------------

TOKEN = "acme-token-5f1d2c"


def call(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
    request = urllib.request.Request(
        url + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture
def served(tmp_path: Path, charter_cache_dir: Path) -> Iterator[tuple[str, str]]:
    """A ``charter serve`` process whose configuration names a shared pool; (URL, pool URL)."""
    port = free_port()
    pool = f"sqlite:///{tmp_path / 'shared.db'}"
    (tmp_path / "charter.toml").write_text(
        f"""\
[database]
url = "sqlite:///{tmp_path / "charter.db"}"
[memory]
narrative_path = "{tmp_path / "narrative"}"
shared_url = "{pool}"
shared_namespace = "acme"
shared_keys = "coupon"
[model]
backend = "scripted"
[model.options]
default = "好的"
[agent]
domain = "{ROOT / "domains" / "ecommerce"}"
[serve]
port = {port}
[[serve.tenants]]
name = "acme"
token_env = "TOKEN_ACME"
""",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARTER_")}
    env.update(
        TOKEN_ACME=TOKEN,
        CHARTER_MEMORY_KEY=KEY,
        CHARTER_CACHE_DIR=str(charter_cache_dir),
        PYTHONIOENCODING="utf-8",
    )
    log = tmp_path / "server.log"
    url = f"http://127.0.0.1:{port}"
    with serving(tmp_path, env, url, log):
        yield url, pool


def test_charter_serve_reads_and_writes_the_configured_pool(served: tuple[str, str]) -> None:
    url, pool = served
    with SharedMemory(pool, namespace="acme") as ops:
        ops.put("保温杯", "已停产，库存售完不再补货", updated_by="ops:alice")

    status, reply = call(
        url, "POST", "/v1/turns", {"user_id": "u1", "session_id": "s1", "text": "保温杯多少钱"}
    )
    assert status == 200, reply
    assert reply["memories_used"] == ["shared:保温杯@v1"]
    status, trace = call(url, "GET", f"/v1/traces/{reply['trace_id']}")
    assert status == 200, trace
    (recall,) = [s for s in trace["steps"] if s["name"] == "recall"]
    assert recall["decision"] == "ladder: shared"
    assert recall["outputs"]["shared"]["facts"][0]["value"] == "已停产，库存售完不再补货"

    body = {"user_id": "u2", "session_id": "s2", "text": "满300减30的优惠券怎么用"}
    status, reply = call(url, "POST", "/v1/turns", {**body, "consent": "app_v3.2"})
    assert status == 200, reply
    engine = sa.create_engine(pool)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT key, value, updated_by FROM memory_shared ORDER BY key")
            ).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [
        ("acme\x1fcoupon", "满300减30", "ecommerce:agent"),
        ("acme\x1f保温杯", "已停产，库存售完不再补货", "ops:alice"),
    ]
