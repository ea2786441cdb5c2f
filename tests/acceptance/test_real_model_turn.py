"""Acceptance (issue 7, acceptance 2): one full turn against the real bundled model (Gemma 3
270M through llama.cpp, a base model: expect anything). Whatever it writes, reflection runs
and the text the user gets satisfies every rule of the pack."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from charter.agent import Agent, AgentOptions

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

KEY = base64.b64encode(bytes(range(32))).decode()


@pytest.mark.parametrize(
    ("domain", "text"),
    [
        ("finance", "我有5万元想买理财，有什么推荐"),
        ("medical", "我头疼，还有点发烧，怎么办"),
    ],
)
def test_a_turn_with_the_bundled_model(tmp_path: Path, domain: str, text: str) -> None:
    from charter.plugins import default_registry

    registry, _ = default_registry()
    llm = registry.llm_backends["llamacpp"].create({"seed": 7})
    db = tmp_path / "charter.db"
    db.touch()
    with Agent.from_pack(
        domain,
        llm=llm,
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        options=AgentOptions(max_tokens=48, temperature=0.7),
    ) as agent:
        reply = agent.turn("u1", "s1", text)
        traces = agent.parts.traces
        assert traces is not None and reply.trace_id is not None
        trace = traces.get(reply.trace_id)
        assert trace is not None
        names = [s.name for s in trace.steps]
        assert "generate" in names and "reflect" in names  # the model ran, and was judged
        assert reply.reflection is not None and reply.attempts >= 1
        # the final text breaks no rule of the pack, whatever the model produced
        outcomes = agent.parts.engine.evaluate(reply.text, text, {"low_confidence": False})
        assert [rule for rule, o in outcomes.items() if o == "fail"] == [], reply
        assert reply.verdict in ("pass", "fixed", "retry", "escalate", "block")
