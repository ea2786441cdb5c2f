"""Values said in this input win (issue 32, item 2), on a keyword-only operator pack
(tests/fixtures/goals/telecom): a ``carry:`` slot takes the value an earlier request of the
same input was given before the session's or memory's, without ``inherits``; a question about
an action (its price, how it is done) does not open it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.goals.planner import Planner
from charter.goals.plans import Plan, state_from

TELECOM = Path(__file__).resolve().parents[2] / "fixtures" / "goals" / "telecom"
EARLIER = {"id": "g1", "intent": "bill-query", "status": "completed"}
SAID_BEFORE = [{**EARLIER, "slots": {"phone": "+8613912345678"}}]


@pytest.fixture(scope="module")
def planner(registry: Registry) -> Planner:
    pack, diags = compile_path(TELECOM, registry, cache_dir=None)
    assert pack is not None and pack.goals is not None, diags
    return Planner(pack.goals, registry, pack.constants)


def plan(planner: Planner, text: str, goals: list[dict[str, Any]], **remembered: Any) -> Plan:
    return planner.plan(text, state_from(goals, "2026-01-07T09:00", remembered))


def slots(p: Plan) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(g.intent, dict(g.slots), dict(g.carried)) for g in p.goals if g.intent != "root"]


def test_a_number_said_in_this_input_beats_the_one_said_before(planner: Planner) -> None:
    made = plan(planner, "查一下18612345678的话费，顺便把套餐换成99元", SAID_BEFORE)
    assert slots(made) == [
        ("bill-query", {"phone": "+8618612345678"}, {}),
        ("plan-change", {"plan": "99", "phone": "+8618612345678"}, {}),
    ]


def test_and_beats_the_remembered_one(planner: Planner) -> None:
    made = plan(planner, "查一下18612345678的话费，再办个停机保号", [], phone="+8613700000000")
    assert [s[1].get("phone") for s in slots(made)] == ["+8618612345678", "+8618612345678"]


def test_a_later_request_s_value_is_its_own(planner: Planner) -> None:
    # the number belongs to the plan change said after: the bill query carries the session's
    made = plan(planner, "查下话费，另外把18612345678的套餐换成99元", SAID_BEFORE)
    assert slots(made) == [
        ("bill-query", {}, {"phone": "+8613912345678"}),
        ("plan-change", {"plan": "99", "phone": "+8618612345678"}, {}),
    ]


def test_without_a_value_in_the_input_the_session_s_is_carried(planner: Planner) -> None:
    made = plan(planner, "把套餐换成99元", SAID_BEFORE)
    assert slots(made) == [("plan-change", {"plan": "99"}, {"phone": "+8613912345678"})]


@pytest.mark.parametrize(
    "text", ["停机保号一个月多少钱", "停机保号最长能停多久", "怎么办理停机保号", "换套餐在哪办"]
)
def test_a_question_about_an_action_does_not_open_it(planner: Planner, text: str) -> None:
    made = plan(planner, text, SAID_BEFORE)
    assert (made.goals, made.asks, made.awaits) == ((), (), ())


@pytest.mark.parametrize("text", ["帮我办停机保号", "停机保号，号码18612345678", "能帮我换套餐吗"])
def test_a_request_of_an_action_opens_it(planner: Planner, text: str) -> None:
    assert [i for i, _, _ in slots(plan(planner, text, SAID_BEFORE))] in (
        ["suspension"],
        ["plan-change"],
    )
