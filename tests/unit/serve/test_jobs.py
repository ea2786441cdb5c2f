"""``charter serve`` runs the goal sweeper and the memory lifecycle beside the requests
(``charter.serve.jobs``): a goal overdue and a fact outlived when the service starts are
aborted and expired by its first passes; shutdown waits for a pass in progress, but never
longer than its bound; ``off`` runs nothing; the settings are checked."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charter.agent import Agent
from charter.compile.compiled import CompiledPack
from charter.config.specs import SPECS, every_seconds
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.memory.records import Accessor, PreparedFact
from charter.serve import create_app
from charter.serve.jobs import Background, Job
from tests.support.serve import KEY, TestClient, serve_config

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
GUARD_S = 30.0  # only against a hang: nothing depends on how long a pass takes


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} did not happen within {GUARD_S}s"
        time.sleep(0.02)


def test_a_started_service_sweeps_goals_and_maintains_memory(
    tmp_path: Path, ecommerce: CompiledPack, registry: Registry
) -> None:
    url = f"sqlite:///{tmp_path / 'charter.db'}"
    clock = Clock()
    config = serve_config(url)
    made: list[Agent] = []

    def agent() -> Agent:
        a = Agent.from_pack(
            ecommerce,
            llm=ScriptedLLM(default="好的"),
            database_url=url,
            memory_key=KEY,
            registry=registry,
            clock=clock,
        )
        goals = a.parts.goals
        goals.create("order_status", user_id="u1", session_id="s1", timeout_s=60, goal_id="g1")
        assert goals.transition("g1", "active", actor="agent", trigger="go").ok
        fact = PreparedFact(
            user_id="u1",
            key="step",
            value="2",
            memory_type="session_state",
            level="L0",
            encrypted=False,
            confidence=1.0,
            source="user_confirmed",
            domain="support",
            valid_until=T0 + timedelta(minutes=15),
        )
        a.parts.facts.write(Accessor("u1", "agent", use="support"), fact)
        clock.now = T0 + timedelta(hours=1)  # the goal overdue, the fact outlived
        made.append(a)
        return a

    app = create_app(config, agent_factory=agent, environ={})
    with TestClient(app) as client:
        jobs = client.app.state.jobs  # type: ignore[attr-defined]
        wait_for(lambda: min(jobs.passes.values()) >= 1, "a first pass of each job")
        assert jobs.passes.keys() == {"goal sweep", "memory maintenance"}
        parts = made[0].parts
        goal = parts.goals.get("g1")
        assert goal is not None and goal.status == "aborted"
        assert parts.goals.history("g1")[-1].trigger == "timeout: active 3600s > 60s"
        [step] = parts.facts.list_facts(Accessor("u1", "ops", role="admin"), history=True)
        assert step.status == "expired"
        started = time.monotonic()
    assert time.monotonic() - started < GUARD_S  # shutdown did not wait an interval (1 h)


def test_off_runs_no_job(tmp_path: Path, ecommerce: CompiledPack, registry: Registry) -> None:
    url = f"sqlite:///{tmp_path / 'charter.db'}"
    base = serve_config(url)
    config = replace(base, serve=replace(base.serve, sweep_every="off", maintain_every="off"))

    def agent() -> Agent:
        return Agent.from_pack(
            ecommerce,
            llm=ScriptedLLM(default="好的"),
            database_url=url,
            memory_key=KEY,
            registry=registry,
        )

    with TestClient(create_app(config, agent_factory=agent, environ={})) as client:
        assert client.app.state.jobs.passes == {}  # type: ignore[attr-defined]


def test_stop_lets_a_pass_finish_and_bounds_the_wait() -> None:
    release = threading.Event()
    finished: list[str] = []

    def slow() -> None:
        release.wait(GUARD_S)
        finished.append("slow")

    async def scenario() -> dict[str, int]:
        jobs = Background([Job("slow", 3600.0, slow)])
        jobs.start()
        await asyncio.sleep(0.05)  # the first pass is running
        threading.Timer(0.1, release.set).start()
        await jobs.stop(timeout_s=GUARD_S)  # waits for the pass, not for the hour
        return jobs.passes

    assert asyncio.run(scenario()) == {"slow": 1}
    assert finished == ["slow"]


def test_a_pass_stuck_past_the_bound_is_abandoned_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stuck = threading.Event()

    async def scenario() -> dict[str, int]:
        jobs = Background([Job("stuck", 3600.0, lambda: stuck.wait(GUARD_S))])
        jobs.start()
        await asyncio.sleep(0.05)
        await jobs.stop(timeout_s=0.1)
        return jobs.passes

    try:
        # the loop ends and asyncio.run returns while the pass is still stuck: nothing joins
        # its thread (the default executor would be joined here, and at interpreter exit)
        assert asyncio.run(scenario()) == {"stuck": 0}
        [thread] = [t for t in threading.enumerate() if t.name == "charter stuck"]
        assert thread.daemon and thread.is_alive()
    finally:
        stuck.set()  # the worker thread ends too
    assert "charter stuck still running at shutdown: cancelled" in caplog.text


def test_a_failing_pass_is_logged_and_the_next_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("database went away")

    async def scenario() -> dict[str, int]:
        jobs = Background([Job("flaky", 0.01, flaky)])
        jobs.start()
        while len(calls) < 2:
            await asyncio.sleep(0.01)
        await jobs.stop()
        return jobs.passes

    assert asyncio.run(scenario())["flaky"] >= 1
    assert "flaky failed; next pass in 0.01s" in caplog.text


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("90s", 90.0), ("15m", 900.0), ("1h", 3600.0), ("2d", 172800.0), ("off", None)],
)
def test_intervals(value: str, seconds: float | None) -> None:
    check = SPECS["serve"]["maintain_every"].check
    assert check is not None and check("serve.maintain_every", value) is None
    assert every_seconds(value) == seconds


@pytest.mark.parametrize("value", ["0s", "1.5h", "hourly", "", "1 h x"])
def test_a_bad_interval_is_refused(value: str) -> None:
    check = SPECS["serve"]["sweep_every"].check
    assert check is not None
    assert check("serve.sweep_every", value) == (
        "CH403",
        f"serve.sweep_every must be an interval such as '1h' or '15m', or 'off', not '{value}'",
        "a whole number and s, m, h or d",
    )


def test_a_forget_waits_for_a_lifecycle_pass_in_progress(
    tmp_path: Path,
    ecommerce: CompiledPack,
    registry: Registry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pass that read a user's rows before a forget would write them back after it (a
    merged tag): the two never interleave."""
    import charter.agent.loop as loop

    entered, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow_pass(*_: object) -> None:
        entered.set()
        release.wait(GUARD_S)
        order.append("pass")

    monkeypatch.setattr(loop, "maintain", slow_pass)
    agent = Agent.from_pack(
        ecommerce,
        llm=ScriptedLLM(default="好的"),
        database_url=f"sqlite:///{tmp_path / 'charter.db'}",
        memory_key=KEY,
        registry=registry,
    )
    try:
        running = threading.Thread(target=agent.maintain)
        running.start()
        assert entered.wait(GUARD_S)
        forgetting = threading.Thread(
            target=lambda: order.append(f"forget {agent.forget('u1')['facts']}")
        )
        forgetting.start()
        forgetting.join(0.2)
        assert forgetting.is_alive() and order == []  # waiting for the pass
        release.set()
        running.join(GUARD_S)
        forgetting.join(GUARD_S)
        assert order == ["pass", "forget 0"]
    finally:
        agent.close()
