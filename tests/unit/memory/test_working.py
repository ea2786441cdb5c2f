"""Working memory bound to one turn by contextvars: concurrent turns (asyncio tasks and threads)
never see each other's working memory, nothing remains after a turn, turns do not nest."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from charter.memory import working
from charter.memory.working import (
    NestedTurnError,
    NoTurnError,
    WorkingMemory,
    aturn,
    current,
    in_turn,
    turn,
)

TASKS = 200
THREADS = 50
ROUNDS = 40


def _write(wm: WorkingMemory, marker: str) -> None:
    wm.active_context.current_task = f"task-{marker}"
    wm.active_context.user_intent = f"intent-{marker}"
    wm.active_context.tool_state["marker"] = marker
    wm.ephemeral_entities.append(marker)


def _check(marker: str, round_: int) -> list[str]:
    """What is wrong with the running turn's working memory, as seen by ``marker``'s turn."""
    wm = current()
    seen = (
        wm.session_id,
        wm.active_context.current_task,
        wm.active_context.user_intent,
        wm.active_context.tool_state.get("marker"),
        wm.active_context.tool_state.get("round"),
        tuple(wm.ephemeral_entities),
    )
    want = (f"s-{marker}", f"task-{marker}", f"intent-{marker}", marker, round_, (marker,))
    return [] if seen == want else [f"{marker} round {round_} saw {seen}"]


async def _async_turn(marker: str, start: asyncio.Event) -> list[str]:
    errors: list[str] = []
    await start.wait()
    async with aturn(f"s-{marker}") as wm:
        _write(wm, marker)
        for round_ in range(ROUNDS):
            current().active_context.tool_state["round"] = round_
            await asyncio.sleep(0)
            errors += _check(marker, round_)
            await asyncio.sleep(0)
            errors += await _nested_call(marker, round_)
    if in_turn():
        errors.append(f"{marker}: working memory left after the turn")
    return errors


async def _nested_call(marker: str, round_: int) -> list[str]:
    # a coroutine awaited by the turn shares its context
    await asyncio.sleep(0)
    return _check(marker, round_)


def _thread_turn(marker: str, barrier: threading.Barrier, errors: list[str]) -> None:
    barrier.wait()
    with turn(f"s-{marker}") as wm:
        _write(wm, marker)
        for round_ in range(ROUNDS):
            wm.active_context.tool_state["round"] = round_
            time.sleep(0)  # give the other threads the interpreter
            errors += _check(marker, round_)
    if in_turn():
        errors.append(f"{marker}: working memory left after the turn")


def test_concurrent_asyncio_turns_and_threads_never_see_each_other() -> None:
    thread_errors: list[str] = []
    barrier = threading.Barrier(THREADS + 1)
    threads = [
        threading.Thread(target=_thread_turn, args=(f"t{i}", barrier, thread_errors))
        for i in range(THREADS)
    ]
    for t in threads:
        t.start()

    async def main() -> list[str]:
        start = asyncio.Event()
        tasks = [asyncio.create_task(_async_turn(f"a{i}", start)) for i in range(TASKS)]
        await asyncio.sleep(0)  # every task is waiting on the event
        barrier.wait()  # the threads start with them
        start.set()
        results = await asyncio.gather(*tasks)
        return [e for errors in results for e in errors]

    async_errors = asyncio.run(main())
    for t in threads:
        t.join()
    assert async_errors == []
    assert thread_errors == []
    assert not in_turn()
    assert working._CURRENT.get() is None


def test_current_outside_a_turn_is_a_clear_error() -> None:
    with pytest.raises(NoTurnError) as info:
        current()
    assert str(info.value) == (
        "no turn is running here: working memory exists only inside `with turn(session_id):` "
        "or `async with aturn(session_id):`"
    )


def test_the_container_has_the_architecture_s_fields() -> None:
    with turn(
        "sess_20240521_abc123",
        current_task="宽带故障诊断",
        user_intent="确认是否需上门维修",
        tool_state={"ping_result": "timeout", "tracert_hops": 3},
        entities=["光猫型号HG6145V", "所在小区城西花园"],
    ) as wm:
        assert current() is wm
        assert wm.as_dict() == {
            "session_id": "sess_20240521_abc123",
            "active_context": {
                "current_task": "宽带故障诊断",
                "user_intent": "确认是否需上门维修",
                "tool_state": {"ping_result": "timeout", "tracert_hops": 3},
            },
            "ephemeral_entities": ["光猫型号HG6145V", "所在小区城西花园"],
        }


def test_the_turn_copies_what_it_is_given() -> None:
    state = {"a": 1}
    entities = ["x"]
    with turn("s", tool_state=state, entities=entities) as wm:
        wm.active_context.tool_state["b"] = 2
        wm.ephemeral_entities.append("y")
    assert state == {"a": 1}
    assert entities == ["x"]


def test_nothing_remains_after_a_turn_even_in_a_kept_reference() -> None:
    with turn("s1", current_task="t", tool_state={"k": "v"}, entities=["e"]) as wm:
        pass
    assert not in_turn()
    assert wm.closed
    assert wm.as_dict() == {
        "session_id": "s1",
        "active_context": {"current_task": None, "user_intent": None, "tool_state": {}},
        "ephemeral_entities": [],
    }
    with turn("s2") as second:
        assert second is not wm
        assert second.active_context.tool_state == {}


def test_a_turn_that_raises_leaves_nothing() -> None:
    with pytest.raises(ZeroDivisionError), turn("s1") as wm:
        wm.active_context.tool_state["k"] = "v"
        raise ZeroDivisionError
    assert not in_turn()
    assert wm.active_context.tool_state == {}
    with pytest.raises(NoTurnError):
        current()


def test_nested_turns_are_an_error_and_the_outer_turn_goes_on() -> None:
    with turn("outer") as outer:
        with pytest.raises(NestedTurnError) as info, turn("inner"):
            pass
        assert str(info.value) == (
            "a turn of session 'outer' is already running in this context; "
            "turn('inner') cannot start inside it"
        )
        assert current() is outer
    assert not in_turn()


def test_nested_async_turns_are_an_error() -> None:
    async def main() -> None:
        async with aturn("outer"):
            with pytest.raises(NestedTurnError):
                async with aturn("inner"):
                    pass
            assert current().session_id == "outer"

    asyncio.run(main())


def test_a_task_started_in_a_turn_belongs_to_it_and_cannot_nest() -> None:
    async def child() -> str:
        with pytest.raises(NestedTurnError):
            async with aturn("child"):
                pass
        return current().session_id

    async def main() -> str:
        async with aturn("parent"):
            return await asyncio.create_task(child())

    assert asyncio.run(main()) == "parent"


def test_a_task_outliving_its_turn_sees_nothing_and_may_start_its_own() -> None:
    async def late(turn_ended: asyncio.Event) -> tuple[bool, str]:
        await turn_ended.wait()
        refused = False
        try:
            current()
        except NoTurnError as exc:
            refused = str(exc).endswith("(this context's turn has ended)")
        async with aturn("later") as wm:
            return refused, wm.session_id

    async def main() -> tuple[bool, str]:
        ended = asyncio.Event()
        async with aturn("first") as wm:
            wm.active_context.tool_state["secret"] = "x"
            task = asyncio.create_task(late(ended))
        ended.set()
        return await task

    assert asyncio.run(main()) == (True, "later")


def test_a_thread_started_in_a_turn_does_not_inherit_it() -> None:
    seen: list[bool] = []
    with turn("s"):
        t = threading.Thread(target=lambda: seen.append(in_turn()))
        t.start()
        t.join()
    assert seen == [False]


def test_to_thread_carries_the_turn_into_the_worker() -> None:
    async def main() -> str:
        async with aturn("s-worker"):
            return await asyncio.to_thread(lambda: current().session_id)

    assert asyncio.run(main()) == "s-worker"
