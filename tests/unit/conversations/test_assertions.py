"""Each expectation of a turn against what the turn did: nothing when it holds, one exact
``(key, message)`` when it does not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from charter.agent.reply import Reply
from charter.compile.conversations import Expect
from charter.conversations.assertions import Observed, check

REPLY = Reply(
    text="尾号1234的余额为¥12,345.60。",
    verdict="pass",
    answered_by="template",
    skills=({"skill": "account_balance", "status": "ok"},),
    responses=("account_balance.result#2", "pack.completed"),
    events=({"kind": "result"}, {"kind": "completed"}),
)
SEEN = Observed(
    reply=REPLY,
    model_calls=0,
    goals={"account-query": "completed", "transfer": "pending"},
    slots={"account-query": {"card_tail": "1234", "_awaiting": False}},
    written=(("card_tail", "1234"), ("payee", "张三")),
)


def slots(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((i, json.dumps(v, ensure_ascii=False, sort_keys=True)) for i, v in values.items())


HOLDS = Expect(
    reply="尾号1234的余额为¥12,345.60。",
    contains=("尾号1234", "¥12,345.60"),
    not_contains=("工单",),
    matches=r"尾号\d{4}",
    responses=("account_balance.result", "pack.completed"),
    events=("result", "completed"),
    verdict="pass",
    answered_by="template",
    goals=(("account-query", "completed"), ("transfer", "pending")),
    slots=slots({"account-query": {"card_tail": "1234"}}),
    skills=("account_balance",),
    ticket=False,
    memory=(("card_tail", "1234"),),
    model_calls=0,
)


def test_expectations_that_hold_say_nothing() -> None:
    assert check(HOLDS, SEEN) == []
    assert check(Expect(), SEEN) == []


REPLY_TEXT = json.dumps(REPLY.text, ensure_ascii=False)


@pytest.mark.parametrize(
    ("expect", "problems"),
    [
        (
            Expect(reply="尾号1234的余额为¥99,999.00。"),
            [("reply", "(-expected +got) …的余额为¥[-99,999.00-]{+12,345.60+}。")],
        ),
        (
            Expect(contains=("余额", "张三", "李四")),
            [
                ("contains", f'expected "张三" in the reply, got {REPLY_TEXT}'),
                ("contains", f'expected "李四" in the reply, got {REPLY_TEXT}'),
            ],
        ),
        (
            Expect(not_contains=("¥",)),
            [("not_contains", f'expected no "¥", got {REPLY_TEXT}')],
        ),
        (
            Expect(matches=r"工单号\d+"),
            [("matches", f'expected a match of "工单号\\\\d+", got {REPLY_TEXT}')],
        ),
        (
            Expect(responses=("account_balance.result#1", "pack.completed")),
            [
                (
                    "responses",
                    'expected ["account_balance.result#1", "pack.completed"], '
                    'got ["account_balance.result#2", "pack.completed"]',
                )
            ],
        ),
        (
            Expect(responses=("account_balance.result",)),
            [
                (
                    "responses",
                    'expected ["account_balance.result"], '
                    'got ["account_balance.result#2", "pack.completed"]',
                )
            ],
        ),
        (
            Expect(events=("completed", "result")),
            [("events", 'expected ["completed", "result"], got ["result", "completed"]')],
        ),
        (
            Expect(verdict="ask", answered_by="planner"),
            [
                ("verdict", 'expected "ask", got "pass"'),
                ("answered_by", 'expected "planner", got "template"'),
            ],
        ),
        (
            Expect(goals=(("transfer", "aborted"), ("invoice", "active"))),
            [
                ("goals transfer", 'expected "aborted", got "pending"'),
                ("goals invoice", 'expected "active", got no goal of it'),
            ],
        ),
        (
            Expect(
                slots=slots(
                    {
                        "account-query": {"card_tail": 1234, "item": "余额"},
                        "transfer": {"payee": "张三"},
                    }
                )
            ),
            [
                ("slots account-query.card_tail", 'expected 1234, got "1234"'),
                ("slots account-query.item", 'expected "余额", got nothing'),
                ("slots transfer.payee", 'expected "张三", got no goal'),
            ],
        ),
        (
            Expect(skills=()),
            [("skills", 'expected [], got ["account_balance"]')],
        ),
        # the call ran: nothing was given back from the execution ledger
        (
            Expect(replayed=("account_balance",)),
            [("replayed", 'expected ["account_balance"], got []')],
        ),
        (Expect(ticket=True), [("ticket", "expected a ticket, got none")]),
        (
            Expect(memory=(("card_tail", "5678"), ("phone", "13800000000"))),
            [
                ("memory card_tail", 'expected "5678" written, got "1234"'),
                ("memory phone", 'expected "13800000000" written, got nothing written'),
            ],
        ),
        (Expect(model_calls=1), [("model_calls", "expected 1, got 0")]),
    ],
)
def test_each_broken_expectation_says_what_came_instead(
    expect: Expect, problems: list[tuple[str, str]]
) -> None:
    assert check(expect, SEEN) == problems


def test_a_ticket_that_was_not_expected() -> None:
    seen = Observed(reply=Reply(text="已转人工", verdict="escalate", ticket="T-1"), model_calls=0)
    assert check(Expect(ticket=False), seen) == [("ticket", "expected no ticket, got T-1")]
