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
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.compiled import CompiledPack
from charter.contracts.models import LLM
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.serve import create_app
from tests.support.postgres import fresh_schema
from tests.support.serve import KEY, ROOT, MakeService, Service, TestClient, serve_config


@pytest.fixture
def service(
    tmp_path: Path, shipped_packs: Mapping[str, CompiledPack], registry: Registry
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
                shipped_packs[pack],
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
