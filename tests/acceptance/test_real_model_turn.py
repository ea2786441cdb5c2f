"""Acceptance (issue 7, acceptance 2; issue 14): one full turn against the real bundled model
(Gemma 3 270M through llama.cpp, a base model: expect anything).

The shipped packs are ``strict``: the model never writes their replies. So the turn runs in
``assisted`` mode on an input no intent claims and no FAQ entry answers — the only kind of
turn in which the model answers. Whatever it writes, each draft is judged by the built-in
model-text checks and the pack's rules, and the user gets one of three things, which the
trace tells apart:

* an accepted draft (as written, or repaired by the rules) that fails no rule of the pack and
  no model-text check;
* every draft refused (a 270M base model often echoes the prompt, repeats itself or invents
  numbers): the pack's plain unanswered reply, exactly what ``strict`` says, and no ticket;
* a draft the rules block: the pack's safe message.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from charter.agent import Agent, AgentOptions, Reply
from charter.llm.scripted import ScriptedLLM
from charter.reflect.modeltext import check_model_text

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

KEY = base64.b64encode(bytes(range(32))).decode()
ACCEPTED = ("accepted", "repaired by the rules")


def plain(tmp_path: Path, domain: str, text: str) -> Reply:
    """What the pack itself says to ``text`` (strict: composed, nothing generated)."""
    llm = ScriptedLLM([])  # asked for anything, it fails the test
    db = tmp_path / "strict.db"
    db.touch()
    with Agent.from_pack(domain, llm=llm, database_url=f"sqlite:///{db}", memory_key=KEY) as agent:
        reply = agent.turn("u1", "s1", text)
    assert llm.calls == () and [e["kind"] for e in reply.events] == ["unanswered"]
    return reply


@pytest.mark.slow  # generates with the bundled model (about 7 s)
@pytest.mark.parametrize(
    ("domain", "text"),
    [
        ("finance", "你们周末营业吗"),
        ("medical", "你们医院停车方便吗"),
    ],
)
def test_a_turn_with_the_bundled_model(tmp_path: Path, domain: str, text: str) -> None:
    from charter.plugins.host import default_registry

    unanswered = plain(tmp_path, domain, text)
    registry, _ = default_registry()
    llm = registry.llm_backends["llamacpp"].create({"seed": 7})
    db = tmp_path / "charter.db"
    db.touch()
    with Agent.from_pack(
        domain,
        llm=llm,
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        options=AgentOptions(max_tokens=48, temperature=0.7, mode="assisted"),
    ) as agent:
        reply = agent.turn("u1", "s1", text)
        traces = agent.parts.traces
        assert traces is not None and reply.trace_id is not None
        trace = traces.get(reply.trace_id)
        assert trace is not None
        steps = trace.steps
        generated = [s for s in steps if s.name == "generate"]
        judged = [s for s in steps if s.name == "reflect"]
        prompts = [s.outputs["text"] for s in steps if s.name == "prompt"]
        # the model really generated, every draft was judged, within the pack's retries
        assert 1 <= len(generated) == len(judged) == reply.attempts <= agent.max_retries + 1
        assert all(s.outputs["text"] is not None for s in generated)
        last = judged[-1]

        if reply.verdict == "block":
            # a draft the rules refuse outright: the safe message, nothing of the draft
            assert last.decision == "blocked"
            assert (reply.answered_by, reply.text) == ("rules", agent.parts.pack.messages["safe"])
        elif last.decision in ACCEPTED:
            # the model's answer stands: as the rules left it, and it fails no check
            assert (reply.verdict, reply.answered_by) in (("pass", "model"), ("fixed", "model"))
            assert reply.responses == ("model",) and reply.ticket is None
            assert reply.text == last.outputs["final_text"]
            assert all(s.decision.startswith("retry ") for s in judged[:-1])
            messages = agent.parts.pack.messages.values()
            found = check_model_text(
                reply.text,
                # what the turn gave the model: the user's words and the pack's own texts (a
                # fresh user: no memory, no skill result)
                grounds=[text, *(v for v in messages if isinstance(v, str))],
                prompt=prompts[-1:],
                locale=agent.parts.pack.constants.get("locale", "zh-CN"),
                extractors=agent.parts.registry.extractors,
                statuses=agent.parts.responses.statuses,
            )
            assert found == (), reply
        else:
            # every draft refused: the plain reply takes its place, and no person is asked
            assert reply.attempts == agent.max_retries + 1
            assert last.decision == "retries exhausted"
            assert all(s.decision.startswith("retry ") for s in judged[:-1])
            assert (reply.verdict, reply.answered_by, reply.ticket) == ("pass", "template", None)
            assert (reply.text, reply.responses) == (unanswered.text, unanswered.responses)

        # whichever it was, the text the user gets breaks no rule of the pack
        outcomes = agent.parts.engine.evaluate(reply.text, text, {"low_confidence": False})
        assert [rule for rule, o in outcomes.items() if o == "fail"] == [], reply
