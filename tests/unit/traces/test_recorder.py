"""``TraceRecorder`` with a fake clock: offsets, durations, decisions, exceptions kept and
re-raised, values copied as JSON when a step ends; and trace ids that sort by time."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from datetime import datetime

import pytest

from charter.traces.model import Trace, TraceStep
from charter.traces.recorder import TraceIds, TraceRecorder, new_trace_id
from tests.support.traces import T0, FakeClock


def recorder(clock: FakeClock, tenant: str | None = None) -> TraceRecorder:
    return TraceRecorder(
        "u1", "s1", "finance", tenant=tenant, clock=clock, wall=lambda: T0, ids=lambda: "tr-test"
    )


def test_a_turn_with_three_steps() -> None:
    clock = FakeClock()
    rec = recorder(clock, tenant="acme")
    assert (rec.id, rec.started_at, rec.finished) == ("tr-test", T0, False)
    clock.advance(0.125)
    with rec.step("recall", inputs={"text": "上次说的合同第三条"}) as s:
        clock.advance(0.25)
        s.outputs["step"] = "entity"
        s.decision = "ladder: entity"
    with rec.step("plan", {"input": "订酒店"}, decision="split: 2 goals") as s:
        s.inputs["goals"] = 2  # learnt during the step: an input all the same
    clock.advance(0.5)
    with rec.step("generate"):
        clock.advance(1.5)
    clock.advance(0.0625)
    got = rec.finish("合同第三条约定了违约责任。", "pass")
    assert got == Trace(
        id="tr-test",
        user_id="u1",
        session_id="s1",
        domain="finance",
        started_at=T0,
        duration_ms=2437.5,
        steps=(
            TraceStep(
                "recall",
                125.0,
                250.0,
                {"text": "上次说的合同第三条"},
                {"step": "entity"},
                "ladder: entity",
            ),
            TraceStep("plan", 375.0, 0.0, {"input": "订酒店", "goals": 2}, {}, "split: 2 goals"),
            TraceStep("generate", 875.0, 1500.0, {}, {}),
        ),
        reply="合同第三条约定了违约责任。",
        verdict="pass",
        tenant="acme",
    )
    assert rec.finished


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (TimeoutError("after 2.0s"), "TimeoutError: after 2.0s"),
        (KeyError("order_id"), "KeyError: 'order_id'"),
        (RuntimeError(), "RuntimeError"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
    ],
    ids=["message", "key", "no message", "base exception"],
)
def test_a_step_that_raises_keeps_the_error_and_re_raises(exc: BaseException, error: str) -> None:
    clock = FakeClock()
    rec = recorder(clock)
    with pytest.raises(type(exc)) as raised, rec.step("skill", {"name": "policy_search"}) as s:
        s.outputs["attempt"] = 1
        clock.advance(2.0)
        raise exc
    assert raised.value is exc
    trace = rec.finish("", "escalate")
    assert trace.steps == (
        TraceStep("skill", 0.0, 2000.0, {"name": "policy_search"}, {"attempt": 1, "error": error}),
    )


def test_values_are_copied_as_json_when_the_step_ends() -> None:
    class Breaker:
        pass

    rec = recorder(FakeClock())
    facts = [{"key": "contract"}]
    with rec.step("recall", {"ids": ("f1", "f2"), "at": T0}) as s:
        s.outputs["facts"] = facts
        s.outputs["breaker"] = Breaker()  # not JSON: its type's name, not an address
        s.outputs["seen"] = {"b", "a"}
    facts.append({"key": "later"})  # a change after the step is not what the step saw
    s.outputs["late"] = True
    (step,) = rec.finish("", "pass").steps
    assert step.inputs == {"ids": ["f1", "f2"], "at": "2024-05-01T10:00:00Z"}
    assert step.outputs == {
        "facts": [{"key": "contract"}],
        "breaker": "<Breaker>",
        "seen": ["a", "b"],
    }
    assert s.step is step


def test_nested_steps_are_kept_in_the_order_they_started() -> None:
    clock = FakeClock()
    rec = recorder(clock)
    with rec.step("turn"):
        clock.advance(0.25)
        with rec.step("skill"):
            clock.advance(0.5)
    got = [(s.name, s.started_ms, s.duration_ms) for s in rec.finish("", "pass").steps]
    assert got == [("turn", 0.0, 750.0), ("skill", 250.0, 500.0)]


def test_misuse_is_a_runtime_error() -> None:
    rec = recorder(FakeClock())
    handle = rec.step("recall")
    with handle, pytest.raises(RuntimeError, match="step 'recall' is still running"):
        rec.finish("", "pass")
    with pytest.raises(RuntimeError, match="step 'recall' has already been entered"), handle:
        pass
    rec.finish("", "pass")
    with pytest.raises(RuntimeError, match="trace tr-test is finished already"):
        rec.finish("", "pass")
    with pytest.raises(RuntimeError, match="step 'late' comes too late"), rec.step("late"):
        pass


def test_a_real_clock_gives_non_negative_times() -> None:
    rec = TraceRecorder("u1", "s1", "finance")
    with rec.step("noop"):
        pass
    trace = rec.finish("", "pass")
    assert re.fullmatch(r"tr-[0-9a-z]{19}", trace.id)
    assert trace.started_at.tzinfo is not None
    assert trace.duration_ms >= trace.steps[0].started_ms + trace.steps[0].duration_ms >= 0


# ---- ids -------------------------------------------------------------------------------------


def scripted(values: list[int]) -> Callable[..., int]:
    it: Iterator[int] = iter(values)
    return lambda *_: next(it)


MS_2024 = int(T0.timestamp() * 1000)  # 1714557600000


@pytest.mark.parametrize(
    ("ms", "rnd", "want"),
    [
        ([0], [0], ["tr-0000000000000000000"]),
        ([MS_2024], [1], ["tr-1hwsshg800000000001"]),
        ([MS_2024], [2**50 - 1], ["tr-1hwsshg80zzzzzzzzzz"]),
        # the same millisecond, or the clock stepping back: the id still grows
        (
            [MS_2024, MS_2024, MS_2024 - 5],
            [7, 3, 9],
            [
                "tr-1hwsshg800000000007",
                "tr-1hwsshg800000000008",
                "tr-1hwsshg800000000009",
            ],
        ),
        # the random part full within one millisecond: on to the next
        ([MS_2024, MS_2024], [2**50 - 1, 0], ["tr-1hwsshg80zzzzzzzzzz", "tr-1hwsshg810000000000"]),
    ],
    ids=["zero", "2024", "max random", "same ms and clock back", "overflow"],
)
def test_ids(ms: list[int], rnd: list[int], want: list[str]) -> None:
    ids = TraceIds(now_ms=scripted(ms), randbits=scripted(rnd))
    assert [ids() for _ in want] == want


def test_ids_sort_as_text_by_time() -> None:
    times = [MS_2024 + d for d in (0, 1, 31, 32, 1000, 86_400_000, 10**12)]
    ids = TraceIds(now_ms=scripted(times), randbits=scripted([2**50 - 1, 0] * 4))
    made = [ids() for _ in times]
    assert made == sorted(made)
    assert len({len(i) for i in made}) == 1


def test_ids_are_unique_across_threads() -> None:
    made: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [new_trace_id() for _ in range(500)]
        with lock:
            made.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(made)) == 2000


def test_the_wall_clock_stamps_the_trace() -> None:
    at = datetime(2025, 1, 2, 3, 4, 5)
    rec = TraceRecorder("u1", "s1", "finance", wall=lambda: at, ids=lambda: "tr-x")
    assert rec.finish("", "pass").started_at == at
