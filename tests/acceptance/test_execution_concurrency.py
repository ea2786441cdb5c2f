"""Acceptance: a confirmed transfer executes once, however many workers take the yes (§8).

A minimal pack (written here into ``tmp_path``) has one intent, ``transfer``, with ``confirm:
true`` and a ``skill:`` binding to the executing skill ``transfer`` (``effect: execute``). Its
implementation is a counter: each execution appends one fixed-length line to a file (one
``os.write`` on an ``O_APPEND`` descriptor, so the count holds across processes) and returns a
transfer number made from its line's position (``TR-0001`` for the first, ``TR-0002`` for a
second execution that must never happen).

One agent takes ``给张三转账5000元``: the goal is pending and awaits the confirmation. Then every
worker sends ``是`` for the same user and session at once:

* 16 threads, each with its own ``Agent`` (one agent serialises a user's turns with a lock;
  separate agents are separate workers), started together behind a barrier;
* 4 processes (spawned), each with its own ``Agent`` and 4 threads on it.

Each variant runs on a SQLite file (WAL) and on PostgreSQL (a fresh schema; skipped, with the
reason, when no server is reachable). Checked afterwards: the counting file has one line; the
goal's history is exactly created → active → completed (one activation, one completion); the
ledger holds the key ``done``; every reply that told a result tells ``TR-0001`` and only one of
them ran the skill (the others carry ``replayed: True``); every reply is one of three known
ones (confirmed and told, confirmed while another worker finished it, nothing awaiting a yes
any more), so none tells a second transfer; no worker raised (the model is never asked: the
pack is ``strict`` and a question to the model would raise). Sequentially: after the completion another ``是`` and a retry of the confirmed
call with the same key run nothing.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import queue
import re
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from charter.agent import Agent, Reply
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.conversations.model import TurnModel
from charter.conversations.runner import TEST_MEMORY_KEY
from charter.goals.store import GoalStore
from charter.plugins.host import default_host
from charter.skills.executions import ExecutionLedger
from tests.support.postgres import fresh_schema

# slow: threads and processes racing on one transfer (2-6 s each)
pytestmark = pytest.mark.slow

ROOT = str(Path(__file__).resolve().parents[2])
THREADS = 16
PROCESSES = 4
PER_PROCESS = THREADS // PROCESSES
USER, SESSION = "u-race", "s-race"
ASK = "给张三转账5000元"
YES = "是"
SUMMARY = "已向张三转账5000元，流水号TR-0001。"
CONFIRMED = "好的，已确认。"
# a yes that finds the transfer confirmed and done (by another worker, or a double click): it
# is said to be done already, and the kept result is told again, not executed again
AGAIN = f"转账已经办理过了，不会重复办理。\n{SUMMARY}"
# a yes that comes while another worker holds the goal active (executing, not yet completed):
# nothing awaits it and nothing is done yet, so nothing is said about the transfer
UNANSWERED = "抱歉，这个问题我暂时无法回答。我可以帮您办理转账；如需人工服务，请说“转人工”。"
# every reply a worker may get, with its events: the yes that executed or replayed the transfer
# and told it; the yes that found the goal activated and done meanwhile; the yes after it all
REPLIES: Mapping[str, list[str]] = {
    f"{CONFIRMED}\n{SUMMARY}": ["confirmation_accepted", "result"],
    CONFIRMED: ["confirmation_accepted"],
    AGAIN: ["already_done", "result"],
    UNANSWERED: ["unanswered"],
}
NOW = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
# the skill takes a while, so the workers that lose the claim find it still running and wait
SKILL_S = 0.2

PACK: Mapping[str, str] = {
    "pack.yaml": """\
name: wire
version: 0.1.0
description: 并发确认同一笔转账：执行型技能每个目标只执行一次
""",
    "goals.yaml": """\
intents:
  - id: transfer
    describe: 转账
    trigger: input contains any ["转账", "汇款"]
    slots:
      - name: payee
        regex: (?:给|向)(?P<value>\\p{Han}{2,4}?)(?=转|汇|[0-9]|$)
        required: true
        ask: 请问收款人是谁？
      - name: amount
        extractor: money
        required: true
        ask: 请问您要转账多少钱？
    confirm: true
    description: 向{payee}转账{amount}元
    skill: {name: transfer, args: {payee: "{payee}", amount: "{amount}"}}
""",
    "skills/transfer.yaml": """\
name: transfer
description: 向收款人转账（执行一次即转出资金）
effect: execute
input_schema:
  type: object
  required: [payee, amount]
  additionalProperties: false
  properties:
    payee: {type: string, pattern: "^[\\\\u4e00-\\\\u9fff]{2,4}$"}
    amount: {type: number, minimum: 0.01}
output_schema:
  type: object
  required: [status, transfer_no, summary]
  properties:
    status: {const: done}
    transfer_no: {type: string, pattern: "^TR-[0-9]{4}$"}
    summary: {type: string, minLength: 1}
limits: {timeout: 5s}
""",
}

Outcome = dict[str, Any]  # what one worker's reply said, picklable


class CountingTransfer:
    """The executing skill: one line per execution, appended in one write."""

    name = "transfer"
    description = "counts its executions in a file"

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        time.sleep(SKILL_S)
        line = f"{os.getpid():>10} {threading.get_ident():>20}\n".encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            number = os.lseek(fd, 0, os.SEEK_CUR) // len(line)  # the end of this line
        finally:
            os.close(fd)
        no = f"TR-{number:04d}"
        summary = f"已向{args['payee']}转账{args['amount']}元，流水号{no}。"
        return {"status": "done", "transfer_no": no, "summary": summary}


def write_pack(root: Path) -> Path:
    for name, text in PACK.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def registry_with(count_path: str) -> Registry:
    base = default_host().registry
    return dataclasses.replace(
        base, skills={**base.skills, "transfer": CountingTransfer(count_path)}
    )


def compiled(pack_dir: str, registry: Registry) -> CompiledPack:
    pack, diagnostics = compile_path(pack_dir, registry)
    assert pack is not None and not diagnostics, [str(d) for d in diagnostics]
    return pack


def agent(pack: CompiledPack, registry: Registry, url: str) -> Agent:
    # no scripted answers: a turn that asked the model would raise (the pack is strict)
    return Agent.from_pack(
        pack,
        llm=TurnModel(),
        database_url=url,
        memory_key=TEST_MEMORY_KEY,
        registry=registry,
        environ={},
        clock=lambda: NOW,
    )


def outcome(reply: Reply) -> Outcome:
    return {
        "text": reply.text,
        "verdict": reply.verdict,
        "skills": [dict(s) for s in reply.skills],
        "events": [str(e.get("kind")) for e in reply.events],
    }


def say_yes(agents: list[Agent], start: threading.Barrier) -> tuple[list[Outcome], list[str]]:
    """One thread per agent in the list (an agent may appear more than once), all at once."""
    done: list[Outcome] = []
    errors: list[str] = []

    def run(a: Agent) -> None:
        try:
            start.wait()
            done.append(outcome(a.turn(USER, SESSION, YES)))
        except BaseException:  # reported by the test
            errors.append(traceback.format_exc())
            start.abort()

    threads = [threading.Thread(target=run, args=(a,)) for a in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done, errors


# ---- the race -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Setup:
    pack_dir: str
    url: str
    count_path: str
    goal_id: str


def set_up(tmp_path: Path, url: str) -> Setup:
    pack_dir = str(write_pack(tmp_path / "pack"))
    count_path = str(tmp_path / "executions.txt")
    registry = registry_with(count_path)
    with agent(compiled(pack_dir, registry), registry, url) as first:
        reply = first.turn(USER, SESSION, ASK)
    assert reply.verdict == "ask"
    assert reply.text == "请确认：向张三转账5000元？（是/否）"
    assert [g["status"] for g in reply.goals] == ["pending"]
    assert reply.skills == ()
    return Setup(pack_dir, url, count_path, str(reply.goals[0]["id"]))


def race_threads(s: Setup) -> tuple[list[Outcome], list[str]]:
    registry = registry_with(s.count_path)
    pack = compiled(s.pack_dir, registry)
    agents = [agent(pack, registry, s.url) for _ in range(THREADS)]
    try:
        return say_yes(agents, threading.Barrier(THREADS))
    finally:
        for a in agents:
            a.close()


def process_main(s: Setup, ready: Any, go: Any, out: Any) -> None:
    """One worker process: its own agent, PER_PROCESS threads on it, started with the others."""
    built = False
    try:
        registry = registry_with(s.count_path)
        with agent(compiled(s.pack_dir, registry), registry, s.url) as a:
            ready.put(os.getpid())
            built = True
            if not go.wait(timeout=120):
                raise TimeoutError("the parent never said go")
            done, errors = say_yes([a] * PER_PROCESS, threading.Barrier(PER_PROCESS))
        out.put((done, errors))
    except BaseException:
        if not built:  # the parent waits for every worker to be ready
            ready.put(None)
        out.put(([], [traceback.format_exc()]))


def race_processes(s: Setup) -> tuple[list[Outcome], list[str]]:
    # spawn: each worker starts from a fresh interpreter, as separate servers would. It imports
    # this module by name (tests.acceptance....): the repository root must be on the path it
    # is given, which pytest's importlib mode does not do (plain `pytest`, not `python -m`)
    ctx = multiprocessing.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=process_main, args=(s, ready, go, out)) for _ in range(PROCESSES)]
    added = ROOT not in sys.path
    if added:
        sys.path.insert(0, ROOT)
    try:
        for p in procs:
            p.start()
    finally:
        if added:
            sys.path.remove(ROOT)
    try:
        built = [wait_for(ready, procs) for _ in procs]  # every agent built before any yes
        assert None not in built, [out.get(timeout=10) for b in built if b is None]
        go.set()
        results = [out.get(timeout=120) for _ in procs]
    finally:
        go.set()
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():  # hung: ended so the run can report
                p.terminate()
                p.join()
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    return [o for done, _ in results for o in done], [e for _, errors in results for e in errors]


def wait_for(ready: Any, procs: list[Any], timeout_s: float = 120.0) -> Any:
    """The next worker's word that it is ready; fails at once when a worker died before."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            return ready.get(timeout=0.5)
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            assert not dead, f"a worker process died before it was ready (exit codes {dead})"
    raise TimeoutError(f"the worker processes were not ready within {timeout_s:g} s")


def check_once(s: Setup, outcomes: list[Outcome], errors: list[str]) -> None:
    assert errors == []
    assert len(outcomes) == THREADS
    # one execution
    assert len(Path(s.count_path).read_text().splitlines()) == 1
    # one activation, one completion
    with GoalStore(s.url) as store:
        history = [(h.from_status, h.to_status) for h in store.history(s.goal_id)]
        goal = store.get(s.goal_id)
    assert history == [(None, "pending"), ("pending", "active"), ("active", "completed")]
    assert goal is not None and goal.status == "completed"
    with ExecutionLedger(s.url) as ledger:
        held = ledger.get(s.goal_id)
    assert held is not None
    state, executed = held
    assert state == "done"
    assert executed is not None and executed.text == SUMMARY
    assert executed.result == {"status": "done", "transfer_no": "TR-0001", "summary": SUMMARY}
    # every reply that told a result tells the same one; one of them ran it
    told = [c for o in outcomes for c in o["skills"]]
    assert told, outcomes
    assert {(c["goal"], c["skill"], c["status"], c["text"]) for c in told} == {
        (s.goal_id, "transfer", "ok", SUMMARY)
    }
    assert all(c["args"] == {"payee": "张三", "amount": 5000} for c in told)
    assert [c["replayed"] for c in told].count(False) == 1
    for o in outcomes:
        # no reply tells a second transfer, or another number
        assert re.findall(r"TR-[0-9]{4}", o["text"]) in ([], ["TR-0001"]), o
        assert (o["text"], o["verdict"]) in {(text, "pass") for text in REPLIES}, o
        assert o["events"] == REPLIES[o["text"]], o
        assert len(o["skills"]) == o["events"].count("result"), o


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'agent.db'}"
        return
    with fresh_schema("charter_exec") as pg:
        yield pg


def test_16_threads_confirming_the_same_transfer_execute_it_once(url: str, tmp_path: Path) -> None:
    s = set_up(tmp_path, url)
    outcomes, errors = race_threads(s)
    check_once(s, outcomes, errors)


def test_4_processes_of_4_threads_confirming_the_same_transfer_execute_it_once(
    url: str, tmp_path: Path
) -> None:
    s = set_up(tmp_path, url)
    outcomes, errors = race_processes(s)
    check_once(s, outcomes, errors)


def test_after_completion_another_yes_and_a_retry_run_nothing(url: str, tmp_path: Path) -> None:
    s = set_up(tmp_path, url)
    registry = registry_with(s.count_path)
    pack = compiled(s.pack_dir, registry)
    with agent(pack, registry, s.url) as a:
        confirmed = a.turn(USER, SESSION, YES)
        double = a.turn(USER, SESSION, YES)  # the same worker, a double click
    assert confirmed.text == f"{CONFIRMED}\n{SUMMARY}"
    assert [dict(c)["replayed"] for c in confirmed.skills] == [False]
    assert [g["status"] for g in confirmed.goals] == ["completed"]
    assert (double.text, double.verdict) == (AGAIN, "pass")
    assert [dict(c)["replayed"] for c in double.skills] == [True]
    with agent(pack, registry, s.url) as b:  # another worker, after the completion
        again = b.turn(USER, SESSION, YES)
        assert (again.text, again.verdict) == (AGAIN, "pass")
        assert [dict(c)["replayed"] for c in again.skills] == [True]
        # a client's retry of the confirmed call: same skill, same arguments, same key
        assert b.parts.runner is not None
        retried = b.parts.runner.call("transfer", {"payee": "张三", "amount": 5000}, key=s.goal_id)
    assert (retried.status, retried.text, retried.replayed) == ("ok", SUMMARY, True)
    assert retried.result["transfer_no"] == "TR-0001"
    assert len(Path(s.count_path).read_text().splitlines()) == 1
    with GoalStore(s.url) as store:
        history = [(h.from_status, h.to_status) for h in store.history(s.goal_id)]
    assert history == [(None, "pending"), ("pending", "active"), ("active", "completed")]
