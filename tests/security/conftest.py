"""Fixtures of the security suite (issue 16): the HTTP service as a client talks to it, on
SQLite and, where a point concerns the database, on PostgreSQL too.

``service(backend, pack="ecommerce", llm=None, **serve_options)`` starts one in-process
service (FastAPI's TestClient: the same ASGI app ``charter serve`` runs) with two tenants,
acme and globex, over a fresh database of the given backend: ``"sqlite"`` (a file in
``tmp_path``) or ``"postgres"`` (a new schema, skipped with the reason when no server is
reachable). The client is closed after the test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.models import LLM
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.plugins.host import default_registry
from charter.serve import create_app
from tests.postgres import fresh_schema
from tests.unit.serve.helpers import KEY, ROOT, TOKENS, TestClient, auth, serve_config

__all__ = ["KEY", "ROOT", "TOKENS", "Service", "auth"]

PACKS = ("ecommerce", "finance", "medical")


@dataclasses.dataclass
class Service:
    """A started client, the database URL behind it and the narrative directory."""

    client: TestClient
    database_url: str
    narrative: Path
    pack: str

    def turn(self, tenant: str, user_id: str, text: str, **extra: Any) -> Any:
        body = {"user_id": user_id, "text": text, **extra}
        return self.client.post("/v1/turns", json=body, headers=auth(tenant))


MakeService = Callable[..., Service]


@pytest.fixture(scope="session")
def registry() -> Registry:
    reg, diags = default_registry()
    assert not diags, diags
    return reg


@pytest.fixture(scope="session")
def packs(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> dict[str, CompiledPack]:
    cache = tmp_path_factory.mktemp("charter-cache")
    out: dict[str, CompiledPack] = {}
    for name in PACKS:
        pack, diags = compile_path(ROOT / "domains" / name, registry, cache_dir=cache)
        assert pack is not None, diags
        out[name] = pack
    return out


@pytest.fixture
def service(
    tmp_path: Path, packs: dict[str, CompiledPack], registry: Registry
) -> Iterator[MakeService]:
    stack = ExitStack()
    made = 0

    def make(
        backend: str = "sqlite",
        pack: str = "ecommerce",
        llm: LLM | None = None,
        **serve_options: Any,
    ) -> Service:
        nonlocal made
        made += 1
        if backend == "postgres":
            url = stack.enter_context(fresh_schema("charter_security"))
        else:
            url = f"sqlite:///{tmp_path / f'{pack}-{made}.db'}"
        narrative = tmp_path / f"narrative-{pack}-{made}"
        config = serve_config(url, **serve_options)
        config = dataclasses.replace(
            config, agent=dataclasses.replace(config.agent, domain=str(ROOT / "domains" / pack))
        )

        def agent() -> Agent:
            model = llm if llm is not None else ScriptedLLM(default="好的")
            return Agent.from_pack(
                packs[pack],
                llm=model,
                database_url=url,
                memory_key=KEY,
                registry=registry,
                options=agent_options(config),
                narrative_path=narrative,
            )

        app = create_app(config, agent_factory=agent, environ={})
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        stack.callback(client.__exit__, None, None, None)
        return Service(client, url, narrative, pack)

    yield make
    stack.close()
