"""Acceptance: under concurrency every goal transition happens exactly once (seed 000 §3.3.2).

Sixteen workers race to move the same 200 goals through the same transitions: each activates
every goal; on every fifth goal a quarter of them back it off to ``pending`` and activate it
again; then each completes it, except that on every fourth goal half of them abort it instead
(``expect="active"``, as the sweeper does). Every attempt carries a trigger naming its worker
and step, so each success can be matched with the one history row it must have written.

Checked afterwards: the successes the workers saw are exactly the history rows (no transition
lost, none twice), the hook saw exactly those too, and replaying each goal's history from its
creation follows ``states.TRANSITIONS`` and ends in the status ``goal_tree`` holds, which is
``completed`` or ``aborted``.

Runs on a SQLite file in WAL mode (16 threads; 4 processes x 4 threads) and on PostgreSQL
(the same; database ``test``, a fresh schema per test, skipped when no server is reachable).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from charter.compile.specs.goal_states import Status, allowed
from charter.contracts.events import GoalTransition
from charter.goals.store import GoalStore
from tests.support.postgres import fresh_schema

GOALS = 200
WORKERS = 16
PROCESSES = 4

Success = tuple[str, str | None, str, str]  # goal, from, to, trigger


def plan(worker: int, index: int) -> list[tuple[Status, Status | None]]:
    """What one worker tries on goal number ``index``: (to, expect) in order."""
    steps: list[tuple[Status, Status | None]] = [("active", None)]
    if index % 5 == 0 and worker % 4 == 0:
        steps += [("pending", None), ("active", None)]
    if index % 4 == 0 and worker % 2 == 1:
        steps.append(("aborted", "active"))
    else:
        steps.append(("completed", None))
    return steps


def work(
    store: GoalStore, worker: int, goal_ids: Sequence[str], start: threading.Barrier
) -> list[Success]:
    done: list[Success] = []
    start.wait()
    for index, goal_id in enumerate(goal_ids):
        for step, (to, expect) in enumerate(plan(worker, index)):
            trigger = f"w{worker}:{index}:{step}"
            result = store.transition(goal_id, to, actor="agent", trigger=trigger, expect=expect)
            if result.ok:
                done.append((goal_id, result.from_status, to, trigger))
    return done


def run_threads(
    url: str, workers: Sequence[int], goal_ids: Sequence[str]
) -> tuple[list[Success], list[Success]]:
    """Workers on threads sharing one store; what they did and what the hook saw."""
    seen: list[Success] = []

    def hook(e: GoalTransition) -> None:
        seen.append((e.goal_id, e.from_status, e.to_status, e.trigger))

    start = threading.Barrier(len(workers))
    results: dict[int, list[Success]] = {}
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            results[worker] = work(store, worker, goal_ids, start)
        except BaseException as exc:  # reported by the parent
            errors.append(exc)
            start.abort()

    with GoalStore(url, on_transition=hook) as store:
        threads = [threading.Thread(target=run, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return [s for w in workers for s in results[w]], seen


def process_main(url: str, workers: list[int], goal_ids: list[str], out: Any) -> None:
    try:
        out.put(("ok", run_threads(url, workers, goal_ids)))
    except BaseException as exc:
        out.put(("error", repr(exc)))


def run_processes(url: str, goal_ids: list[str]) -> tuple[list[Success], list[Success]]:
    # fork: the children inherit this module as it is (no re-import under pytest's importlib
    # mode); the parent holds no open connection when it forks (its store is closed)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    per = WORKERS // PROCESSES
    procs = [
        ctx.Process(
            target=process_main, args=(url, list(range(p * per, (p + 1) * per)), goal_ids, out)
        )
        for p in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    replies = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [kind for kind, _ in replies] == ["ok"] * PROCESSES, replies
    successes = [s for _, (done, _) in replies for s in done]
    seen = [s for _, (_, hooked) in replies for s in hooked]
    return successes, seen


def create_goals(url: str) -> list[str]:
    goal_ids = [f"g{i:03d}" for i in range(GOALS)]
    with GoalStore(url) as store:
        for goal_id in goal_ids:
            store.create("race", user_id="u", session_id="s", goal_id=goal_id)
    return goal_ids


def verify(
    url: str, goal_ids: list[str], successes: list[Success], seen: list[Success]
) -> Counter[str]:
    with GoalStore(url) as store:
        history = {goal_id: store.history(goal_id) for goal_id in goal_ids}
        final = {g.id: g.status for g in store.tree("u", "s")}
    recorded = [
        (h.goal_id, h.from_status, h.to_status, h.trigger)
        for rows in history.values()
        for h in rows[1:]
    ]
    assert len(set(successes)) == len(successes)
    assert Counter(successes) == Counter(recorded)
    assert Counter(seen) == Counter(recorded)
    for goal_id, rows in history.items():
        assert (rows[0].from_status, rows[0].to_status) == (None, "pending")
        status: str = "pending"
        for h in rows[1:]:
            assert h.from_status == status and allowed(status, h.to_status), (goal_id, rows)
            status = h.to_status
        assert final[goal_id] == status
        assert status in ("completed", "aborted"), (goal_id, rows)
    return Counter(f"{frm}->{to}" for _, frm, to, _ in recorded)


def check(url: str, race: Callable[[str, list[str]], tuple[list[Success], list[Success]]]) -> None:
    goal_ids = create_goals(url)
    successes, seen = race(url, goal_ids)
    moves = verify(url, goal_ids, successes, seen)
    # each goal activated once, plus once more per back-off; ended exactly once
    assert moves["pending->active"] == GOALS + moves["active->pending"]
    assert moves["active->completed"] + moves["active->aborted"] == GOALS
    assert moves["active->aborted"] <= GOALS // 4


def threads(url: str, goal_ids: list[str]) -> tuple[list[Success], list[Success]]:
    return run_threads(url, range(WORKERS), goal_ids)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'race.db'}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema("charter_race") as url:
        yield url


def test_sqlite_threads_race_and_each_transition_happens_once(sqlite_url: str) -> None:
    check(sqlite_url, threads)


def test_sqlite_processes_race_and_each_transition_happens_once(sqlite_url: str) -> None:
    check(sqlite_url, run_processes)


@pytest.mark.slow  # threads racing over PostgreSQL (about 4 s)
def test_postgres_threads_race_and_each_transition_happens_once(pg_url: str) -> None:
    check(pg_url, threads)


@pytest.mark.slow  # processes racing over PostgreSQL (about 4 s)
def test_postgres_processes_race_and_each_transition_happens_once(pg_url: str) -> None:
    check(pg_url, run_processes)
