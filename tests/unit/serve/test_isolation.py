"""Tenant isolation: every user id is scoped to the caller's tenant. Tenant globex cannot read,
export, forget, or see the goals and traces of acme's users — they are 404s, exactly like
users who never existed — and the same user id in two tenants is two users."""

from __future__ import annotations

from typing import Any

import pytest

from charter.memory.records import Accessor
from tests.support.serve import TestClient, auth


def turn(client: TestClient, tenant: str, user: str, text: str) -> dict[str, Any]:
    r = client.post(
        "/v1/turns",
        json={"user_id": user, "session_id": f"{user}-s1", "text": text},
        headers=auth(tenant),
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def order_ids(client: TestClient, tenant: str, user: str) -> list[str]:
    r = client.get(f"/v1/users/{user}/memory", headers=auth(tenant))
    assert r.status_code == 200, r.text
    return [f["value"] for f in r.json()["facts"] if f["key"] == "order_id"]


NOT_FOUND = {"error": {"code": "not_found", "message": "no user 'alice'"}}


@pytest.fixture
def alice(client: TestClient) -> dict[str, Any]:
    """acme's user alice, after one turn about her order."""
    return turn(client, "acme", "alice", "帮我查一下订单DD202405010001")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/v1/users/alice/memory"),
        ("get", "/v1/users/alice/memory/export"),
        ("delete", "/v1/users/alice"),
        ("get", "/v1/users/alice/goals"),
        ("get", "/v1/traces?user_id=alice"),
    ],
)
def test_another_tenants_user_is_not_found(
    client: TestClient, alice: dict[str, Any], method: str, path: str
) -> None:
    r = client.request(method, path, headers=auth("globex"))
    assert (r.status_code, r.json()) == (404, NOT_FOUND)
    # nothing of alice went: her tenant still sees all of it
    assert order_ids(client, "acme", "alice") == ["DD202405010001"]
    assert client.get("/v1/users/alice/goals", headers=auth("acme")).json()["goals"]
    traces = client.get("/v1/traces?user_id=alice", headers=auth("acme")).json()["traces"]
    assert [t["id"] for t in traces] == [alice["trace_id"]]


def test_another_tenants_trace_is_not_found(client: TestClient, alice: dict[str, Any]) -> None:
    trace_id = alice["trace_id"]
    r = client.get(f"/v1/traces/{trace_id}", headers=auth("globex"))
    assert r.status_code == 404
    assert r.json() == {"error": {"code": "not_found", "message": f"no trace '{trace_id}'"}}
    assert client.get("/v1/traces", headers=auth("globex")).json() == {"traces": []}
    mine = client.get(f"/v1/traces/{trace_id}", headers=auth("acme"))
    assert mine.status_code == 200
    trace = mine.json()
    assert (trace["id"], trace["tenant"], trace["user_id"]) == (trace_id, "acme", "alice")
    assert trace["session_id"] == "alice-s1"


def test_the_same_user_id_in_two_tenants_is_two_users(client: TestClient) -> None:
    turn(client, "acme", "bob", "帮我查一下订单DD202405010001")
    turn(client, "globex", "bob", "帮我查一下订单DD202405010002")
    assert order_ids(client, "acme", "bob") == ["DD202405010001"]
    assert order_ids(client, "globex", "bob") == ["DD202405010002"]
    acme_goals = client.get("/v1/users/bob/goals", headers=auth("acme")).json()["goals"]
    assert [g["description"] for g in acme_goals] == ["查询订单DD202405010001"]
    globex = client.get("/v1/traces?user_id=bob", headers=auth("globex")).json()["traces"]
    assert [(t["tenant"], t["user_id"]) for t in globex] == [("globex", "bob")]
    assert "DD202405010001" not in str(globex)

    r = client.delete("/v1/users/bob", headers=auth("globex"))
    assert r.status_code == 200
    assert r.json() == {
        "user_id": "bob",
        "deleted": {
            "summaries": 0,
            "turns": 1,
            "facts": 1,
            "goals": 1,
            "executions": 0,
            "tickets": 0,
            "traces": 1,
            "reflections": 0,
        },
    }
    # globex's bob is gone; acme's bob is another user, untouched
    assert client.get("/v1/users/bob/memory", headers=auth("globex")).status_code == 404
    assert order_ids(client, "acme", "bob") == ["DD202405010001"]
    assert len(client.get("/v1/traces?user_id=bob", headers=auth("acme")).json()["traces"]) == 1


def test_responses_speak_the_callers_user_id(client: TestClient, alice: dict[str, Any]) -> None:
    """Stores hold acme:alice; no response shows it."""
    for path in (
        "/v1/users/alice/memory",
        "/v1/users/alice/memory/export",
        "/v1/users/alice/goals",
        "/v1/traces?user_id=alice",
        f"/v1/traces/{alice['trace_id']}",
    ):
        r = client.get(path, headers=auth("acme"))
        assert r.status_code == 200, path
        assert "acme:alice" not in r.text, path
        assert '"alice"' in r.text, path
    export = client.get("/v1/users/alice/memory/export", headers=auth("acme")).json()
    assert export["user_id"] == "alice"
    assert [f["value"] for f in export["facts"]] == ["DD202405010001"]
    assert export["summaries"] == []


def test_memory_list(client: TestClient, alice: dict[str, Any]) -> None:
    (fact,) = client.get("/v1/users/alice/memory", headers=auth("acme")).json()["facts"]
    assert {k: fact[k] for k in ("user_id", "key", "value", "encrypted", "status")} == {
        "user_id": "alice",
        "key": "order_id",
        "value": "DD202405010001",
        "encrypted": False,
        "status": "active",
    }
    assert fact["entity_ref"] == "DD202405010001"


def test_goals_of_one_session(client: TestClient, alice: dict[str, Any]) -> None:
    r = client.get("/v1/users/alice/goals?session_id=alice-s1", headers=auth("acme"))
    (goal,) = r.json()["goals"]
    assert (goal["intent"], goal["user_id"]) == ("order-query", "alice")
    assert [(g["id"], g["status"]) for g in alice["goals"]] == [(goal["id"], goal["status"])]
    r = client.get("/v1/users/alice/goals?session_id=other", headers=auth("acme"))
    assert r.json() == {"user_id": "alice", "goals": []}


def test_forget_then_the_memory_is_empty(client: TestClient, alice: dict[str, Any]) -> None:
    r = client.delete("/v1/users/alice", headers=auth("acme"))
    assert r.json() == {
        "user_id": "alice",
        "deleted": {
            "summaries": 0,
            "turns": 1,
            "facts": 1,
            "goals": 1,
            "executions": 0,
            "tickets": 0,
            "traces": 1,
            "reflections": 0,
        },
    }
    # nothing of alice is left in any store: she is unknown now
    r = client.get("/v1/users/alice/memory", headers=auth("acme"))
    assert r.status_code == 404
    assert client.get("/v1/traces?user_id=alice", headers=auth("acme")).status_code == 404


def test_an_unknown_user_leaves_no_trace(client: TestClient) -> None:
    """Probing for a user must not write audit rows for them."""
    for path in ("/v1/users/nobody/memory", "/v1/users/nobody/memory/export"):
        assert client.get(path, headers=auth("acme")).status_code == 404
    agent = client.app.state.service.agent  # type: ignore[attr-defined]

    assert agent.parts.facts.audit_trail(Accessor("acme:nobody", "test", role="admin")) == []
