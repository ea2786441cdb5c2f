"""``ExecutionLedger``: an executing skill runs at most once per key — replayed afterwards,
released after a failure that changed nothing, kept after one whose effect is unknown, waited
for while another caller runs it; sixteen threads with one key run it once (SQLite and
PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from charter.skills.executions import Executed, ExecutionLedger
from tests.support.postgres import fresh_schema

OK = Executed("ok", "已转账", {"transfer_no": "TR-1"})


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        with fresh_schema("charter_ledger") as pg:
            yield pg


@pytest.fixture
def ledger(url: str) -> Iterator[ExecutionLedger]:
    with ExecutionLedger(url, poll_s=0.005) as made:
        yield made


class Counting:
    def __init__(self, executed: Executed = OK, gate: threading.Event | None = None) -> None:
        self.calls = 0
        self.executed = executed
        self.gate = gate
        self._lock = threading.Lock()

    def __call__(self) -> Executed:
        with self._lock:
            self.calls += 1
        if self.gate is not None:
            self.gate.wait(5)
        return self.executed


def test_the_first_call_runs_and_later_ones_replay(ledger: ExecutionLedger) -> None:
    run = Counting()
    first = ledger.once("g1", "transfer", {"amount": 5000}, run)
    again = ledger.once("g1", "transfer", {"amount": 5000}, run)
    assert (first.replayed, again.replayed, run.calls) == (False, True, 1)
    assert again.executed == OK
    assert ledger.get("g1") == ("done", OK)


def test_keys_are_independent(ledger: ExecutionLedger) -> None:
    run = Counting()
    ledger.once("g1", "transfer", {}, run)
    ledger.once("g2", "transfer", {}, run)
    assert run.calls == 2


@pytest.mark.parametrize(
    ("failure", "state", "calls"),
    [
        ("invalid_args", None, 2),  # refused before the skill: nothing happened, try again
        ("breaker_open", None, 2),
        ("error", None, 2),  # the skill raised: it did not execute
        ("timeout", "unknown", 1),  # it may have executed: never again
        ("contract_violation", "unknown", 1),
    ],
)
def test_a_failure_releases_the_key_only_when_nothing_happened(
    ledger: ExecutionLedger, failure: str, state: str | None, calls: int
) -> None:
    run = Counting(Executed("failed", "转账失败", None, failure, "detail"))
    ledger.once("g1", "transfer", {}, run)
    second = ledger.once("g1", "transfer", {}, run)
    assert run.calls == calls
    found = ledger.get("g1")
    assert (found[0] if found else None) == state
    if state == "unknown":
        assert second.replayed and second.executed is not None
        assert second.executed.failure == failure


def test_an_exception_releases_the_key(ledger: ExecutionLedger) -> None:
    def boom() -> Executed:
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError):
        ledger.once("g1", "transfer", {}, boom)
    assert ledger.get("g1") is None


def test_a_caller_waits_for_the_running_one_then_replays(ledger: ExecutionLedger) -> None:
    gate = threading.Event()
    run = Counting(gate=gate)
    results: list[object] = []
    first = threading.Thread(target=lambda: results.append(ledger.once("g1", "t", {}, run)))
    first.start()
    while ledger.get("g1") is None:  # the first caller holds the key
        pass
    waiter = threading.Thread(
        target=lambda: results.append(ledger.once("g1", "t", {}, run, wait_s=5))
    )
    waiter.start()
    gate.set()
    first.join()
    waiter.join()
    assert run.calls == 1
    assert sorted(r.replayed for r in results) == [False, True]


def test_a_caller_that_waits_too_long_is_told_it_is_still_running(
    ledger: ExecutionLedger,
) -> None:
    gate = threading.Event()
    run = Counting(gate=gate)
    first = threading.Thread(target=lambda: ledger.once("g1", "t", {}, run))
    first.start()
    while ledger.get("g1") is None:
        pass
    late = ledger.once("g1", "t", {}, run, wait_s=0.05)
    gate.set()
    first.join()
    assert (late.executed, late.replayed, run.calls) == (None, True, 1)


def test_sixteen_threads_one_key_one_execution(url: str) -> None:
    run = Counting()
    start = threading.Barrier(16)
    seen: list[bool] = []

    def worker() -> None:
        with ExecutionLedger(url, poll_s=0.005) as mine:  # each its own engine, as workers
            start.wait()
            seen.append(mine.once("g1", "transfer", {"amount": 5000}, run, wait_s=30).replayed)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert run.calls == 1
    assert sorted(seen) == [False] + [True] * 15


def test_forget_keys_removes_them(ledger: ExecutionLedger) -> None:
    ledger.once("g1", "t", {}, Counting())
    ledger.once("g2", "t", {}, Counting())
    assert ledger.forget_keys(["g1", "missing"]) == 1
    assert ledger.get("g1") is None and ledger.get("g2") is not None


def test_arguments_and_outcomes_are_stored_scrubbed(url: str) -> None:
    """An agent's ledger keeps no personal data in clear (issue 16): its scrubber runs over the
    arguments and every text of the outcome, which a replay then tells as stored."""
    card = "6222026815398387"

    def scrub(text: str) -> str:
        return text.replace(card, "[BANK_CARD]")

    executed = Executed("ok", f"已转到{card}", {"card": card, "n": [card, 3]}, None, card, card)
    with ExecutionLedger(url, scrub=scrub) as ledger:
        first = ledger.once("g1", "transfer", {"payee_card": card}, lambda: executed)
        again = ledger.once("g1", "transfer", {"payee_card": card}, lambda: executed)
        with ledger.engine.connect() as conn:
            rows = [str(tuple(r)) for r in conn.exec_driver_sql("SELECT * FROM skill_execution")]
    assert first.executed == executed and not first.replayed  # the caller sees what ran
    assert again.replayed and again.executed == Executed(
        "ok",
        "已转到[BANK_CARD]",
        {"card": "[BANK_CARD]", "n": ["[BANK_CARD]", 3]},
        None,
        "[BANK_CARD]",
        "[BANK_CARD]",
    )
    assert card not in "".join(rows) and "[BANK_CARD]" in "".join(rows)
