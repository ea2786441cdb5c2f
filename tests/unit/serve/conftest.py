"""Fixtures of the HTTP service tests: the ecommerce pack compiled once, and a client per test
whose agent (scripted model, SQLite file in ``tmp_path``, the options the configuration gives)
starts and stops with the client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.models import LLM
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.serve import create_app
from tests.support.serve import KEY, ROOT, MakeClient, TestClient, serve_config


@pytest.fixture(scope="session")
def ecommerce(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> CompiledPack:
    cache = tmp_path_factory.mktemp("charter-cache")
    pack, diags = compile_path(ROOT / "domains" / "ecommerce", registry, cache_dir=cache)
    assert pack is not None, diags
    return pack


@pytest.fixture
def make_client(
    tmp_path: Path, ecommerce: CompiledPack, registry: Registry
) -> Iterator[MakeClient]:
    """``make_client(llm=None, max_body_bytes=65536, mode="")``: a started client; ``mode`` is
    the configuration's ``agent.mode`` (``assisted`` lets the model answer what the ecommerce
    pack's templates do not cover, such as 你好)."""
    opened: list[TestClient] = []

    def make(llm: LLM | None = None, *, max_body_bytes: int = 65536, mode: str = "") -> TestClient:
        db = tmp_path / "charter.db"
        url = f"sqlite:///{db}"
        config = serve_config(url, max_body_bytes=max_body_bytes, mode=mode)

        def agent() -> Agent:
            model = llm if llm is not None else ScriptedLLM(default="好的")
            return Agent.from_pack(
                ecommerce,
                llm=model,
                database_url=url,
                memory_key=KEY,
                registry=registry,
                options=agent_options(config),
            )

        app = create_app(config, agent_factory=agent, environ={})
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: MakeClient) -> TestClient:
    return make_client()
