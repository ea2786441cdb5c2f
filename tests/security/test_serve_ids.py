"""Issue 16, point 6: every user id a turn accepts can be read, exported and forgotten.

An id with ``/`` (``../u1``) used to be accepted by ``POST /v1/turns`` and then be out of reach:
uvicorn decodes ``%2F`` before routing, no route matched, and its traces outlived a forget of
every user of the tenant. Such ids are now refused at the door (422) wherever an id arrives;
the property below checks the other half over generated ids, on SQLite and PostgreSQL: a turn
accepted ⇒ memory, export, goals and traces answer for that id, forget removes it from every
table, and the user is unknown afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charter.contracts.registry import Registry
from charter.plugins.host import default_registry
from charter.serve.ids import user_id_problem
from tests.support.hypo import examples as scaled
from tests.support.serve import Service, auth

TEXT = "帮我查一下订单DD202405010001"
# ids that once broke routing or storage, next to arbitrary text
TRICKY = (
    "../u1",
    "a/b",
    "/",
    ".",
    "..",
    "a%2Fb",
    "%2F",
    "a b",
    " ",
    "用户 一",
    "a?b#c",
    "a\\b",
    "acme:u1",
    "...",
    ".hidden",
    "x\x00y",
    "tab\there",
    "a;b'c\"d",
    "🙂" * 128,
)
IDS = st.one_of(st.sampled_from(TRICKY), st.text(min_size=1, max_size=128))


@pytest.fixture(scope="session")
def registry() -> Registry:
    reg, diags = default_registry()
    assert not diags, diags
    return reg


def rows_of(url: str, stored: str) -> dict[str, int]:
    """How many rows hold ``stored`` in a ``user_id`` column, per table that has one."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            out = {}
            for name in sa.inspect(conn).get_table_names():
                table = sa.Table(name, sa.MetaData(), autoload_with=conn)
                if "user_id" in table.c:
                    query = sa.select(sa.func.count()).where(table.c.user_id == stored)
                    out[name] = conn.execute(query).scalar_one()
            return out
    finally:
        engine.dispose()


def user_path(user_id: str) -> str:
    """``/v1/users/<id>`` as the TestClient must be given it: it decodes a path twice (httpx's
    ``URL.path`` is decoded already, and Starlette's client unquotes it again), where uvicorn
    decodes once, so the id is encoded twice (test_serve_errors.py sends ids with ``%`` to a
    real uvicorn, encoded once)."""
    return f"/v1/users/{quote(quote(user_id, safe=''), safe='')}"


def reachable_then_forgotten(svc: Service, user_id: str) -> None:
    """A user a turn accepted: every endpoint answers for them, and forget leaves nothing."""
    h = auth("acme")
    path = user_path(user_id)
    client = svc.client
    assert client.get(f"{path}/memory", headers=h).status_code == 200
    export = client.get(f"{path}/memory/export", headers=h)
    assert (export.status_code, export.json()["user_id"]) == (200, user_id)
    goals = client.get(f"{path}/goals", headers=h)
    assert (goals.status_code, goals.json()["user_id"]) == (200, user_id)
    traces = client.get("/v1/traces", params={"user_id": user_id}, headers=h).json()["traces"]
    assert [t["user_id"] for t in traces] == [user_id]
    stored = f"acme:{user_id}"
    assert sum(rows_of(svc.database_url, stored).values()) > 0
    gone = client.delete(path, headers=h)
    assert (gone.status_code, gone.json()["user_id"]) == (200, user_id)
    assert {t: n for t, n in rows_of(svc.database_url, stored).items() if n} == {}
    assert client.get(f"{path}/memory", headers=h).status_code == 404
    assert client.get("/v1/traces", params={"user_id": user_id}, headers=h).status_code == 404


@pytest.mark.slow  # 60 generated ids, each a turn and a forget over HTTP
@pytest.mark.parametrize(("backend", "examples"), [("sqlite", 40), ("postgres", 20)])
def test_6_every_accepted_user_id_is_reachable_and_forgettable(
    service: Callable[..., Service], backend: str, examples: int
) -> None:
    svc = service(backend)

    @settings(
        max_examples=scaled(examples),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(user_id=IDS)
    def prop(user_id: str) -> None:
        r = svc.turn("acme", user_id, TEXT, session_id="s1")
        problem = user_id_problem(user_id)
        if problem is not None:
            assert (r.status_code, r.json()["error"]) == (
                422,
                {"code": "invalid_request", "message": f"user_id: {problem}"},
            )
            return
        assert r.status_code == 200, r.json()
        reachable_then_forgotten(svc, user_id)

    prop()


def test_6_ids_a_path_cannot_carry_are_refused_wherever_they_arrive(
    service: Callable[..., Service],
) -> None:
    svc = service("sqlite")
    h = auth("acme")
    for user_id, why in (("../u1", "must not contain '/'"), ("a/b", "must not contain '/'")):
        r = svc.turn("acme", user_id, TEXT, session_id="s1")
        assert (r.status_code, r.json()["error"]["message"]) == (422, f"user_id: {why}")
        r = svc.client.get("/v1/traces", params={"user_id": user_id}, headers=h)
        assert (r.status_code, r.json()["error"]["message"]) == (422, f"user_id: {why}")
    # %2E%2E is decoded to .. after the client's own dot-segment handling
    for user_id in (".", ".."):
        encoded = user_id.replace(".", "%2E")
        r = svc.client.get(f"/v1/users/{encoded}/memory", headers=h)
        assert (r.status_code, r.json()["error"]["message"]) == (
            422,
            f"user_id: must not be '{user_id}'",
        )
    # %2F is decoded before routing: no route has a user id with a '/'
    r = svc.client.get("/v1/users/a%2Fb/memory", headers=h)
    assert r.status_code == 404
    assert svc.client.get("/v1/traces", headers=h).json() == {"traces": []}


@pytest.mark.slow  # a tenant's users written and forgotten through the service (2-6 s)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_6_a_full_forget_of_a_tenant_leaves_no_trace(
    service: Callable[..., Service], backend: str
) -> None:
    svc = service(backend)
    users = ["u1", "a b", "用户 一", "a%2Fb", "acme:u1", "...", "a\\b"]
    for user_id in users:
        assert svc.turn("acme", user_id, TEXT, session_id="s1").status_code == 200
    for user_id in ("../u1", "a/b"):  # refused: nothing stored
        assert svc.turn("acme", user_id, TEXT, session_id="s1").status_code == 422
    assert svc.turn("globex", "u1", TEXT, session_id="s1").status_code == 200
    h = auth("acme")
    listed = svc.client.get("/v1/traces", params={"limit": 100}, headers=h).json()["traces"]
    assert sorted({t["user_id"] for t in listed}) == sorted(users)
    for user_id in {t["user_id"] for t in listed}:
        r = svc.client.delete(user_path(user_id), headers=h)
        assert r.status_code == 200, (user_id, r.json())
    assert svc.client.get("/v1/traces", headers=h).json() == {"traces": []}
    left = {
        t: n
        for user_id in users
        for t, n in rows_of(svc.database_url, f"acme:{user_id}").items()
        if n
    }
    assert left == {}
    other = svc.client.get("/v1/traces", headers=auth("globex")).json()["traces"]
    assert [t["user_id"] for t in other] == ["u1"]
