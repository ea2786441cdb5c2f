"""Acceptance (issue 7, acceptance 1; issue 14): multi-turn conversations with the scripted
backend, one per domain, through ``Agent.turn`` with every layer real (SQLite file, the packs,
the reference skills): replies, verdicts, the templates they were composed from, goal trees,
memory writes (redacted and encrypted as the pack says) and trace contents.

The shipped packs are ``strict``: a skill's result, a question, a confirmation is told by the
pack's templates and the model is never asked. The model paths run in ``assisted`` mode on
inputs no intent claims: a draft refused by the hallucination interceptor and a retry that
succeeds; drafts refused to the end, replaced by the plain reply without a ticket; an echoed
prompt; a block; an answer resting on a low-confidence memory handed to a person. A person is
also asked for by the user ("转人工"), which opens a ticket at once."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.agent import Agent, AgentOptions, Reply
from charter.llm.scripted import ScriptedLLM
from charter.memory.pipeline import Candidate
from charter.memory.records import Accessor, PreparedFact
from charter.traces.store import TraceStore

KEY = base64.b64encode(bytes(range(32))).decode()
NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)  # 10:00 in China: 明天 is 2024-05-02
# a turn told by templates only; a model draft adds prompt, generate and reflect before answer
TOLD = ["input", "goals", "recall", "skills", "working_memory", "compose", "answer"]
AFTER = ["memory", "goal_transitions", "learn"]
YES = ("【目标对齐】Y", "【约束合规】Y", "【不确定性】低")
Open = Callable[..., Agent]


def drafted(n: int) -> list[str]:
    """The steps of a turn whose open event the model drafted ``n`` times."""
    return [*TOLD[:-1], *["prompt", "generate", "reflect"] * n, "answer", *AFTER]


@pytest.fixture
def open_agent(tmp_path: Path) -> Iterator[Open]:
    made: list[Agent] = []

    def open_(domain: str, answers: list[str], **options: Any) -> Agent:
        db = tmp_path / f"{domain}.db"
        db.touch()
        agent = Agent.from_pack(
            domain,
            # no default answer: a generation nobody scripted fails the test
            llm=ScriptedLLM(answers),
            database_url=f"sqlite:///{db}",
            memory_key=KEY,
            clock=lambda: NOW,
            options=AgentOptions(**options),
        )
        made.append(agent)
        return agent

    yield open_
    for agent in made:
        agent.close()


def calls(agent: Agent) -> int:
    llm = agent.parts.llm
    assert isinstance(llm, ScriptedLLM)
    return len(llm.calls)


def summary(r: Reply) -> tuple[str, str, int, str]:
    return (r.verdict, r.answered_by, r.attempts, r.text)


def goals(r: Reply) -> list[tuple[str, str]]:
    return [(g["intent"], g["status"]) for g in r.goals]


def kinds(r: Reply) -> list[tuple[str, str | None]]:
    return [(e["kind"], e.get("intent")) for e in r.events]


def steps_of(agent: Agent, r: Reply, tenant: str | None = None) -> list[str]:
    traces = agent.parts.traces
    assert traces is not None and r.trace_id is not None
    trace = traces.get(r.trace_id, tenant=tenant)
    assert trace is not None
    return [s.name for s in trace.steps]


def step(agent: Agent, r: Reply, name: str, n: int = 0, tenant: str | None = None) -> Any:
    traces = agent.parts.traces
    assert traces is not None and r.trace_id is not None
    trace = traces.get(r.trace_id, tenant=tenant)
    assert trace is not None
    return [s for s in trace.steps if s.name == name][n]


def judged(agent: Agent, r: Reply) -> list[tuple[list[str], str]]:
    """Each draft's refusals (model-text checks and rules) and what was decided."""
    traces = agent.parts.traces
    assert traces is not None and r.trace_id is not None
    trace = traces.get(r.trace_id)
    assert trace is not None
    return [(s.outputs["failed"], s.decision) for s in trace.steps if s.name == "reflect"]


def dump(agent: Agent, prefixes: tuple[str, ...]) -> str:
    """Every value of every row of the tables whose names start with one of ``prefixes``."""
    engine = sa.create_engine(str(agent.parts.facts.engine.url))
    try:
        with engine.connect() as conn:
            md = sa.MetaData()
            md.reflect(conn)
            tables = [t for name, t in md.tables.items() if name.startswith(prefixes)]
            assert len(tables) >= 4, sorted(md.tables)
            return "\n".join(
                str(v) for t in tables for row in conn.execute(sa.select(t)) for v in row
            )
    finally:
        engine.dispose()


def facts(agent: Agent, user: str) -> list[tuple[str, str, bool]]:
    listed = agent.parts.facts.list_facts(Accessor(user, "test", role="admin"))
    return [(f.key, agent.parts.pipeline.reveal(f), f.encrypted) for f in listed]


ORDER = "订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。"
TRACKING = (
    "订单DD202405010001由顺丰速运承运（运单号SF1400012345678），最新进展：2024-05-02 21:10 "
    "快件已到达【上海浦东营业点】，正在派送。"
)
COD = "我们支持货到付款，下单时在支付方式中选择即可。"


def test_ecommerce(open_agent: Open) -> None:
    agent = open_agent(
        "ecommerce",
        [
            # the hallucination interceptor refuses a claim about the user's past ...
            "您之前反馈过物流太慢，这次已为您加急。",
            # ... and the retry, told why, answers
            COD,
            # three drafts refused, each for its own reason: the plain reply takes their place
            "您之前说过想要开发票。",
            "现在下单可领优惠券，欢迎选购。",
            "开发票开发票开发票开发票开发票",
        ],
        mode="assisted",
    )
    r = agent.turn("u1", "s1", "帮我查一下订单")
    assert summary(r) == ("ask", "template", 0, "请问您的订单号是多少？可以在“我的订单”里查看。")
    assert r.responses == ("builtin.slot_asked#2",)
    assert goals(r) == [("order-query", "pending")]

    # the skill's result is told by its summary: no generation, even in assisted mode
    r = agent.turn("u1", "s1", "订单号DD202405010001")
    assert summary(r) == ("pass", "template", 0, ORDER)
    assert (r.responses, kinds(r)) == (("order_lookup.summary",), [("result", "order-query")])
    assert goals(r) == [("order-query", "completed")]
    assert r.reflection is not None and r.reflection.lines() == YES
    assert steps_of(agent, r) == TOLD + AFTER
    skills = step(agent, r, "skills").outputs["outcomes"]
    assert [(s["skill"], s["status"]) for s in skills] == [("order_lookup", "ok")]
    assert facts(agent, "u1") == [("order_id", "DD202405010001", False)]

    r = agent.turn("u1", "s1", "订单DD202405010001的快递到哪了？")
    assert summary(r) == ("pass", "template", 0, TRACKING)
    assert r.responses == ("logistics_track.summary",)
    assert goals(r) == [("order-query", "completed"), ("logistics", "completed")]
    assert calls(agent) == 0

    # no intent claims the question and no FAQ entry answers it: the model drafts
    r = agent.turn("u1", "s1", "你们支持货到付款吗")
    assert summary(r) == ("pass", "model", 2, COD)
    assert (r.responses, kinds(r), r.ticket) == (("model",), [("unanswered", None)], None)
    assert steps_of(agent, r) == drafted(2)
    assert judged(agent, r) == [
        (
            ["claims-backed-by-memory"],
            "retry 1 of 2: 不要编造用户过去说过的话；记忆里没有的内容，请改用不涉及用户过去的说法。",
        ),
        ([], "accepted"),
    ]
    assert step(agent, r, "prompt", 1).outputs["text"].count("【修改要求】") == 1

    # another session (its turns do not back a claim about the user's past)
    r = agent.turn("u1", "s2", "能开发票吗")
    assert summary(r) == (
        "pass",
        "template",
        3,
        "抱歉，这个问题我暂时无法回答。我可以帮您查询订单状态和物流进度、查询商品价格、校验券码、办理退换货；"
        "如需人工服务，请说“转人工”。",
    )
    assert (r.responses, r.ticket, goals(r)) == (("pack.unanswered",), None, [])
    assert judged(agent, r) == [
        (
            ["claims-backed-by-memory"],
            "retry 1 of 2: 不要编造用户过去说过的话；记忆里没有的内容，请改用不涉及用户过去的说法。",
        ),
        (
            ["promotion-validity"],
            "retry 2 of 2: 介绍促销、优惠券或折扣时，必须写明有效期（如“有效期至2024-06-18”）。",
        ),
        (["model-text/repetition"], "retries exhausted"),
    ]
    assert [f.rule_id for f in r.findings] == ["model-text/repetition"]  # the last draft's
    assert agent.parts.tickets.get("T-000001") is None  # a weak answer is no case for a person
    assert calls(agent) == 5


WEALTH = (
    "已记录您的理财需求：投入¥50,000.00（伍万元整）。理财产品需要先完成风险测评，再由理财顾问按"
    "产品风险等级为您匹配；理财产品的历史业绩不预示未来表现。如需转接理财顾问，请说“转人工”。"
)
HANDED_OFF = "好的，已为您转接人工客服，请稍候。（工单号 {}）"


def test_finance_escalation_and_uncertainty(open_agent: Open) -> None:
    answer = "尾号1234的卡常用于还款，余额是否够交学费，请以实际扣款为准。"
    agent = open_agent("finance", [answer], mode="assisted")
    # the goal without a skill is told by its completed template, which says what the
    # deliverables ask for (no model draft to fall short of them)
    r = agent.turn("u1", "s1", "我有5万元想买理财，有什么推荐")
    assert summary(r) == ("pass", "template", 0, WEALTH)
    assert (r.responses, r.ticket) == (("wealth-product.completed#4",), None)
    assert goals(r) == [("wealth-product", "completed")]
    assert r.reflection is not None and r.reflection.lines() == YES

    # the user asks for a person: a ticket at once
    r = agent.turn("u1", "s1", "转人工")
    assert summary(r) == ("escalate", "template", 0, HANDED_OFF.format("T-000001"))
    assert (r.responses, r.ticket, kinds(r)) == (
        ("pack.handed_off#1",),
        "T-000001",
        [("handed_off", None)],
    )
    assert steps_of(agent, r) == [*TOLD[:3], "handoff", *TOLD[3:], *AFTER]
    ticket = agent.parts.tickets.get("T-000001")
    assert ticket is not None
    assert (ticket.reason, ticket.context["conversation"]) == (
        "handoff: the user asked for a person",
        ["我有5万元想买理财，有什么推荐", "转人工"],
    )

    # u2 hands the balance query to a person, so the goal stays open for them ...
    r = agent.turn("u2", "s1", "查一下尾号1234的余额，转人工")
    assert summary(r) == ("escalate", "template", 0, HANDED_OFF.format("T-000002"))
    assert (r.skills, goals(r)) == ((), [("account-query", "active")])
    # ... and a guess about the user, below the uncertainty threshold (0.72), is recalled by
    # that goal's intent when they ask a question no intent claims
    u2 = Accessor("u2", "agent", use="support")
    guess = agent.parts.pipeline.prepare(
        u2,
        Candidate(
            "preferred_card",
            "尾号1234的卡常用于还款",
            memory_type="inferred",
            confidence=0.6,
            source="inferred",
            domain="support",
            intent_type="account-query",
        ),
    )
    assert isinstance(guess, PreparedFact)
    agent.parts.facts.write(u2, guess)
    r = agent.turn("u2", "s1", "这个数够孩子上学用吗")
    # §5: the answer carries the marker, and one resting on an uncertain memory goes to a person
    assert summary(r) == (
        "escalate",
        "model",
        1,
        f"[需人工确认]{answer}\n该问题需要人工复核，已为您转接金融顾问，请稍候。（工单号 T-000003）",
    )
    assert (r.responses, r.ticket) == (("model", "pack.handed_off#2"), "T-000003")
    assert kinds(r) == [("unanswered", None), ("handed_off", None)]
    ticket = agent.parts.tickets.get("T-000003")
    assert ticket is not None
    assert (ticket.reason, ticket.context["answer"]) == (
        "uncertain: an answer rests on a low-confidence memory",
        f"[需人工确认]{answer}",
    )
    assert (
        r.reflection is not None
        and r.reflection.lines()[2] == "【不确定性】高（用到了低置信度信息）"
    )
    recall = step(agent, r, "recall").outputs
    assert (recall["step"], recall["min_confidence"]) == ("intent", 0.6)
    assert goals(r) == [("account-query", "active")]  # a person answers it, not the agent
    assert calls(agent) == 1


def test_medical_block_and_encrypted_redacted_memory(open_agent: Open) -> None:
    agent = open_agent("medical", ["你得了流感。"], mode="assisted")
    r = agent.turn("u1", "s1", "我头疼，还有点发烧")
    assert summary(r) == (
        "pass",
        "template",
        0,
        "建议您挂呼吸内科、神经内科。以上仅为分诊建议，不是诊断，具体请以医生面诊为准。"
        "如症状持续或加重，请及时就医。",
    )
    assert r.responses == ("department_recommend.result#3",)
    skills = step(agent, r, "skills").outputs["outcomes"]
    assert [(s["skill"], s["args"], s["status"]) for s in skills] == [
        ("department_recommend", {"symptoms": "症状：头疼、发烧"}, "ok")
    ]

    # no intent claims it: the model drafts, and its diagnosis is blocked by the rules
    r = agent.turn("u1", "s1", "我这是流感吗")
    assert summary(r) == ("block", "rules", 1, agent.parts.pack.messages["safe"])
    assert judged(agent, r) == [(["no-diagnosis"], "blocked")]
    assert r.ticket is None

    # registration asks for a yes before it books; the schedule moves with the agent's clock
    # (2024-05-01): it opens 05-02 to 05-06
    r = agent.turn("u1", "s1", "帮我挂2024年5月3日上午的神经内科，电话13812345678")
    assert summary(r) == (
        "ask",
        "template",
        0,
        "请确认挂号信息：神经内科，就诊时间2024-05-03上午。信息无误请回复“是”，需要修改请直接"
        "告诉我，不预约请回复“否”。",
    )
    # the consultation's stages: collected, triaged, the referral waiting for the booking
    assert goals(r) == [
        ("symptom", "completed"),
        ("symptom.intake", "completed"),
        ("symptom.triage", "completed"),
        ("symptom.referral", "active"),
        ("registration", "pending"),
    ]
    assert step(agent, r, "input").inputs["text"] == "帮我挂2024年5月3日上午的神经内科，电话[PHONE]"

    r = agent.turn("u1", "s1", "是")
    verdict, by, attempts, text = summary(r)
    assert (verdict, by, attempts) == ("pass", "template", 0)
    # the reference skill numbers a session's bookings per process: the place may vary
    assert re.fullmatch(
        "好的，这就为您预约。\n已为您预约神经内科2024-05-03上午的门诊，预约号SJ-20240503-AM-"
        "([0-9]{3})，就诊序号第[0-9]+号，请按时到院取号。",
        text,
    ), text
    assert r.responses == ("registration.confirmation_accepted", "appointment_book.summary")
    assert goals(r) == [
        ("symptom", "completed"),
        ("symptom.intake", "completed"),
        ("symptom.triage", "completed"),
        ("symptom.referral", "completed"),
        ("registration", "completed"),
    ]
    stored = facts(agent, "u1")
    assert ("phone", "[PHONE]", True) in stored  # redacted, then encrypted at L2
    # a slot's fact is keyed by its intent; an appointment (L1) is not encrypted
    assert ("registration.department", "神经内科", False) in stored
    assert ("registration.date", "2024-05-03T06:00/2024-05-03T12:00", False) in stored
    # the raw number is in no memory table and no trace (the goal's slots keep it: the task
    # needs it to be done)
    assert "13812345678" not in dump(agent, ("memory_", "short_term", "trace"))
    assert calls(agent) == 1


def test_traces_are_stored_and_scoped(open_agent: Open) -> None:
    agent = open_agent("ecommerce", [])
    r = agent.turn("u1", "s1", "订单号DD202405010001的订单发货了吗", tenant="acme")
    traces = agent.parts.traces
    assert isinstance(traces, TraceStore) and r.trace_id is not None
    assert traces.get(r.trace_id, tenant="other") is None
    trace = traces.get(r.trace_id, tenant="acme")
    assert trace is not None and (trace.user_id, trace.reply, trace.verdict) == (
        "u1",
        r.text,
        "pass",
    )
    recall = step(agent, r, "recall", tenant="acme")
    assert recall.decision == "ladder: none"


def test_forget_removes_the_user_from_every_store(open_agent: Open) -> None:
    agent = open_agent("ecommerce", [])
    agent.turn("u1", "s1", "订单号DD202405010001的订单发货了吗")
    agent.turn("u2", "s1", "订单号DD202405010001的订单发货了吗")
    agent.turn("u1", "s1", "不对，重新来")
    assert agent.parts.log is not None
    assert [e.user_id for e in agent.parts.log.entries()] == ["u1"]  # the negation's reflection
    assert agent.forget("u1") == {
        "summaries": 0,
        "turns": 2,
        "facts": 1,
        "goals": 1,
        "executions": 0,
        "tickets": 0,
        "traces": 2,
        "reflections": 1,
    }
    assert agent.parts.goals.tree("u1") == [] and len(agent.parts.goals.tree("u2")) == 1
    left = dump(agent, ("memory_", "short_term", "trace", "goal_", "reflection_log", "patch_use"))
    assert "u1" not in left.split() and "u2" in left.split()


def test_self_reflection_runs_after_the_checkers(open_agent: Open) -> None:
    agent = open_agent(
        "ecommerce",
        [COD, "【目标对齐】Y\n【约束合规】Y\n【不确定性】低"],
        mode="assisted",
        self_reflection=True,
    )
    r = agent.turn("u1", "s1", "你们支持货到付款吗")
    assert summary(r) == ("pass", "model", 1, COD)
    own = step(agent, r, "self_reflect")
    assert (own.outputs["goal_aligned"], own.outputs["constraints_ok"], own.decision) == (
        True,
        True,
        "agrees",
    )
    assert steps_of(agent, r) == [*drafted(1)[:9], "self_reflect", *drafted(1)[9:]]
    assert calls(agent) == 2


def test_the_lifecycle_hooks_fire(tmp_path: Path) -> None:
    """What a turn did reaches plugins: goal transitions, memory writes (the stored, redacted
    value), fallbacks and the reflection."""
    events: list[tuple[str, Any]] = []
    db = tmp_path / "hooks.db"
    db.touch()
    with Agent.from_pack(
        "ecommerce",
        llm=ScriptedLLM([]),  # the result is told by the skill's summary: nothing generates
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        clock=lambda: NOW,
        notify=lambda hook, event: events.append((hook, event)),
    ) as agent:
        agent.turn("u1", "s1", "订单号DD202405010001的订单发货了吗")
    hooks = [h for h, _ in events]
    assert hooks == [
        "charter_on_goal_transition",  # created pending
        "charter_on_goal_transition",  # active: slots complete
        "charter_on_memory_write",
        "charter_on_goal_transition",  # completed: the result told
        "charter_after_reflection",
    ]
    moves = [(e.from_status, e.to_status) for h, e in events if h == "charter_on_goal_transition"]
    assert moves == [(None, "pending"), ("pending", "active"), ("active", "completed")]
    write = next(e for h, e in events if h == "charter_on_memory_write")
    assert (write.layer, write.key, write.value) == ("facts", "order_id", "DD202405010001")


def test_no_raw_personal_data_in_tickets_or_goal_history(open_agent: Open) -> None:
    agent = open_agent("finance", [])
    r = agent.turn(
        "u1", "s1", "我有5万元想买理财，电话13812345678，身份证110101199003071233，转人工"
    )
    assert (r.verdict, r.ticket) == ("escalate", "T-000001")
    assert goals(r) == [("wealth-product", "active")]
    ticket = agent.parts.tickets.get("T-000001")
    assert ticket is not None and ticket.context["query"] == (
        "我有5万元想买理财，电话[PHONE]，身份证[ID]，转人工"
    )
    stored = dump(agent, ("memory_", "short_term", "trace", "skill_ticket", "goal_history"))
    assert "13812345678" not in stored and "110101199003071233" not in stored
    assert "[PHONE]" in stored  # scrubbed, not dropped: the ticket still says what was asked


def test_an_echoed_prompt_is_no_answer_and_pending_questions_are_asked(open_agent: Open) -> None:
    parking = "停车安排请以医院现场指引为准。"
    agent = open_agent(
        "medical",
        [
            # the prompt's own labelled lines: dropped before judging, nothing is left
            "【当前任务】回答用户的问题\n请基于以上信息回答：你们医院停车方便吗",
            # the system message, repeated
            "你是medical的客服助手。只根据下面给出的信息，用简洁的中文回答用户。",
            parking,
        ],
        mode="assisted",
    )
    r = agent.turn("u1", "s1", "帮我挂个号")
    assert summary(r) == ("ask", "template", 0, "请问您要挂哪个科室的号？")
    r = agent.turn("u1", "s1", "你们医院停车方便吗")
    # the registration still needs its department: asked after the answer, not dropped
    assert summary(r) == (
        "ask",
        "model",
        3,
        f"{parking}\n我们继续刚才的挂号预约：请问您要挂哪个科室的号？",
    )
    assert r.responses == ("model", "builtin.resumed#1")
    assert [failed for failed, _ in judged(agent, r)] == [
        ["model-text/empty"],
        ["model-text/echo"],
        [],
    ]
    assert goals(r) == [("registration", "pending")]


def test_forget_waits_for_the_users_running_turn(tmp_path: Path) -> None:
    import threading

    started, release = threading.Event(), threading.Event()

    class Slow(ScriptedLLM):
        def generate(self, messages: Any, **kw: Any) -> Any:
            started.set()
            release.wait(5)
            return super().generate(messages, **kw)

    db = tmp_path / "slow.db"
    db.touch()
    agent = Agent.from_pack(
        "ecommerce",
        llm=Slow(default=COD),
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        clock=lambda: NOW,
        options=AgentOptions(mode="assisted"),
    )
    try:
        agent.turn("u1", "s1", "订单号DD202405010001的订单发货了吗")  # told: nothing generates
        assert not started.is_set()
        # a question no intent claims: the model drafts, slowly
        turn = threading.Thread(target=agent.turn, args=("u1", "s1", "你们支持货到付款吗"))
        turn.start()
        assert started.wait(5)
        counts: dict[str, int] = {}
        forget = threading.Thread(target=lambda: counts.update(agent.forget("u1")))
        forget.start()
        forget.join(0.2)
        assert forget.is_alive()  # it waits for the turn ...
        release.set()
        turn.join(5)
        forget.join(5)
        # ... and removes what it wrote too
        assert (counts["facts"], counts["turns"], counts["traces"]) == (1, 2, 2)
        assert agent.parts.goals.tree("u1") == []
        assert "u1" not in dump(agent, ("memory_", "short_term", "trace", "goal_")).split()
    finally:
        agent.close()


def test_a_failed_turn_keeps_its_trace(tmp_path: Path) -> None:
    class Down:
        def generate(self, messages: Any, **kw: Any) -> Any:
            raise ConnectionError("model server unreachable")

    db = tmp_path / "down.db"
    db.touch()
    with Agent.from_pack(
        "ecommerce",
        llm=Down(),
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        options=AgentOptions(mode="assisted"),
    ) as agent:
        with pytest.raises(ConnectionError):
            agent.turn("u1", "s1", "你们支持货到付款吗")
        traces = agent.parts.traces
        assert traces is not None
        (trace,) = traces.list(user_id="u1")
        assert trace.verdict == "error"
        assert [s.name for s in trace.steps] == [*TOLD[:-1], "prompt", "generate"]
        generate = [s for s in trace.steps if s.name == "generate"]
        assert generate[0].outputs["error"] == "ConnectionError: model server unreachable"
