"""An intent's stages as the agent moves them (agent/stages.py), on the shipped packs: each
stage a sub-goal with its own status, moved in order when the input touches its goal; a
refusing check ends the goal before it is confirmed; a check that could not run holds the
action; a cancelled goal takes its open stages along; a ``by`` stage waits for another intent;
the trace lists every stage moved. The replies themselves are pinned by the packs'
conversation tests (compliance.yaml, referral.yaml)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent, Reply
from charter.conversations.runner import fresh
from charter.llm.scripted import ScriptedLLM
from charter.plugins.host import default_registry
from charter.skills.outage import Outage

KEY = b"k" * 32
NOW = datetime.fromisoformat("2025-06-30T10:00:00+08:00")


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[Any]:
    made: list[Agent] = []

    def make(domain: str, down: str | None = None) -> tuple[Agent, Outage | None]:
        reg, _ = default_registry()
        skills = {n: fresh(s) for n, s in reg.skills.items()}
        outage = Outage(skills[down], "test") if down else None
        if outage is not None and down is not None:
            skills[down] = outage
        db = tmp_path / f"{domain}-{len(made)}.db"
        agent = Agent.from_pack(
            domain,
            llm=ScriptedLLM([]),
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
            registry=dataclasses.replace(reg, skills=skills),
            clock=lambda: NOW,
        )
        made.append(agent)
        return agent, outage

    yield make
    for agent in made:
        agent.close()


def tree(r: Reply) -> list[tuple[str, str, str | None]]:
    return [(g["intent"], g["status"], g.get("outcome")) for g in r.goals]


def stage_log(agent: Agent, r: Reply) -> list[tuple[str, str]]:
    trace = agent.parts.traces.get(r.trace_id)
    assert trace is not None
    outputs = next(s.outputs for s in trace.steps if s.name == "skills")
    return [(e["stage"], e["to"]) for e in outputs.get("stages", [])]


def skills(r: Reply) -> list[str]:
    return [str(s["skill"]) for s in r.skills]


def test_a_passing_check_is_quiet_and_the_action_waits_for_its_yes(agents: Any) -> None:
    agent, _ = agents("finance")
    r = agent.turn("u1", "s1", "给张三转账5000元")
    assert tree(r) == [
        ("transfer", "pending", None),
        ("transfer.compliance", "completed", "compliant"),
    ]
    assert skills(r) == []  # quiet: judged, not told
    assert stage_log(agent, r) == [("transfer.compliance", "compliant")]
    r = agent.turn("u1", "s1", "是")
    assert skills(r) == ["transfer"]
    assert stage_log(agent, r) == []  # judged on these very values: not asked again


def test_a_refusing_check_ends_the_goal_before_any_confirmation(agents: Any) -> None:
    agent, _ = agents("finance")
    r = agent.turn("u1", "s1", "给钱多多转账1000元")
    assert tree(r) == [
        ("transfer", "aborted", "refused"),
        ("transfer.compliance", "aborted", "non_compliant"),
    ]
    assert [e["kind"] for e in r.events] == ["result"]
    assert skills(r) == ["compliance_check"]


def test_a_changed_value_is_checked_again(agents: Any) -> None:
    agent, _ = agents("finance")
    agent.turn("u1", "s1", "给张三转账1000元")
    r = agent.turn("u1", "s1", "收款人换成钱多多")
    assert stage_log(agent, r) == [("transfer.compliance", "non_compliant")]
    assert tree(r)[0] == ("transfer", "aborted", "refused")


def test_a_check_that_could_not_run_holds_the_action(agents: Any) -> None:
    agent, outage = agents("finance", down="compliance_check")
    assert outage is not None
    outage.down = True
    r = agent.turn("u1", "s1", "给张三转账2000元")
    assert tree(r) == [("transfer", "pending", None), ("transfer.compliance", "active", None)]
    assert [e["kind"] for e in r.events] == ["fallback"]  # no confirmation asked
    r = agent.turn("u1", "s1", "是")  # still down: checked again, nothing executed
    assert skills(r) == ["compliance_check"]
    assert tree(r)[0][1] == "pending"  # waiting for the next yes again
    assert [e["kind"] for e in r.events] == ["confirmation_accepted", "fallback"]
    outage.down = False
    r = agent.turn("u1", "s1", "是")
    assert skills(r) == ["transfer"]
    assert tree(r) == [
        ("transfer", "completed", None),
        ("transfer.compliance", "completed", "compliant"),
    ]


def test_a_cancelled_goal_takes_its_open_stages_along(agents: Any) -> None:
    agent, _ = agents("medical")
    agent.turn("u1", "s1", "头疼三天了")
    r = agent.turn("u1", "s1", "最近总是不舒服")  # a second consultation, still collecting
    assert tree(r)[-3:] == [
        ("symptom.intake", "active", None),
        ("symptom.triage", "pending", None),
        ("symptom.referral", "pending", None),
    ]
    r = agent.turn("u1", "s1", "算了")
    assert tree(r)[-4:] == [
        ("symptom", "aborted", None),
        ("symptom.intake", "aborted", None),
        ("symptom.triage", "aborted", None),
        ("symptom.referral", "aborted", None),
    ]


def test_a_by_stage_waits_for_its_intent_and_a_move_ends_the_moved_goal(agents: Any) -> None:
    agent, _ = agents("medical")
    r = agent.turn("u1", "s1", "头疼三天了")
    assert ("symptom.referral", "active", None) in tree(r)
    agent.turn("u1", "s1", "帮我挂这个科明天上午的号")
    r = agent.turn("u1", "s1", "是")
    assert ("symptom.referral", "completed", "completed") in tree(r)
    agent.turn("u1", "s1", "改到后天下午")
    r = agent.turn("u1", "s1", "是")
    registrations = [g for g in tree(r) if g[0] == "registration"]
    assert registrations == [
        ("registration", "aborted", "moved"),
        ("registration", "completed", None),
    ]
