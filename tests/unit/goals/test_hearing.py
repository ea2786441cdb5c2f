"""Understanding beyond keywords, through the planner (ARCHITECTURE §6a), on the small bank pack
(tests/fixtures/goals/bank): its examples embedded by the ``hash`` embedder, whose similarities
are the same on every machine, so the decisions below are exact. Safety first, dialogue acts
while something is pending, keywords before examples (and then nothing is embedded), the
examples' three outcomes, and the clarifying question answered each way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter.agent.parts import understander_for
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.specs.goals import CLARIFY_INTENT
from charter.compile.specs.understanding import Decision
from charter.contracts.registry import Registry
from charter.goals.planner import OpenGoal, Plan, Planner, SessionState

BANK = Path(__file__).resolve().parents[2] / "fixtures" / "goals" / "bank"


@pytest.fixture(scope="module")
def pack(registry: Registry) -> CompiledPack:
    pack, diags = compile_path(BANK, registry, cache_dir=None)
    assert pack is not None, diags
    assert [d.code for d in diags] == []
    return pack


@pytest.fixture
def planner(pack: CompiledPack, registry: Registry) -> Planner:
    assert pack.goals is not None
    return Planner(pack.goals, registry, pack.constants, understander_for(pack, registry, None))


AWAITING = OpenGoal(
    "g1", "transfer", "pending", slots={"payee": "张三", "amount": "500"}, awaiting=True
)
ASKING = OpenGoal("g1", "transfer", "pending", slots={"payee": "张三"}, missing=("amount",))


def intents(plan: Plan) -> list[str]:
    return [g.intent for g in plan.goals]


def test_the_pack_compiles_its_examples_with_the_hash_embedder(pack: CompiledPack) -> None:
    u = pack.understanding
    assert u is not None
    assert (u.embedder, u.margin) == ("hash", 0.2)
    assert [(b.intent, b.safety) for b in u.bands] == [
        ("fraud", True),
        ("balance", False),
        ("transfer", False),
    ]
    for band in u.bands:  # a middle band under each ordinary intent's open band
        assert band.ask <= band.open
    assert len(u.texts) == 5 + 6 + 1 + 6 + 1 + 5  # examples, not_examples, out of scope


def test_a_keyword_decides_without_embedding(planner: Planner) -> None:
    plan = planner.plan("帮我查一下余额", SessionState())
    assert (intents(plan), plan.layer, plan.heard) == (["balance"], "keyword", None)
    assert planner.understander is not None and planner.understander.embedded == 0


@pytest.mark.parametrize(
    ("text", "intent"),
    [("账上还剩多少", "balance"), ("卡里还有多少", "balance"), ("打钱给张三", "transfer")],
)
def test_examples_open_an_intent_no_trigger_names(planner: Planner, text: str, intent: str) -> None:
    plan = planner.plan(text, SessionState())
    assert (intents(plan), plan.layer) == ([intent], "example")
    assert plan.heard is not None and plan.heard.decision is Decision.OPEN
    assert planner.understander is not None and planner.understander.embedded == 1


def test_slots_are_read_from_an_input_the_examples_recognised(planner: Planner) -> None:
    plan = planner.plan("打钱给张三", SessionState())
    assert (plan.goals[0].status, dict(plan.goals[0].slots)) == ("pending", {"payee": "张三"})
    assert plan.questions == ("请问转多少钱？",)


def test_out_of_scope_talk_opens_nothing(planner: Planner) -> None:
    plan = planner.plan("今天天气", SessionState())
    assert (plan.goals, plan.layer) == ((), "")
    assert plan.heard is not None and plan.heard.decision is Decision.NONE
    vetoes = {s.intent: s.vetoed_by for s in plan.heard.ranking}
    assert vetoes["balance"] == "今天天气怎么样"


def test_two_close_intents_get_one_clarifying_question(planner: Planner) -> None:
    plan = planner.plan("卡里的钱打给张三还剩多少", SessionState())
    assert plan.clarify == ("balance", "transfer")
    (goal,) = plan.goals
    assert (goal.intent, goal.status) == (CLARIFY_INTENT, "pending")
    assert goal.slots["candidates"] == ["balance", "transfer"]


def test_the_middle_band_asks_whether_it_is_that_intent(planner: Planner) -> None:
    plan = planner.plan("卡里", SessionState())
    assert plan.clarify == ("balance",)
    assert plan.heard is not None and plan.heard.decision is Decision.CONFIRM


def clarifying(*candidates: str, values: dict[str, Any] | None = None) -> SessionState:
    slots = {"candidates": list(candidates), "values": values or {}}
    return SessionState(goals=(OpenGoal("c1", CLARIFY_INTENT, "pending", slots=slots),))


@pytest.mark.parametrize(
    ("candidates", "answer", "intent"),
    [
        (("balance", "transfer"), "查余额", "balance"),  # its own trigger
        (("balance", "transfer"), "转账", "transfer"),
        (("balance", "transfer"), "第二个", "transfer"),
        (("balance", "transfer"), "前者", "balance"),
        (("balance", "transfer"), "查询余额吧", "balance"),
        (("balance",), "对的", "balance"),  # 您是想查询余额吗？ 对的
        (("balance",), "嗯嗯，是的", "balance"),
    ],
)
def test_the_answer_to_a_clarifying_question_opens_what_it_picks(
    planner: Planner, candidates: tuple[str, ...], answer: str, intent: str
) -> None:
    plan = planner.plan(answer, clarifying(*candidates))
    assert intents(plan) == [intent]
    assert plan.layer == "clarified" or (plan.layer == "keyword" and intent in answer)
    assert "c1" in plan.aborts


def test_the_first_input_s_values_go_to_the_clarified_intent(planner: Planner) -> None:
    state = clarifying("balance", "transfer", values={"transfer": {"payee": "张三"}})
    plan = planner.plan("第二个，转200元", state)
    (goal,) = plan.goals
    assert (goal.intent, dict(goal.slots)) == ("transfer", {"payee": "张三", "amount": "200"})
    assert goal.awaiting  # an action: confirmed before it is done


@pytest.mark.parametrize("answer", ["不是", "都不是", "不对", "算了"])
def test_a_no_to_a_clarifying_question_is_told(planner: Planner, answer: str) -> None:
    plan = planner.plan(answer, clarifying("balance"))
    assert (plan.goals, plan.aborts, plan.clarify_declined) == ((), ("c1",), True)


def test_something_else_drops_the_question_and_is_planned_as_usual(planner: Planner) -> None:
    plan = planner.plan("帮我查一下余额", clarifying("transfer"))
    assert (intents(plan), plan.aborts, plan.clarify_declined) == (["balance"], ("c1",), False)


@pytest.mark.parametrize("text", ["行，办吧", "好的呀", "可以可以", "OK的", "没问题，转吧"])
def test_a_yes_said_many_ways_confirms_what_awaits(planner: Planner, text: str) -> None:
    plan = planner.plan(text, SessionState(goals=(AWAITING,)))
    assert (plan.activate, plan.accepted, plan.layer) == (("g1",), True, "act")


@pytest.mark.parametrize("text", ["等等，先不弄了", "先别转了", "我再想想", "不行", "no"])
def test_a_no_or_a_stop_drops_what_awaits(planner: Planner, text: str) -> None:
    plan = planner.plan(text, SessionState(goals=(AWAITING,)))
    assert plan.aborts == ("g1",) and not plan.activate


def test_a_stop_while_a_question_is_pending_drops_that_request(planner: Planner) -> None:
    plan = planner.plan("等等，先不弄了", SessionState(goals=(ASKING,)))
    assert (plan.aborts, plan.layer) == (("g1",), "act")


def test_an_answer_to_the_question_is_not_an_act(planner: Planner) -> None:
    plan = planner.plan("800元", SessionState(goals=(ASKING,)))
    assert [(u.slot, u.value) for u in plan.updates] == [("amount", "800")]
    assert plan.layer == "answer"


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (SessionState(), "有人让我转钱到安全账户"),  # its keyword
        (SessionState(goals=(AWAITING,)), "等等，我是不是被骗了"),  # a transfer awaiting
        (SessionState(goals=(ASKING,)), "不是被骗，是有人冒充客服"),  # negation does not cancel
    ],
)
def test_a_safety_intent_comes_first_whatever_is_pending(
    planner: Planner, state: SessionState, text: str
) -> None:
    plan = planner.plan(text, state)
    assert (intents(plan), plan.layer) == (["fraud"], "safety")
    assert plan.goals[0].status == "active"
    awaiting = [g.id for g in state.goals if g.awaiting]
    assert list(plan.aborts) == awaiting  # a yes after a fraud report sends nothing


def test_a_safety_intent_is_opened_by_its_examples_too(planner: Planner) -> None:
    plan = planner.plan("陌生人让我把钱转过去", SessionState())
    assert (intents(plan), plan.layer) == (["fraud"], "safety")
    assert plan.heard is not None and plan.heard.safety == ("fraud",)


@pytest.mark.parametrize("text", ["转账手续费多少", "转账多久能到", "转账在哪里办"])
def test_a_question_of_a_fact_no_example_asks_is_no_request(planner: Planner, text: str) -> None:
    # the transfer's examples ask no price, time or place: the question is about transferring
    plan = planner.plan(text, SessionState())
    assert (intents(plan), plan.asks) == ([], ())


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("余额还有多少", "balance"),  # the balance's examples ask how much
        ("给张三转账500元要多久到", "transfer"),  # the question gives the transfer its amount
    ],
)
def test_a_question_its_examples_ask_or_that_gives_a_value_is_a_request(
    planner: Planner, text: str, intent: str
) -> None:
    assert intents(planner.plan(text, SessionState())) == [intent]


def test_a_mild_input_is_no_emergency_by_the_examples_alone(planner: Planner) -> None:
    # 陌生人让我把钱转过去 opens the fraud intent by its examples; said as a mild matter, the
    # examples alone do not (its keywords still would: 有点担心被骗了)
    plan = planner.plan("陌生人有点让我把钱转过去", SessionState())
    assert plan.layer != "safety"
    assert plan.heard is not None and plan.heard.safety == ("fraud",)
    assert intents(planner.plan("有点担心被骗了", SessionState())) == ["fraud"]


@pytest.mark.parametrize("text", ["不是我的卡", "不对，我的卡"])
def test_a_no_to_what_awaits_is_no_report_by_the_examples(planner: Planner, text: str) -> None:
    plan = planner.plan(text, SessionState(goals=(AWAITING,)))
    assert (intents(plan), plan.layer, list(plan.aborts)) == ([], "act", ["g1"])


def test_a_question_of_a_fact_about_an_open_request_is_no_answer_to_it(planner: Planner) -> None:
    asking = OpenGoal("g1", "transfer", "pending", slots={}, missing=("payee", "amount"))
    plan = planner.plan("转账手续费多少", SessionState(goals=(asking,)))
    assert (intents(plan), plan.updates, plan.asks) == ([], (), ())
