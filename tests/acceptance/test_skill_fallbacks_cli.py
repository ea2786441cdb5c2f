"""Acceptance (issue 6, acceptance 3): the fallback chains of seed 001 §4.3, through the CLI,
on the finance pack's ``policy_search`` and its reference implementation (charter-skills).

* the skill is down → the FAQ answers;
* the user said no twice → a handoff ticket, visible in ``charter tickets list|show``;
* an ambiguous region → a clarifying question;
* the FAQ has nothing close enough → the next step of the chain answers;
* three failures in a row → the breaker is open, ``charter skills status`` says so, and the
  next call is refused without reaching the skill: the prepared breaker text answers.

Each call runs with its own SQLite database (tickets and breaker state), so the outputs are
pinned whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., Any]
NO_REGION = (
    "invalid_args and missing_slot region and expr 'context.query contains any "
    '["地方", "省里", "本省", "我们省", "我省", "当地", "省级"]\' -> clarify '
    '"您指的是中央政策还是哪个省的地方政策？"'
)
BREAKER_TEXT = (
    'breaker_open -> template "政策库暂时无法访问，可先参考2023年版本的政策文件，稍后再为您检索'
    '“{keyword}”。"'
)
ASK_AREA = (
    "政策检索暂时不可用。您想了解哪一类政策？例如新能源汽车补贴、小微企业税收优惠、个税专项附加扣除"
    "或稳岗补贴，我可以先从常见问题中为您解答。"
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "charter.db"
    path.touch()
    return f"sqlite:///{path}"


def call(run_cli: Run, db: str, args: dict[str, Any], context: dict[str, Any], *more: str) -> Any:
    return run_cli(
        "skills",
        "call",
        "policy_search",
        "--domain",
        "finance",
        "--db",
        db,
        "--args",
        json.dumps(args, ensure_ascii=False),
        "--context",
        json.dumps(context, ensure_ascii=False),
        *more,
    )


def test_skill_down_the_faq_answers(run_cli: Run, db: str) -> None:
    got = call(
        run_cli, db, {"keyword": "新能源"}, {"query": "能查哪几年的政策？"}, "--inject", "error"
    )
    assert (got.code, got.err) == (0, "")
    assert got.out.splitlines() == [
        "policy_search: failed",
        "  failure: error: raised (injected)",
        "  fallback policy_search:",
        "    · negations >= 2 -> handoff_human policy: conditions do not hold",
        f"    · {NO_REGION}: conditions do not hold",
        "    ✓ unavailable -> degrade_to_faq: FAQ policy-years (0.48)",
        "  answer: 目前可检索2020-2023年的国家及省级政策文件；2024年及以后发布的政策暂未收录，"
        "请以政府官网公布的文件为准。",
    ]


def test_two_negations_hand_the_user_to_a_person(run_cli: Run, db: str) -> None:
    context = {
        "query": "不对，不是这个",
        "negations": 2,
        "user_id": "u1",
        "session_id": "s1",
        "conversation": ["查一下新能源汽车补贴", "不对", "不对，不是这个"],
    }
    got = call(run_cli, db, {"keyword": "新能源汽车"}, context)
    assert (got.code, got.err) == (0, "")
    assert got.out.splitlines() == [
        "policy_search: ok",
        "  fallback policy_search:",
        "    ✓ negations >= 2 -> handoff_human policy: ticket T-000001",
        "  ticket: T-000001",
        "  answer: 已为您转接人工客服，工单号 T-000001，稍后会有专人联系您。",
    ]
    shown = run_cli("tickets", "show", "T-000001", "--db", db, "--format", "json")
    ticket = json.loads(shown.out)
    assert {k: ticket[k] for k in ("status", "queue", "user_id", "session_id", "domain")} == {
        "status": "open",
        "queue": "policy",
        "user_id": "u1",
        "session_id": "s1",
        "domain": "finance",
    }
    assert (ticket["skill"], ticket["reason"]) == (
        "policy_search",
        "the user said no 2 times to its answer",
    )
    assert ticket["context"] == {
        "query": "不对，不是这个",
        "args": {"keyword": "新能源汽车"},
        "failure": None,
        "negations": 2,
        "conversation": ["查一下新能源汽车补贴", "不对", "不对，不是这个"],
    }
    listed = run_cli("tickets", "list", "--db", db).out.splitlines()
    assert listed[1].split()[:2] == ["T-000001", "open"]


def test_an_ambiguous_region_is_asked_about(run_cli: Run, db: str) -> None:
    got = call(
        run_cli,
        db,
        {"keyword": "稳岗补贴", "scope": "local"},
        {"query": "我们省的稳岗补贴政策有哪些？"},
    )
    assert (got.code, got.err) == (0, "")
    assert got.out.splitlines() == [
        "policy_search: invalid",
        "  failure: invalid_args: 'region' is a required property",
        "  fallback policy_search:",
        "    · negations >= 2 -> handoff_human policy: conditions do not hold",
        f"    ✓ {NO_REGION}: asked",
        "  answer: 您指的是中央政策还是哪个省的地方政策？",
    ]


def test_a_faq_miss_passes_to_the_next_step(run_cli: Run, db: str) -> None:
    got = call(
        run_cli, db, {"keyword": "新能源"}, {"query": "明天天气怎么样"}, "--inject", "timeout"
    )
    assert (got.code, got.err) == (0, "")
    assert got.out.splitlines() == [
        "policy_search: failed",
        "  failure: timeout: timed out (injected)",
        "  fallback policy_search:",
        "    · negations >= 2 -> handoff_human policy: conditions do not hold",
        f"    · {NO_REGION}: conditions do not hold",
        "    ✓ unavailable -> degrade_to_faq: FAQ miss (best 0.00 < 0.35)",
        f"    · {BREAKER_TEXT}: conditions do not hold",
        f'    ✓ unavailable -> clarify "{ASK_AREA}": asked',
        f"  answer: {ASK_AREA}",
    ]


def test_three_failures_open_the_breaker_and_the_prepared_text_answers(
    run_cli: Run, db: str
) -> None:
    for _ in range(3):
        assert call(run_cli, db, {"keyword": "新能源"}, {}, "--inject", "error").code == 0
    status = run_cli("skills", "status", "--db", db, "--domain", "finance", "--format", "json")
    (breaker,) = json.loads(status.out)
    assert {k: breaker[k] for k in ("skill", "state", "strikes", "reason")} == {
        "skill": "policy_search",
        "state": "open",
        "strikes": 3,
        "reason": "3 consecutive failures",
    }
    assert 0 < breaker["retry_in_s"] <= 30
    got = call(run_cli, db, {"keyword": "稳岗补贴"}, {"query": "稳岗补贴怎么申请"})
    lines = got.out.splitlines()
    assert lines[:2] == ["policy_search: failed", lines[1]]
    assert lines[1].startswith("  failure: breaker_open: skill 'policy_search' unavailable: ")
    assert lines[-1] == (
        "  answer: 稳岗返还一般无需个人申请：符合条件的参保企业通过当地人社部门或社保经办渠道申请，"
        "部分地区“免申即享”，资金直接拨付到企业账户。"
    )
    got = call(run_cli, db, {"keyword": "新能源"}, {"query": "明天天气怎么样"})
    assert got.out.splitlines()[-1] == (
        "  answer: 政策库暂时无法访问，可先参考2023年版本的政策文件，稍后再为您检索“新能源”。"
    )
