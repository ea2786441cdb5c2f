"""What the HTTP service tests share besides fixtures: tokens, the memory key, headers."""

from __future__ import annotations

import base64
import dataclasses
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

with warnings.catch_warnings():
    # starlette asks for httpx2 instead of httpx; httpx is what FastAPI's docs install
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from charter.config import (
    AgentConfig,
    Config,
    DatabaseConfig,
    ModelConfig,
    Secret,
    ServeConfig,
    TenantConfig,
)
from tests.support.paths import ROOT

KEY = base64.b64encode(bytes(range(32))).decode()
TOKENS = {"acme": "tok-acme-0123456789", "globex": "tok-globex-9876543210"}
BEARER = 'Bearer realm="charter"'

__all__ = [
    "BEARER",
    "KEY",
    "ROOT",
    "TOKENS",
    "MakeClient",
    "MakeService",
    "Service",
    "TestClient",
    "auth",
    "serve_config",
]

MakeClient = Callable[..., TestClient]


def auth(tenant: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[tenant]}"}


def serve_config(database_url: str, *, max_body_bytes: int = 65536, mode: str = "") -> Config:
    """Two tenants, acme and globex, their tokens given; the ecommerce pack, composed in
    ``mode`` (empty: the pack's own, strict)."""
    tenants = tuple(
        TenantConfig(name, f"TOKEN_{name.upper()}", Secret(token, f"env TOKEN_{name.upper()}"))
        for name, token in TOKENS.items()
    )
    return Config(
        database=DatabaseConfig(database_url),
        model=ModelConfig(backend="scripted", options={"default": "好的"}),
        agent=AgentConfig(domain=str(ROOT / "domains" / "ecommerce"), mode=mode),
        serve=ServeConfig(max_body_bytes=max_body_bytes, tenants=tenants),
    )


@dataclasses.dataclass
class Service:
    """A started client of the security suite's ``service`` fixture, the database URL behind
    it and the narrative directory."""

    client: TestClient
    database_url: str
    narrative: Path
    pack: str

    def turn(self, tenant: str, user_id: str, text: str, **extra: Any) -> Any:
        body = {"user_id": user_id, "text": text, **extra}
        return self.client.post("/v1/turns", json=body, headers=auth(tenant))


MakeService = Callable[..., Service]
