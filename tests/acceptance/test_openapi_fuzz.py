"""The published OpenAPI document is the server (issue 33, item 6): schemathesis draws requests
from ``docs/openapi.json`` (valid ones and ones that break it) and sends them to the service on
SQLite; every check must hold — no 5xx, a schema-valid request never refused, a schema-breaking
one never accepted, every response as documented.

The draw is derandomized (the same requests on every run and machine) and bounded: 25 per
operation, the tier's cost. An outside run of ~46,000 requests found what this guards against:
ids refused with patterns the document did not publish, ``consent: ""`` taken by the document
and refused by the server.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.python.asgi import shutdown_lifespans

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.api import compile_path
from charter.llm.scripted import ScriptedLLM
from charter.serve import create_app
from tests.support.packs import installed_registry
from tests.support.serve import KEY, ROOT, TOKENS, serve_config

# slow: ~250 requests through the whole service, each turn a real one (about 45 s)
pytestmark = pytest.mark.slow

_HOME = Path(tempfile.mkdtemp(prefix="charter-openapi-"))
_URL = f"sqlite:///{_HOME / 'charter.db'}"
_CONFIG = serve_config(_URL)


def _agent() -> Agent:
    # built by the application's lifespan, at the first request: collecting costs nothing
    registry = installed_registry()
    pack, diags = compile_path(ROOT / "domains" / "ecommerce", registry, cache_dir=_HOME / "cache")
    assert pack is not None, diags
    return Agent.from_pack(
        pack,
        llm=ScriptedLLM(default="好的"),
        database_url=_URL,
        memory_key=KEY,
        registry=registry,
        options=agent_options(_CONFIG),
    )


schema = schemathesis.openapi.from_dict(
    json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
)
schema.app = create_app(_CONFIG, agent_factory=_agent, environ={})


@pytest.fixture(scope="module", autouse=True)
def _stopped() -> Iterator[None]:
    yield
    shutdown_lifespans()  # schemathesis started the application once; it closes the agent


@schema.parametrize()
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_the_server_is_its_published_document(case: schemathesis.Case) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKENS['acme']}"})
