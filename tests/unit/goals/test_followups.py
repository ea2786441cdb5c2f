"""Follow-ups, planned (the finance and medical packs' planners, pure): a ``carry:`` slot takes
its value from the open goals, then the session's finished ones, then — ``memory`` — the
user's facts; an input with no intent redoes the last request only when it is elliptical (那…呢,
换成…, little besides the value), with a value that tells (not a lone date); a yes after a
completed action is a repeat, after a refused one it is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter.contracts.registry import Registry
from charter.goals.planner import Planner
from charter.goals.plans import Plan, state_from
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def planners(registry: Registry) -> dict[str, Planner]:
    out = {}
    for name in ("finance", "medical"):
        pack, diags = compiled_with_diagnostics(name)
        assert pack is not None and pack.goals is not None, diags
        out[name] = Planner(pack.goals, registry, pack.constants)
    return out


BALANCE = {"id": "g1", "intent": "account-query", "status": "completed"}


def plan(planner: Planner, text: str, goals: list[dict[str, Any]], **remembered: Any) -> Plan:
    return planner.plan(text, state_from(goals, "2026-01-07T09:00", remembered))


@pytest.mark.parametrize(
    ("goals", "remembered", "carried", "from_memory"),
    [
        # an open goal first, then a finished one, then memory
        (
            [
                {**BALANCE, "slots": {"card_tail": "1234"}},
                {
                    "id": "g2",
                    "intent": "transfer",
                    "status": "pending",
                    "slots": {"card_tail": "5678"},
                },
            ],
            {"card_tail": "9009"},
            "5678",
            (),
        ),
        ([{**BALANCE, "slots": {"card_tail": "1234"}}], {"card_tail": "9009"}, "1234", ()),
        ([], {"card_tail": "9009"}, "9009", ("card_tail",)),
    ],
)
def test_where_a_carried_value_comes_from(
    planners: dict[str, Planner],
    goals: list[dict[str, Any]],
    remembered: dict[str, str],
    carried: str,
    from_memory: tuple[str, ...],
) -> None:
    made = plan(planners["finance"], "我的余额还有多少", goals, **remembered).goals[-1]
    assert (made.intent, dict(made.carried), made.remembered) == (
        "account-query",
        {"card_tail": carried},
        from_memory,
    )


def test_without_anything_to_carry_the_slot_is_asked(planners: dict[str, Planner]) -> None:
    made = plan(planners["finance"], "我的余额还有多少", []).goals[0]
    assert (made.carried, made.missing) == ({}, ("card_tail",))


@pytest.mark.parametrize(
    ("text", "redoes"),
    [
        ("那尾号9009呢", True),
        ("尾号9009", True),  # the value and nothing else
        ("还有尾号9009", True),
        ("尾号9009的那张卡我上个月刚办的", False),  # says something, asks nothing again
        ("明天呢", False),  # a date alone does not tell which request
        ("那尾号1234呢", False),  # the same value: nothing new to ask
    ],
)
def test_which_inputs_are_follow_ups(planners: dict[str, Planner], text: str, redoes: bool) -> None:
    done = {**BALANCE, "slots": {"card_tail": "1234", "item": "余额"}}
    got = plan(planners["finance"], text, [done])
    assert [g.redoes for g in got.goals] == (["g1"] if redoes else [])


def test_a_follow_up_is_no_correction(planners: dict[str, Planner]) -> None:
    done = {**BALANCE, "slots": {"card_tail": "1234", "item": "余额"}}
    made = plan(planners["finance"], "那尾号9009呢", [done]).goals[0]
    assert (dict(made.slots), dict(made.replaces)) == ({"card_tail": "9009", "item": "余额"}, {})


def test_a_symptom_update_is_not_a_follow_up(planners: dict[str, Planner]) -> None:
    symptom = {
        "id": "g1",
        "intent": "symptom",
        "status": "completed",
        "slots": {"symptoms": ["发烧"], "temperature": "38.5"},
    }
    assert plan(planners["medical"], "现在到39度了", [symptom]) == Plan()


TRANSFER = {"id": "g1", "intent": "transfer", "slots": {"payee": "张三", "amount": "5000"}}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("completed", Plan(mentions=("g1",), repeated=True)),
        ("aborted", Plan()),  # refused by the skill: nothing was done, nothing to repeat
    ],
)
def test_a_yes_after_the_action(planners: dict[str, Planner], status: str, expected: Plan) -> None:
    assert plan(planners["finance"], "是", [{**TRANSFER, "status": status}]) == expected
