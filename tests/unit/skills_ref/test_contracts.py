"""The three first-party packs' skill contracts, run through ``SkillRunner`` against the
reference implementations of ``charter-skills``: every ``tests:`` case of every contract, then
the seed 001 §4 scenarios spelt out (ticket contents, step traces, a fallback that calls
another skill, the breaker opening for real)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from charter.compile.compiled import CompiledPack
from charter.compile.specs.skills import SkillCase, SkillsSpec
from charter.plugins.host import default_registry
from charter.skills.runner import SkillOutcome, SkillRunner
from charter.skills.tickets import TicketStore
from tests.support.packs import compiled_with_diagnostics
from tests.support.skills_ref import make_runner

ROOT = Path(__file__).resolve().parents[3]
PACKS = ("finance", "ecommerce", "medical")
SKILLS = {
    "finance": [
        "account_balance",
        "compliance_check",
        "invoice_issue",
        "policy_search",
        "quarterly_report",
        "transfer",
    ],
    "ecommerce": [
        "coupon_check",
        "logistics_track",
        "order_lookup",
        "product_price",
        "return_request",
    ],
    "medical": ["appointment_book", "department_recommend"],
}
# the executing skills (effect: execute) whose protocols never answer in the skill's place: a
# failure is told as not done (error, breaker open) or as unknown (timeout, a broken result)
NEVER_STAND_IN = ("invoice_issue", "return_request", "transfer")
# the checks an action's stage runs before its confirmation (a query): no FAQ in their place
# either, every failure is told as the action not done yet (it waits, unchecked)
STAGE_CHECKS = ("compliance_check",)
# the status of an executing skill's result when it did what it was asked
DONE = {
    "transfer": "done",
    "invoice_issue": "issued",
    "return_request": "accepted",
    "appointment_book": "booked",
}


def compiled(name: str) -> CompiledPack:
    pack, diags = compiled_with_diagnostics(name)
    assert diags == [], [str(d) for d in diags]
    return pack


def spec(name: str) -> SkillsSpec:
    skills = compiled(name).skills
    assert skills is not None
    return skills


def all_cases() -> Iterator[Any]:
    for name in PACKS:
        for contract in spec(name).contracts:
            for case in contract.cases:
                yield pytest.param(name, contract.name, case, id=f"{contract.name}:{case.name}")


@pytest.fixture
def tickets(tmp_path: Path) -> Iterator[TicketStore]:
    store = TicketStore(f"sqlite:///{tmp_path / 'tickets.db'}")
    yield store
    store.dispose()


@pytest.fixture
def runner_for(tickets: TicketStore) -> Iterator[Any]:
    made: list[SkillRunner] = []

    def make(pack_name: str) -> SkillRunner:
        made.append(make_runner(pack_name, tickets))
        return made[-1]

    yield make
    for r in made:
        r.close()


def count(outcome: SkillOutcome, results_key: str) -> int | None:
    if isinstance(outcome.result, Mapping) and isinstance(outcome.result.get(results_key), list):
        return len(outcome.result[results_key])
    return None


# ---- the packs -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PACKS)
def test_each_pack_compiles_without_diagnostics_and_declares_its_skills(name: str) -> None:
    skills = spec(name)
    assert sorted(c.name for c in skills.contracts) == SKILLS[name]
    assert all(c.fallback == c.name for c in skills.contracts)
    assert skills.faq is not None and 3 <= len(skills.faq.entries) <= 12


@pytest.mark.parametrize("name", PACKS)
def test_every_skill_is_implemented_by_the_plugin(name: str) -> None:
    reg, _ = default_registry()
    for c in spec(name).contracts:
        impl = reg.skills[c.name]
        assert type(impl).__module__.startswith("charter_skills.")
        assert impl.description


@pytest.mark.parametrize("name", PACKS)
def test_every_contract_tests_valid_invalid_output_and_fallback_cases(name: str) -> None:
    for c in spec(name).contracts:
        kinds = {(case.status, case.inject, case.action) for case in c.cases}
        assert any(s == "ok" for s, _, _ in kinds), c.name
        assert any(s == "invalid" for s, _, _ in kinds), c.name
        assert {"empty_claim", "bad_output"} <= {i for _, i, _ in kinds}, c.name
        assert any(a == "handoff_human" for _, _, a in kinds), c.name
        if c.name in (*NEVER_STAND_IN, *STAGE_CHECKS):  # every failure told by a template
            injected = {i for s, i, a in kinds if s == "failed" and a == "template"}
            assert injected >= {"error", "timeout", "breaker_open", "empty_claim", "bad_output"}
        else:
            assert any(a == "degrade_to_faq" for _, _, a in kinds), c.name


@pytest.mark.parametrize("skill", STAGE_CHECKS)
def test_a_stage_check_failing_says_the_action_is_not_done(skill: str) -> None:
    pack = next(p for p in PACKS if skill in SKILLS[p])
    contract = spec(pack).contract(skill)
    assert contract is not None and not contract.executes
    failed = [c for c in contract.cases if c.status == "failed" and c.action == "template"]
    assert {c.inject for c in failed} >= {"error", "timeout", "breaker_open", "bad_output"}
    assert all("还没有办理" in (c.message or "") for c in failed)


def test_the_skills_that_change_something_are_declared_so() -> None:
    executing = {c.name for p in PACKS for c in spec(p).contracts if c.executes}
    assert set(NEVER_STAND_IN) <= executing


@pytest.mark.parametrize("skill", NEVER_STAND_IN)
def test_an_executing_skill_never_falls_back_to_an_answer_that_could_pass_for_done(
    skill: str,
) -> None:
    """No FAQ answer, no other skill in place of the action; the hand-off after two
    negations only after a failure (after a success the user must first hear what was done)."""
    pack = next(p for p in PACKS if skill in SKILLS[p])
    steps = spec(pack).protocol(skill)
    assert steps
    assert {s.do.kind for s in steps} <= {"template", "handoff_human"}
    for step in steps:
        assert any(c.kind == "failure" for c in step.when), step


@pytest.mark.parametrize("skill", NEVER_STAND_IN)
def test_the_not_done_and_the_unknown_outcomes_are_told_apart(skill: str) -> None:
    """Error and breaker open (the framework knows the skill did not run to an effect) say it
    was not done; a timeout or a broken result (it may have run) say it is unknown and ask the
    user not to do it again."""
    pack = next(p for p in PACKS if skill in SKILLS[p])
    contract = spec(pack).contract(skill)
    assert contract is not None
    texts = {
        c.inject: c.message
        for c in contract.cases
        if c.status == "failed" and c.action == "template"
    }
    for inject in ("error", "breaker_open"):
        assert "没有" in (texts[inject] or "") and "无法确认" not in (texts[inject] or "")
    for inject in ("timeout", "empty_claim", "bad_output"):
        assert "无法确认" in (texts[inject] or "") and "不要重复" in (texts[inject] or "")


@pytest.mark.parametrize(
    ("pack_name", "skill", "case"),
    [
        pytest.param(p, c.name, case, id=f"{c.name}:{case.name}")
        for p in PACKS
        for c in spec(p).contracts
        if c.executes and c.name in DONE
        for case in c.cases
        if case.status == "ok" and case.message is None
    ],
)
def test_the_unpinned_ok_cases_of_executing_skills_did_it(
    pack_name: str, skill: str, case: SkillCase, runner_for: Any
) -> None:
    """The cases whose text holds a fresh number pin no message: each must still have done
    what it says (not a refusal, which is an ok call too)."""
    outcome = runner_for(pack_name).call(skill, case.args, case.context)
    assert outcome.status == "ok"
    assert outcome.result["status"] == DONE[skill], outcome.result


# ---- every tests: case of every contract -------------------------------------------------------


@pytest.mark.parametrize(("pack_name", "skill", "case"), list(all_cases()))
def test_contract_case(pack_name: str, skill: str, case: SkillCase, runner_for: Any) -> None:
    runner: SkillRunner = runner_for(pack_name)
    contract = runner.contract(skill)
    outcome = runner.call(skill, case.args, case.context, inject=case.inject)
    assert outcome.status == case.status, outcome
    if case.message is not None:
        assert outcome.text == case.message
    if case.results is not None:
        assert count(outcome, contract.results_key) == case.results
    if case.failure is not None:
        assert outcome.failure is not None and outcome.failure.kind == case.failure
    if case.action is not None:
        assert outcome.fallback is not None
        assert outcome.fallback.action == case.action
    if case.status == "ok":
        assert outcome.failure is None and outcome.fallback is None
    if case.inject == "empty_claim":
        # caught by the claims-success post-check (which asks the turn to reflect, seed 001
        # §4.2) where the output schema admits an empty list, else by the schema itself
        assert outcome.failure is not None
        assert outcome.reflect or outcome.failure.detail.startswith("output schema: ")


# ---- seed 001 §4, spelt out -------------------------------------------------------------------


def test_policy_search_year_range_refused_before_the_skill_runs(runner_for: Any) -> None:
    runner: SkillRunner = runner_for("finance")
    out = runner.call("policy_search", {"keyword": "电动车", "year_range": [2019, 2024]})
    assert (out.status, out.text) == (
        "invalid",
        "年份范围超出能力边界，仅支持2020-2023，请调整后重试",
    )
    assert out.failure is not None and out.failure.kind == "invalid_args"
    assert [r.failure for r in runner.records()] == ["invalid_args"]


def test_policy_search_results_carry_the_contract_fields(runner_for: Any) -> None:
    out = runner_for("finance").call(
        "policy_search", {"keyword": "新能源", "year_range": [2021, 2023]}
    )
    assert out.result["results"] == [
        {
            "title": "省份A新能源汽车下乡消费补贴实施方案",
            "effective_date": "2023-03-15",
            "source": "province_A",
            "summary": "农村居民在活动期间购买目录内新能源汽车的，按车辆售价分档给予一次性消费补贴，每人限补一辆。",
        },
        {
            "title": "关于延续新能源汽车免征车辆购置税政策的公告",
            "effective_date": "2022-09-26",
            "source": "national",
            "summary": "对购置日期在2023年底前的新能源汽车，继续免征车辆购置税，免税车型以公布的目录为准。",
        },
    ]


def test_two_negations_open_a_ticket_with_the_context(
    runner_for: Any, tickets: TicketStore
) -> None:
    out = runner_for("finance").call(
        "policy_search",
        {"keyword": "补贴"},
        {"query": "不对，我要的不是这个", "negations": 2, "user_id": "u-1", "session_id": "s-1"},
        inject="error",
    )
    assert out.fallback is not None
    assert (out.fallback.action, out.fallback.ticket) == ("handoff_human", "T-000001")
    assert out.text == "已为您转接人工客服，工单号 T-000001，稍后会有专人联系您。"
    ticket = tickets.get("T-000001")
    assert ticket is not None
    assert (ticket.queue, ticket.domain, ticket.skill, ticket.user_id) == (
        "policy",
        "finance",
        "policy_search",
        "u-1",
    )
    assert ticket.reason == "the user said no 2 times; error: raised (injected)"
    assert ticket.context["args"] == {"keyword": "补贴"}


def test_faq_miss_hands_on_to_the_next_step(runner_for: Any) -> None:
    out = runner_for("finance").call(
        "policy_search",
        {"keyword": "量子计算"},
        {"query": "量子计算产业有什么扶持？"},
        inject="error",
    )
    assert out.fallback is not None
    assert [(s.step, s.held) for s in out.fallback.steps] == [
        ("negations >= 2 -> handoff_human policy", False),
        (
            "invalid_args and missing_slot region and expr 'context.query contains any "
            '["地方", "省里", "本省", "我们省", "我省", "当地", "省级"]\' -> clarify '
            '"您指的是中央政策还是哪个省的地方政策？"',
            False,
        ),
        ("unavailable -> degrade_to_faq", True),
        (
            "breaker_open -> template "
            '"政策库暂时无法访问，可先参考2023年版本的政策文件，稍后再为您检索“{keyword}”。"',
            False,
        ),
        (out.fallback.steps[4].step, True),
    ]
    assert out.fallback.steps[2].result.startswith("FAQ miss (best ")
    assert out.fallback.action == "clarify"


def test_ambiguous_region_is_asked_not_guessed(runner_for: Any) -> None:
    out = runner_for("finance").call(
        "policy_search",
        {"keyword": "稳岗补贴", "scope": "local"},
        {"query": "我们省的稳岗补贴政策有哪些？"},
    )
    assert out.status == "invalid"
    assert out.failure is not None and out.failure.missing == ("region",)
    assert out.text == "您指的是中央政策还是哪个省的地方政策？"


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("2019年的稳岗补贴政策", "年份范围超出能力边界，仅支持2020-2023，请调整后重试"),
        ("我们省2019年的稳岗补贴政策", "您指的是中央政策还是哪个省的地方政策？"),
    ],
)
def test_the_region_question_comes_first_only_when_the_user_named_no_province(
    query: str, text: str, runner_for: Any
) -> None:
    """An invalid call without a region asks which province when the user's words say 我们省
    (the chain's clarify step comes before the contract's own message), else the message."""
    out = runner_for("finance").call(
        "policy_search", {"keyword": "稳岗补贴", "year_range": [2019, 2023]}, {"query": query}
    )
    assert (out.status, out.text) == ("invalid", text)


def test_the_breaker_opens_after_three_failures_and_the_fallback_answers(
    runner_for: Any,
) -> None:
    runner: SkillRunner = runner_for("ecommerce")
    ctx = {"query": "优惠券怎么用"}
    for _ in range(3):
        runner.call(
            "coupon_check", {"coupon_code": "SAVE20", "order_amount": 150}, ctx, inject="error"
        )
    out = runner.call("coupon_check", {"coupon_code": "SAVE20", "order_amount": 150}, ctx)
    assert out.failure is not None and out.failure.kind == "breaker_open"
    assert out.fallback is not None and out.fallback.action == "degrade_to_faq"


def test_logistics_down_falls_back_to_the_order_status(runner_for: Any) -> None:
    runner: SkillRunner = runner_for("ecommerce")
    out = runner.call("logistics_track", {"order_id": "DD202405010001"}, {}, inject="error")
    assert out.fallback is not None
    assert (out.fallback.action, out.fallback.skill) == ("call", "order_lookup")
    assert out.text == "订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。"
    assert [(r.skill, r.status, r.depth) for r in runner.records()] == [
        ("order_lookup", "ok", 1),
        ("logistics_track", "failed", 0),
    ]


def test_booking_numbers_follow_the_session_queue(runner_for: Any) -> None:
    runner: SkillRunner = runner_for("medical")
    args = {"department": "儿科", "date": "2025-07-01", "period": "上午"}
    first = runner.call("appointment_book", args)
    second = runner.call("appointment_book", args)
    assert first.result["results"][0]["booking_no"] == "EK-20250701-AM-040"
    assert (
        first.text
        == "已为您预约儿科2025-07-01上午的门诊，预约号EK-20250701-AM-040，就诊序号第40号，请按时到院取号。"
    )
    assert (second.status, second.result["status"], second.result["results"]) == ("ok", "full", [])
    assert second.text == "儿科2025-07-01上午的号源已满，请选择其他日期或时段。"


def test_slow_skill_times_out_and_counts_against_the_breaker(runner_for: Any) -> None:
    runner: SkillRunner = runner_for("medical")

    class Slow:
        name = "department_recommend"
        description = "slow"

        def __call__(self, args: Mapping[str, Any]) -> Any:
            time.sleep(0.3)
            return {"departments": [], "summary": "x"}

    slow_reg = replace(
        runner.registry, skills={**runner.registry.skills, "department_recommend": Slow()}
    )
    contract = replace(runner.contract("department_recommend"), timeout_s=0.05)
    base = runner.spec
    fast_spec = replace(
        base,
        contracts=tuple(contract if c.name == contract.name else c for c in base.contracts),
    )
    slow = SkillRunner(fast_spec, slow_reg, pack="medical")
    try:
        out = slow.call("department_recommend", {"symptoms": "咳嗽三天"}, {"query": "咳嗽挂什么科"})
    finally:
        slow.close()
    assert out.failure is not None and out.failure.kind == "timeout"
    assert out.fallback is not None and out.fallback.action == "degrade_to_faq"


def test_an_empty_result_claiming_success_asks_for_reflection(runner_for: Any) -> None:
    out = runner_for("finance").call("policy_search", {"keyword": "新能源"}, inject="empty_claim")
    assert out.reflect
    assert out.failure is not None
    assert out.failure.detail == "no results, but the result says '已为您找到3份相关文件'"


def test_when_the_called_skill_fails_too_the_chain_goes_on(runner_for: Any) -> None:
    runner: SkillRunner = runner_for("ecommerce")

    class Down:
        name = "order_lookup"
        description = "down"

        def __call__(self, args: Mapping[str, Any]) -> Any:
            raise ConnectionError("order service down")

    skills = {**runner.registry.skills, "order_lookup": Down()}
    down = SkillRunner(runner.spec, replace(runner.registry, skills=skills), pack="ecommerce")
    try:
        out = down.call(
            "logistics_track",
            {"order_id": "DD202405010001"},
            {"query": "我的包裹到哪儿了"},
            inject="error",
        )
    finally:
        down.close()
    assert out.fallback is not None
    assert out.fallback.action == "template"
    assert (
        out.text == "物流信息暂时查询不到，您可以在“我的订单”中查看订单DD202405010001的物流详情。"
    )
    # the FAQ step is skipped for 到哪 questions: the call is the first step that held
    assert "order_lookup failed too (error)" in [s.result for s in out.fallback.steps if s.held]
