"""Acceptance (issue 7, acceptance 3): ``charter serve`` as a real uvicorn process — the
installed command, a charter.toml in a temporary directory, a SQLite file there, the scripted
backend through ``[model.options]`` — and 50 users talking to it at once, in two tenants.

Each user's messages carry their own order id (DD2024050100NN); afterwards every reply, trace,
goal and stored fact of a user may mention that id and no other: no cross-talk between the
concurrent turns, in working memory, short-term memory or the stores.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.console import free_port, serving
from tests.support.paths import ROOT

# slow: charter serve in a subprocess, 50 users over real HTTP (4-10 s each)
pytestmark = pytest.mark.slow

KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="  # bytes 0..31, base64
TOKENS = {"acme": "acme-token-5f1d2c", "globex": "globex-token-9a7e3b"}
USERS = 50
ORDER = re.compile(r"DD\d{12}")


@dataclass(frozen=True)
class Server:
    url: str
    log: Path


def call(server: Server, method: str, path: str, tenant: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
    request = urllib.request.Request(
        server.url + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {TOKENS[tenant]}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture
def server(tmp_path: Path, charter_cache_dir: Path) -> Iterator[Server]:
    port = free_port()
    (tmp_path / "charter.toml").write_text(
        f"""\
[database]
url = "sqlite:///{tmp_path / "charter.db"}"
[memory]
narrative_path = "{tmp_path / "narrative"}"
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
[[serve.tenants]]
name = "globex"
token_env = "TOKEN_GLOBEX"
""",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARTER_")}
    env.update(
        TOKEN_ACME=TOKENS["acme"],
        TOKEN_GLOBEX=TOKENS["globex"],
        CHARTER_MEMORY_KEY=KEY,
        CHARTER_CACHE_DIR=str(charter_cache_dir),
        PYTHONIOENCODING="utf-8",
    )
    log = tmp_path / "server.log"
    url = f"http://127.0.0.1:{port}"
    with serving(tmp_path, env, url, log):
        yield Server(url, log)


def user(n: int) -> tuple[str, str, str]:
    """(tenant, user id, order id) of user n: the tenants alternate."""
    return ("acme" if n % 2 == 0 else "globex", f"user-{n:02d}", f"DD2024050100{n:02d}")


def concurrently(server: Server, texts: dict[int, str]) -> dict[int, tuple[int, Any]]:
    """One turn per user, all released at once."""
    gate = threading.Barrier(len(texts))

    def one(n: int) -> tuple[int, Any]:
        tenant, uid, _ = user(n)
        gate.wait()
        body = {"user_id": uid, "session_id": f"{uid}-s", "text": texts[n]}
        return call(server, "POST", "/v1/turns", tenant, body)

    with ThreadPoolExecutor(max_workers=len(texts)) as pool:
        futures = {n: pool.submit(one, n) for n in texts}
        return {n: f.result() for n, f in futures.items()}


def orders_in(value: Any) -> set[str]:
    return set(ORDER.findall(json.dumps(value, ensure_ascii=False)))


def test_50_concurrent_users_without_cross_talk(server: Server) -> None:
    # the very first turns: the narrative table is empty, its indexes are made under this load
    first = concurrently(server, {n: f"帮我查一下订单{user(n)[2]}" for n in range(USERS)})
    # a follow-up without the id: what the agent recalls must be this user's order
    second = concurrently(server, {n: "这个订单现在到哪了？" for n in range(USERS)})

    for n in range(USERS):
        tenant, uid, order = user(n)
        for status, reply in (first[n], second[n]):
            assert status == 200, reply
            assert orders_in(reply) <= {order}, (uid, reply)
        assert order in first[n][1]["text"], first[n][1]
        assert orders_in(first[n][1]["goals"]) == {order}

        for _, reply in (first[n], second[n]):
            status, trace = call(server, "GET", f"/v1/traces/{reply['trace_id']}", tenant)
            assert status == 200, trace
            assert (trace["tenant"], trace["user_id"]) == (tenant, uid)
            assert orders_in(trace) <= {order}, (uid, trace["id"])

        status, goals = call(server, "GET", f"/v1/users/{uid}/goals", tenant)
        assert status == 200
        assert goals["goals"] and orders_in(goals) == {order}

        status, memory = call(server, "GET", f"/v1/users/{uid}/memory", tenant)
        assert status == 200
        values = [f["value"] for f in memory["facts"] if f["key"] == "order_id"]
        assert values == [order], (uid, memory)
        assert orders_in(memory) == {order}

        status, listed = call(server, "GET", f"/v1/traces?user_id={uid}", tenant)
        assert [t["id"] for t in listed["traces"]] == [
            second[n][1]["trace_id"],
            first[n][1]["trace_id"],
        ]

        other = "globex" if tenant == "acme" else "acme"
        assert call(server, "GET", f"/v1/users/{uid}/memory", other) == (
            404,
            {"error": {"code": "not_found", "message": f"no user '{uid}'"}},
        )

    status, health = call(server, "GET", "/v1/health", "acme")
    assert status == 200
    assert health["counts"] == {"turns": 2 * USERS, "turn_errors": 0, "in_flight": 0}
    assert (health["pack"]["name"], health["model"]["backend"]) == ("ecommerce", "scripted")


def test_isolation_and_forget_over_http(server: Server) -> None:
    body = {"user_id": "carol", "session_id": "s", "text": "帮我查一下订单DD202405010077"}
    status, reply = call(server, "POST", "/v1/turns", "acme", body)
    assert status == 200
    for method, path in (
        ("GET", "/v1/users/carol/memory/export"),
        ("GET", "/v1/users/carol/goals"),
        ("DELETE", "/v1/users/carol"),
    ):
        assert call(server, method, path, "globex")[0] == 404
    assert call(server, "GET", f"/v1/traces/{reply['trace_id']}", "globex")[0] == 404

    status, export = call(server, "GET", "/v1/users/carol/memory/export", "acme")
    assert status == 200
    assert [f["value"] for f in export["facts"]] == ["DD202405010077"]
    status, forgotten = call(server, "DELETE", "/v1/users/carol", "acme")
    assert (status, forgotten["deleted"]["facts"], forgotten["deleted"]["traces"]) == (200, 1, 1)
    assert call(server, "GET", "/v1/users/carol/memory", "acme") == (
        404,
        {"error": {"code": "not_found", "message": "no user 'carol'"}},
    )


def test_the_log_is_json_without_secrets_or_user_text(server: Server) -> None:
    body = {"user_id": "dave", "session_id": "s", "text": "帮我查一下订单DD202405010088"}
    assert call(server, "POST", "/v1/turns", "globex", body)[0] == 200
    assert call(server, "GET", "/v1/users/dave/memory", "globex")[0] == 200
    want = ("GET", "/v1/users/{user_id}/memory", 200, "globex")
    # the access line is written once the response has gone: wait for it, a while at most
    deadline = time.monotonic() + 10
    while True:
        text = server.log.read_text(encoding="utf-8")
        lines = [json.loads(line) for line in text.splitlines()]
        access = [
            (r["method"], r["path"], r["status"], r["tenant"])
            for r in lines
            if r["logger"] == "charter.serve.access"
        ]
        if want in access or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert ("POST", "/v1/turns", 200, "globex") in access
    assert ("GET", "/v1/users/{user_id}/memory", 200, "globex") in access
    for secret in (*TOKENS.values(), KEY, "DD202405010088", "帮我查"):
        assert secret not in text
