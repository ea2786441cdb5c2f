"""The turn reads each store once where it can (issue 19: the turn as a forward pipeline).

Every read of the short-term store and of the goal store during a conversation is counted by
the trace step it happens in. The short-term window is read once per turn, when the turn is
loaded; the session's goals are read whole (``GoalReads.session``: the goals and every context
in two queries) at most once per step — twice in ``goals``, before the plan is applied and
after — and once more when the turn's goal tree is returned; a step never lists the tree or
the active goals itself. One goal at a time is read only where the step writes between the
reads (the tracker applying the plan, a goal's stages advancing): each such read sees what the
write before it changed.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent
from charter.goals.store_reads import GoalReads
from charter.llm.scripted import ScriptedLLM
from charter.memory.short_term import ShortTermMemory
from charter.traces.recorder import StepHandle

KEY = base64.b64encode(bytes(range(32))).decode()
NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)
OUTSIDE = "(outside the steps)"
Reads = Counter[tuple[str, str]]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """(step, store read) -> how many times, for the turn that ran last."""
    counted: Reads = Counter()
    where = [OUTSIDE]

    def count(cls: type, name: str, label: str) -> None:
        read = getattr(cls, name)

        def counting(self: Any, *args: Any, **kw: Any) -> Any:
            counted[(where[-1], label)] += 1
            return read(self, *args, **kw)

        monkeypatch.setattr(cls, name, counting)

    for name in ("get", "tree", "active", "context", "history", "session"):
        count(GoalReads, name, name)
    count(ShortTermMemory, "turns", "short-term window")
    enter, leave = StepHandle.__enter__, StepHandle.__exit__

    def entering(self: StepHandle) -> Any:
        where.append(self.name)
        return enter(self)

    def leaving(self: StepHandle, *exc: Any) -> Any:
        where.pop()
        return leave(self, *exc)

    monkeypatch.setattr(StepHandle, "__enter__", entering)
    monkeypatch.setattr(StepHandle, "__exit__", leaving)
    return counted


@pytest.fixture
def agent_for(tmp_path: Path) -> Iterator[Callable[[str], Agent]]:
    made: list[Agent] = []

    def open_(domain: str) -> Agent:
        db = tmp_path / f"{domain}.db"
        agent = Agent.from_pack(
            domain,
            llm=ScriptedLLM([]),
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
            clock=lambda: NOW,
        )
        made.append(agent)
        return agent

    yield open_
    for agent in made:
        agent.close()


def per_step(reads: Reads) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (step, label), n in sorted(reads.items()):
        out.setdefault(step, {})[label] = n
    return out


# finance: a question, its answer, an action confirmed after a correction; medical: a booking
# whose stages check the department before the confirmation
CONVERSATIONS = {
    "finance": ["查一下余额", "尾号1234", "给张三转账500元", "改成600元", "是"],
    "medical": ["我想挂号", "明天上午的心内科", "是"],
}


@pytest.mark.parametrize("domain", sorted(CONVERSATIONS))
def test_each_store_is_read_once_where_it_can_be(
    domain: str, reads: Reads, agent_for: Callable[[str], Agent]
) -> None:
    agent = agent_for(domain)
    for text in CONVERSATIONS[domain]:
        reads.clear()
        agent.turn("u1", "s1", text)
        steps = per_step(reads)
        window = sum(n for (_, label), n in reads.items() if label == "short-term window")
        assert window == 1, (text, steps)
        assert steps[OUTSIDE] == {"session": 1, "short-term window": 1}, text
        for step, got in steps.items():
            assert "tree" not in got and "active" not in got, (text, step, got)
            assert got.get("session", 0) <= (2 if step == "goals" else 1), (text, step, got)
            if step not in ("goals", "skills"):  # the steps that write between reads
                assert not {"get", "context"} & set(got), (text, step, got)


def test_a_finance_conversation_reads_exactly_this(
    reads: Reads, agent_for: Callable[[str], Agent]
) -> None:
    agent = agent_for("finance")
    seen = []
    for text in CONVERSATIONS["finance"]:
        reads.clear()
        agent.turn("u1", "s1", text)
        seen.append((text, per_step(reads)))
    once = {OUTSIDE: {"session": 1, "short-term window": 1}, "compose": {"session": 1}}
    assert seen == [
        ("查一下余额", {**once, "goals": {"session": 2}}),
        (
            "尾号1234",  # the balance told: its goal completes, what was said is remembered
            {
                **once,
                "goal_transitions": {"session": 1},
                "goals": {"context": 2, "get": 2, "session": 2},
                "memory": {"session": 1},
            },
        ),
        ("给张三转账500元", {**once, "goals": {"session": 2}, "skills": {"context": 1}}),
        (
            "改成600元",
            {**once, "goals": {"context": 1, "get": 2, "session": 2}, "skills": {"context": 2}},
        ),
        (
            "是",
            {
                **once,
                "goal_transitions": {"session": 1},
                "goals": {"session": 2},
                "memory": {"session": 1},
                "skills": {"context": 2},
            },
        ),
    ]
