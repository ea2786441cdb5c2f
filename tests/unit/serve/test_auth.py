"""Bearer tokens per tenant: what a request without a valid one gets, and start-up checks."""

from __future__ import annotations

import dataclasses

import pytest

from charter.config import Config, Secret, ServeConfig, TenantConfig
from charter.serve import create_app
from charter.serve.auth import Tenants, scoped, tenant_problems, unscoped
from charter.serve.errors import ApiError
from tests.support.serve import BEARER, TOKENS, TestClient, auth, serve_config

TURN = {"user_id": "u1", "session_id": "s1", "text": "你好"}
UNAUTHORIZED = [
    ("get", "/v1/users/u1/memory"),
    ("get", "/v1/users/u1/memory/export"),
    ("delete", "/v1/users/u1"),
    ("get", "/v1/users/u1/goals"),
    ("get", "/v1/traces/tr-1"),
    ("get", "/v1/traces"),
    ("get", "/v1/health"),
    ("post", "/v1/turns"),
]


@pytest.mark.parametrize(("method", "path"), UNAUTHORIZED)
def test_no_token_is_401_everywhere_but_healthz(client: TestClient, method: str, path: str) -> None:
    r = client.request(method, path, json=TURN if method == "post" else None)
    assert r.status_code == 401
    assert r.json() == {
        "error": {
            "code": "unauthorized",
            "message": "missing bearer token: send Authorization: Bearer <token>",
        }
    }
    assert r.headers["www-authenticate"] == BEARER


def test_healthz_needs_no_token(client: TestClient) -> None:
    r = client.get("/healthz")
    assert (r.status_code, r.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize(
    "header", ["Basic dXNlcjpwdw==", "Bearer", "Bearer ", "Token tok-acme-0123456789"]
)
def test_not_a_bearer_token(client: TestClient, header: str) -> None:
    r = client.get("/v1/health", headers={"Authorization": header})
    assert r.status_code == 401
    assert r.json() == {
        "error": {
            "code": "unauthorized",
            "message": "the Authorization header must be Bearer <token>",
        }
    }
    assert r.headers["www-authenticate"] == f'{BEARER}, error="invalid_request"'


@pytest.mark.parametrize(
    "token", ["wrong", TOKENS["acme"] + "x", TOKENS["acme"][:-1], TOKENS["acme"].upper()]
)
def test_a_wrong_token(client: TestClient, token: str) -> None:
    r = client.get("/v1/health", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401
    assert r.json() == {"error": {"code": "unauthorized", "message": "invalid bearer token"}}
    assert r.headers["www-authenticate"] == f'{BEARER}, error="invalid_token"'


def test_the_scheme_is_case_insensitive(client: TestClient) -> None:
    r = client.get("/v1/health", headers={"Authorization": f"bearer {TOKENS['acme']}"})
    assert (r.status_code, r.json()["tenant"]) == (200, "acme")


def test_authentication_comes_before_parsing(client: TestClient) -> None:
    # a stranger learns nothing about what the endpoint expects
    r = client.post("/v1/turns", content=b"{not json", headers={"Authorization": "Bearer x"})
    assert r.status_code == 401


def test_another_tenants_token_reaches_another_user(client: TestClient) -> None:
    """A token of tenant globex on acme's user: the user is not there (404, not 403)."""
    assert client.post("/v1/turns", json=TURN, headers=auth("acme")).status_code == 200
    assert client.get("/v1/users/u1/memory", headers=auth("acme")).status_code == 200
    r = client.get("/v1/users/u1/memory", headers=auth("globex"))
    assert r.status_code == 404
    assert r.json() == {"error": {"code": "not_found", "message": "no user 'u1'"}}
    assert "www-authenticate" not in r.headers


def test_tokens_name_their_tenant() -> None:
    tenants = Tenants.from_config(serve_config("sqlite:///x.db"), {})
    assert tenants.authenticate(f"Bearer {TOKENS['globex']}") == "globex"
    assert tenants.authenticate(f"Bearer  {TOKENS['acme']} ") == "acme"
    with pytest.raises(ApiError) as info:
        tenants.authenticate(f"Bearer {TOKENS['acme']} {TOKENS['globex']}")
    assert info.value.status == 401


def test_a_token_from_the_environment() -> None:
    config = Config(serve=ServeConfig(tenants=(TenantConfig("acme", "T_ACME"),)))
    tenants = Tenants.from_config(config, {"T_ACME": " secret "})
    assert tenants.authenticate("Bearer secret") == "acme"


def test_two_tenants_with_one_token_are_refused() -> None:
    config = Config(
        serve=ServeConfig(
            tenants=(
                TenantConfig("acme", "T", Secret("same", "env T")),
                TenantConfig("globex", "T", Secret("same", "env T")),
            )
        )
    )
    with pytest.raises(ValueError, match="tenants 'acme' and 'globex' have the same bearer token"):
        Tenants.from_config(config, {})


def test_create_app_refuses_a_configuration_that_cannot_serve() -> None:
    with pytest.raises(ValueError) as info:
        create_app(Config(), environ={})
    assert str(info.value) == (
        "the configuration cannot serve:\n"
        "charter.toml: CH409 charter serve needs at least one [[serve.tenants]]"
    )
    unset = Config(serve=ServeConfig(tenants=(TenantConfig("acme", "T_ACME"),)))
    with pytest.raises(ValueError, match=r"CH407 tenant 'acme': \$T_ACME is not set"):
        create_app(unset, environ={})


def test_a_tenant_name_with_the_separator_is_refused() -> None:
    config = serve_config("sqlite:///x.db")
    bad = dataclasses.replace(
        config.serve.tenants[0], name="acme:eu"
    )  # acme:eu + u1 would be acme + eu:u1
    config = dataclasses.replace(
        config, serve=dataclasses.replace(config.serve, tenants=(bad, config.serve.tenants[1]))
    )
    assert [d.headline() for d in tenant_problems(config)] == [
        "charter.toml: CH403 serve.tenants[0].name must not contain ':'"
    ]
    with pytest.raises(ValueError, match="must not contain ':'"):
        create_app(config, environ={})


def test_scoping_round_trips() -> None:
    assert scoped("acme", "u:1") == "acme:u:1"
    assert unscoped("acme", "acme:u:1") == "u:1"
    assert unscoped("globex", "acme:u:1") == "acme:u:1"
