"""The planner, one table row per behaviour, on the travel pack of seed 000 §2.3
(tests/fixtures/goals/travel): exact plans, the runaway cases of §4.3.1, determinism."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.compile.api import compile_path
from charter.compile.specs.goals import GoalsSpec
from charter.contracts.registry import Registry
from charter.goals.planner import OpenGoal, Planner, SessionState, slot_value, state_from
from tests.support.hypo import examples
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]
TRAVEL = ROOT / "tests" / "fixtures" / "goals" / "travel"
NOW = datetime(2026, 1, 7, 9, 0)  # a Wednesday


@pytest.fixture(scope="module")
def spec(registry: Registry) -> GoalsSpec:
    pack, diags = compile_path(TRAVEL, registry, cache_dir=None)
    assert pack is not None and pack.goals is not None, diags
    assert diags == []
    return pack.goals


@pytest.fixture(scope="module")
def planner(spec: GoalsSpec, registry: Registry) -> Planner:
    return Planner(spec, registry)


FLIGHT = {"date": "2026-01-13", "from_city": "上海", "to_city": "北京"}
FLIGHT_GOAL = {"id": "g1", "intent": "flight-booking", "slots": FLIGHT}

CASES: list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]] = [
    (
        "the seed's request splits into a root and two sub-goals; the hotel inherits the date",
        "帮我订下周二从上海到北京的机票，顺便查下国贸附近评分4.5以上的酒店",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "root",
                    "parent": None,
                    "status": "active",
                    "description": "差旅安排",
                },
                {
                    "ref": "n2",
                    "intent": "flight-booking",
                    "parent": "n1",
                    "status": "active",
                    "description": "预订2026-01-13从上海到北京的机票",
                    "slots": FLIGHT,
                },
                {
                    "ref": "n3",
                    "intent": "hotel-search",
                    "parent": "n1",
                    "status": "active",
                    "description": "查询国贸附近评分4.5以上的酒店，入住2026-01-13",
                    "slots": {"location": "国贸", "min_rating": "4.5"},
                    "inherited": {"date": "2026-01-13"},
                },
            ]
        },
    ),
    (
        "查下天气 never splits into cities (seed 000 §4.3.1)",
        "查下天气",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "weather",
                    "parent": None,
                    "status": "active",
                    "description": "查询？天气",
                }
            ]
        },
    ),
    (
        "several cities are one weather goal with a list slot",
        "查下北京、上海和广州的天气",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "weather",
                    "parent": None,
                    "status": "active",
                    "description": "查询北京、上海、广州天气",
                    "slots": {"city": ["北京", "上海", "广州"]},
                }
            ]
        },
    ),
    (
        "a fourth match merges into the aggregate goal",
        "订机票，订酒店，还要租车，再问下签证",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "root",
                    "parent": None,
                    "status": "active",
                    "description": "差旅安排",
                },
                {
                    "ref": "n2",
                    "intent": "flight-booking",
                    "parent": "n1",
                    "status": "pending",
                    "description": "预订？从？到？的机票",
                    "missing": ["date", "from_city", "to_city"],
                },
                {
                    "ref": "n3",
                    "intent": "hotel-search",
                    "parent": "n1",
                    "status": "active",
                    "description": "查询？附近评分？以上的酒店，入住？",
                },
                {
                    "ref": "n4",
                    "intent": "aggregate",
                    "parent": "n1",
                    "status": "active",
                    "description": "综合查询：租车、签证咨询",
                    "members": ["car-rental", "visa"],
                },
            ],
            "questions": ["请问您哪天出发？"],
        },
    ),
    (
        "depth never exceeds the limit: a grandchild of the root attaches at depth 2",
        "查下西湖附近的酒店，比比价格，再看看评论",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "hotel-search",
                    "parent": None,
                    "status": "active",
                    "description": "查询西湖附近评分？以上的酒店，入住？",
                    "slots": {"location": "西湖"},
                },
                {
                    "ref": "n2",
                    "intent": "price-compare",
                    "parent": "n1",
                    "status": "active",
                    "description": "比较酒店价格",
                },
                {
                    "ref": "n3",
                    "intent": "review-filter",
                    "parent": "n2",
                    "status": "active",
                    "description": "筛选评价",
                },
            ]
        },
    ),
    (
        "under an open root, a great-grandchild is capped at depth 2",
        "再比比价格，看看评论",
        [
            {"id": "g1", "intent": "root"},
            {"id": "g2", "intent": "hotel-search", "parent": "g1", "slots": {"location": "外滩"}},
        ],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "price-compare",
                    "parent": "g2",
                    "status": "active",
                    "description": "比较酒店价格",
                },
                {
                    "ref": "n2",
                    "intent": "review-filter",
                    "parent": "g2",
                    "status": "active",
                    "description": "筛选评价",
                },
            ]
        },
    ),
    (
        "a new intent joins the open root as a sub-goal and inherits from its sibling",
        "再帮我订个酒店",
        [{"id": "g1", "intent": "root"}, {**FLIGHT_GOAL, "id": "g2", "parent": "g1"}],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "hotel-search",
                    "parent": "g1",
                    "status": "active",
                    "description": "查询？附近评分？以上的酒店，入住2026-01-13",
                    "inherited": {"date": "2026-01-13"},
                }
            ]
        },
    ),
    (
        "missing required slots: pending, and the first question",
        "我想订机票",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "flight-booking",
                    "parent": None,
                    "status": "pending",
                    "description": "预订？从？到？的机票",
                    "missing": ["date", "from_city", "to_city"],
                }
            ],
            "questions": ["请问您哪天出发？"],
        },
    ),
    (
        "an answer fills the pending goal's slots; the next question follows",
        "明天",
        [
            {
                "id": "g1",
                "intent": "flight-booking",
                "status": "pending",
                "missing": ["date", "from_city", "to_city"],
            }
        ],
        {
            "updates": [{"goal": "g1", "slot": "date", "value": "2026-01-08"}],
            "questions": ["请问从哪个城市出发？"],
        },
    ),
    (
        "the last answer activates it",
        "从杭州到成都",
        [
            {
                "id": "g1",
                "intent": "flight-booking",
                "status": "pending",
                "slots": {"date": "2026-01-08"},
                "missing": ["from_city", "to_city"],
            }
        ],
        {
            "updates": [
                {"goal": "g1", "slot": "from_city", "value": "杭州"},
                {"goal": "g1", "slot": "to_city", "value": "成都"},
            ],
            "activate": ["g1"],
        },
    ),
    (
        "a correction updates the open goal instead of opening a new one",
        "改成周五出发",
        [FLIGHT_GOAL],
        {"updates": [{"goal": "g1", "slot": "date", "value": "2026-01-09"}]},
    ),
    (
        "naming an open goal's intent again updates it, never duplicates it",
        "机票改成从深圳出发",
        [FLIGHT_GOAL],
        {"updates": [{"goal": "g1", "slot": "from_city", "value": "深圳"}]},
    ),
    (
        "不用了 aborts the goal it names, with its open descendants",
        "酒店不用了",
        [
            {"id": "g1", "intent": "root"},
            {**FLIGHT_GOAL, "id": "g2", "parent": "g1"},
            {"id": "g3", "intent": "hotel-search", "parent": "g1"},
            {"id": "g4", "intent": "price-compare", "parent": "g3"},
        ],
        {"aborts": ["g3", "g4"]},
    ),
    (
        "取消 without a name aborts the latest open goal",
        "算了，取消吧",
        [FLIGHT_GOAL, {"id": "g2", "intent": "weather"}],
        {"aborts": ["g2"]},
    ),
    (
        "a request of the same group joins the open root goal",
        "再租辆车",
        [FLIGHT_GOAL],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "car-rental",
                    "parent": "g1",
                    "status": "active",
                    "description": "租车",
                }
            ]
        },
    ),
    (
        "an unrelated request starts a tree of its own instead of hanging under the open root",
        "顺便订个机票",
        [{"id": "g1", "intent": "weather", "slots": {"city": ["北京"]}}],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "flight-booking",
                    "parent": None,
                    "status": "pending",
                    "description": "预订？从？到？的机票",
                    "missing": ["date", "from_city", "to_city"],
                }
            ],
            "questions": ["请问您哪天出发？"],
        },
    ),
    (
        "a second request of the same intent with other values is a new goal, not an overwrite",
        "再订一张下周二从上海到成都的机票",
        [FLIGHT_GOAL],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "flight-booking",
                    "parent": "g1",
                    "status": "active",
                    "description": "预订2026-01-13从上海到成都的机票",
                    "slots": {"date": "2026-01-13", "from_city": "上海", "to_city": "成都"},
                }
            ]
        },
    ),
    (
        "a cancellation with a new request: the old goal goes, the new one comes",
        "天气不用了，帮我订个西湖附近的酒店",
        [{"id": "g1", "intent": "weather"}],
        {
            "aborts": ["g1"],
            "goals": [
                {
                    "ref": "n1",
                    "intent": "hotel-search",
                    "parent": None,
                    "status": "active",
                    "description": "查询西湖附近评分？以上的酒店，入住？",
                    "slots": {"location": "西湖"},
                }
            ],
        },
    ),
    (
        "clauses without an intent's words belong to the intent before them",
        "我要订机票，下周二，从杭州到深圳",
        [],
        {
            "goals": [
                {
                    "ref": "n1",
                    "intent": "flight-booking",
                    "parent": None,
                    "status": "active",
                    "description": "预订2026-01-13从杭州到深圳的机票",
                    "slots": {"date": "2026-01-13", "from_city": "杭州", "to_city": "深圳"},
                }
            ]
        },
    ),
    (
        "an input with no intent and no open question plans nothing",
        "你好，在吗",
        [],
        {},
    ),
]


@pytest.mark.parametrize(("why", "text", "goals", "expected"), CASES, ids=[c[0] for c in CASES])
def test_plan(
    planner: Planner, why: str, text: str, goals: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    assert planner.plan(text, state_from(goals, NOW.isoformat())).as_dict() == expected


def test_confirmation_flow(spec: GoalsSpec, registry: Registry) -> None:
    from dataclasses import replace

    asking = Planner(replace(spec, confirm_split_over=1), registry)
    plan = asking.plan("订下周二从上海到北京的机票，再订个国贸附近的酒店", SessionState(now=NOW))
    assert plan.confirm == (
        "检测到您可能需要同时处理2件事：预订2026-01-13从上海到北京的机票、"
        "查询国贸附近评分？以上的酒店，入住2026-01-13，是否继续？（Y/N）"
    )
    assert [(g.intent, g.status, g.awaiting) for g in plan.goals] == [
        ("root", "active", False),
        ("flight-booking", "pending", True),
        ("hotel-search", "pending", True),
    ]
    waiting = (
        OpenGoal("g1", "root"),
        OpenGoal("g2", "flight-booking", "pending", "g1", FLIGHT, awaiting=True),
        OpenGoal("g3", "hotel-search", "pending", "g1", awaiting=True),
    )
    yes = asking.plan("好的", SessionState(waiting, NOW))
    assert yes.as_dict() == {"activate": ["g2", "g3"]}
    no = asking.plan("不", SessionState(waiting, NOW))
    assert no.as_dict() == {"aborts": ["g1", "g2", "g3"]}  # the root the split made goes too


@pytest.mark.parametrize(
    ("value", "written", "expected"),
    [
        ((None, 1, 10), "1月10日", "--01-10"),
        ((2024, 5, None), "2024年5月", "2024-05"),
        (Decimal("12000.0"), "1.2万元", "12000"),
        (object(), "浙江省杭州市西湖区文三路90号", "浙江省杭州市西湖区文三路90号"),
    ],
)
def test_slot_value_formats(value: Any, written: str, expected: str) -> None:
    assert slot_value(value, NOW, written) == expected


def test_time_slots_follow_the_clock(planner: Planner) -> None:
    monday = SessionState(now=datetime(2026, 1, 5, 20, 0))
    plan = planner.plan("订明天从北京到上海的机票", monday)
    assert plan.goals[0].slots["date"] == "2026-01-06"


WORDS = [
    "机票",
    "酒店",
    "签证",
    "租车",
    "天气",
    "比价",
    "看评价",
    "取消",
    "改成",
    "从上海",
    "到北京",
]
WORDS += ["下周二", "明天", "国贸附近", "评分4.5以上", "，", "顺便", "再", "你好"]


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(parts=st.lists(st.sampled_from(WORDS), max_size=10))
def test_deterministic_and_within_limits(
    planner: Planner, spec: GoalsSpec, parts: list[str]
) -> None:
    text = "".join(parts)
    state = SessionState(now=NOW)
    plan = planner.plan(text, state)
    assert plan == planner.plan(text, state)
    depth = {g.ref: g.depth for g in plan.goals}
    for g in plan.goals:
        assert g.depth <= spec.max_depth
        assert g.parent is None or depth[g.parent] == g.depth - 1
    per_parent: dict[str | None, int] = {}
    for g in plan.goals:
        if g.intent != "root":
            per_parent[g.parent] = per_parent.get(g.parent, 0) + 1
    assert all(n <= spec.max_new_subgoals for n in per_parent.values())


@pytest.mark.parametrize(
    "text", ["不对，是3000元", "不对,是3000元", "应该是3000元", "不对，金额改成3000元"]
)
def test_a_bare_value_after_bu_dui_corrects_the_open_goal(registry: Registry, text: str) -> None:
    pack, diags = compiled_with_diagnostics("finance")
    assert pack is not None and pack.goals is not None, diags
    planner = Planner(pack.goals, registry, pack.constants)
    open_transfer = OpenGoal(id="g1", intent="transfer", slots={"payee": "张三", "amount": 5000.0})
    plan = planner.plan(text, SessionState((open_transfer,)))
    assert plan.as_dict() == {"updates": [{"goal": "g1", "slot": "amount", "value": "3000"}]}
