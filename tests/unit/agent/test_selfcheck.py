"""Optional self-reflection: the grammar-shaped answer parsed, compared with the checkers'
record, cached by (goal, output), and three disagreements in a row fire the alert hook."""

from __future__ import annotations

import pytest

from charter.agent.reply import ReflectionRecord
from charter.agent.selfcheck import GRAMMAR, SelfCheck, SelfReflection, parse
from charter.contracts.events import ReflectionAlert
from charter.llm.scripted import ScriptedLLM

FAILED = ReflectionRecord(goal_aligned=False, constraints_ok=True, uncertain=False)
PASSED = ReflectionRecord(goal_aligned=True, constraints_ok=True, uncertain=False)
YES = "【目标对齐】Y\n【约束合规】Y\n【不确定性】低"


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        (YES, SelfCheck(True, True, False, YES)),
        (
            "【目标对齐】N\n【约束合规】Y\n【不确定性】高",
            SelfCheck(False, True, True, "【目标对齐】N\n【约束合规】Y\n【不确定性】高"),
        ),
        ("我觉得还行", SelfCheck(None, None, None, "我觉得还行")),
    ],
)
def test_parse(text: str, parsed: SelfCheck) -> None:
    assert parse(text) == parsed


@pytest.mark.parametrize(
    ("text", "record", "disagrees"),
    [
        (YES, FAILED, True),  # the model would have let it through
        (YES, PASSED, False),
        (
            "【目标对齐】N\n【约束合规】N\n【不确定性】高",
            PASSED,
            False,
        ),  # stricter is not dangerous
        ("不知道", FAILED, False),
    ],
)
def test_disagreement(text: str, record: ReflectionRecord, disagrees: bool) -> None:
    assert parse(text).disagrees(record) is disagrees


def test_three_disagreements_in_a_row_fire_the_alert_and_answers_are_cached() -> None:
    llm = ScriptedLLM(default=YES)
    events: list[tuple[str, object]] = []
    sr = SelfReflection(llm, pack="finance", notify=lambda hook, e: events.append((hook, e)))
    for n in range(2):
        sr.check("查询余额", f"回答{n}", FAILED, f"tr-{n}", "u1", "s1")
    sr.check("查询余额", "好回答", PASSED, "tr-x", "u1", "s1")  # an agreement breaks the run
    assert events == []
    for n in range(3):
        sr.check("查询余额", f"答{n}", FAILED, f"tr-{n}", "u1", "s1")
    assert events == [
        (
            "charter_on_reflection_alert",
            ReflectionAlert(
                pack="finance",
                reason="the model passed 3 answers in a row that the rules failed",
                consecutive=3,
                trace_ids=("tr-0", "tr-1", "tr-2"),
                user_id="u1",
                session_id="s1",
            ),
        )
    ]
    calls = len(llm.calls)
    again = sr.check("查询余额", "答0", FAILED, "tr-9", "u1", "s1")
    assert again.cached and len(llm.calls) == calls  # (user, goal, output) seen: no generation
    assert llm.calls[0].grammar == GRAMMAR and llm.calls[0].temperature == 0.0
    sr.forget("u1")
    assert not sr.check("查询余额", "答0", FAILED, "tr-10", "u1", "s1").cached


def test_runs_are_counted_per_user() -> None:
    events: list[tuple[str, object]] = []
    sr = SelfReflection(
        ScriptedLLM(default=YES), pack="p", notify=lambda h, e: events.append((h, e))
    )
    for n in range(4):  # two users, two disagreements each: no user has three in a row
        sr.check("任务", f"答{n}", FAILED, f"tr-{n}", f"u{n % 2}", "s")
    assert events == []


def test_a_backend_without_grammars_does_not_fail_the_turn() -> None:
    class NoGrammar:
        def generate(self, messages: object, **kw: object) -> object:
            raise NotImplementedError(
                "the openai backend sends a grammar only to a llama.cpp server"
            )

    sr = SelfReflection(NoGrammar(), pack="finance")  # type: ignore[arg-type]
    got = sr.check("查询余额", "回答", FAILED, "tr-1", "u1", "s1")
    assert (got.parsed, got.raw) == (
        False,
        "unavailable: NotImplementedError: the openai backend sends a grammar only to a "
        "llama.cpp server",
    )
    assert not got.disagrees(FAILED)
