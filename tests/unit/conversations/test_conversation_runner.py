"""Conversations played through the real agent: the fixture pack's conversations pass; wrong
expectations are reported with the turn, the user's words and what came instead; a turn that
asks the model for an answer it does not script stops its conversation; an outage lasts one
turn; the clock, the session and the user move from the turn that says so."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import UTC, datetime
from pathlib import Path

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.conversations.runner import ConversationResult, run_conversations
from charter.goals.store import GoalStore

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "conversations" / "balance"


def compiled(root: Path, registry: Registry) -> CompiledPack:
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None, [d.headline() for d in diags]
    return pack


def with_conversations(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "balance"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("tests"))
    (root / "tests" / "conversations").mkdir(parents=True)
    (root / "tests" / "conversations" / "talk.yaml").write_text(text, encoding="utf-8")
    return root


def run_text(tmp_path: Path, registry: Registry, text: str) -> list[ConversationResult]:
    return run_conversations(compiled(with_conversations(tmp_path, text), registry), registry)


def test_the_fixture_conversations_pass(registry: Registry) -> None:
    results = run_conversations(compiled(FIXTURE, registry), registry)
    assert [(r.conversation.name, r.ok, r.problems) for r in results] == [
        ("先问卡号再查余额", True, ()),
        ("闲聊由模型回答", True, ()),
        ("查询故障时给出兜底回复", True, ()),
    ]
    turns = [
        (t.number, t.reply.verdict, t.model_calls, [s["status"] for s in t.reply.skills])
        for r in results
        for t in r.turns
        if t.reply is not None
    ]
    # the outage lasts its turn: the next call of the same skill succeeds
    assert turns == [
        (1, "ask", 0, []),
        (2, "pass", 0, ["ok"]),
        (1, "pass", 1, []),
        (1, "pass", 0, ["failed"]),
        (2, "pass", 0, ["ok"]),
    ]
    assert [sorted(r.intents) for r in results] == [["account-query"], [], ["account-query"]]


WRONG = """\
conversations:
  - name: 错误的期望
    model: 您好，请问有什么可以帮您？
    turns:
      - user: 查一下余额
        expect:
          goals: {account-query: completed}
          skills: [account_balance]
          ticket: true
          model_calls: 2
      - user: 尾号1234
        expect:
          slots: {account-query: {card_tail: "4321"}}
          memory: {account-query.card_tail: "4321"}
          model_calls: 1
      - user: 你好
        expect:
          reply: 您好，请问有什么可以帮助您？
          responses: [builtin.unanswered]
          skills: [account_balance]
      - user: 你好
        expect:
          contains: [再见]
          not_contains: [您好]
          matches: 工单\\d+
"""


def test_wrong_expectations_say_turn_words_expected_and_got(
    tmp_path: Path, registry: Registry
) -> None:
    (result,) = run_text(tmp_path, registry, WRONG)
    assert not result.ok
    assert list(result.problems) == [
        '''turn 1 “查一下余额” (line 5): goals account-query: expected "completed", got "pending"''',
        'turn 1 “查一下余额” (line 5): skills: expected ["account_balance"], got []',
        "turn 1 “查一下余额” (line 5): ticket: expected a ticket, got none",
        "turn 1 “查一下余额” (line 5): model_calls: expected 2, got 0",
        'turn 2 “尾号1234” (line 11): slots account-query.card_tail: expected "4321", got "1234"',
        'turn 2 “尾号1234” (line 11): memory account-query.card_tail: expected "4321" written, got "1234"',
        "turn 2 “尾号1234” (line 11): model_calls: expected 1, got 0",
        "turn 3 “你好” (line 16): reply: (-expected +got) …请问有什么可以帮[-助-]您？",
        'turn 3 “你好” (line 16): responses: expected ["builtin.unanswered"], got ["model"]',
        'turn 3 “你好” (line 16): skills: expected ["account_balance"], got []',
        'turn 4 “你好” (line 21): contains: expected "再见" in the reply, '
        'got "您好，请问有什么可以帮您？"',
        'turn 4 “你好” (line 21): not_contains: expected no "您好", '
        'got "您好，请问有什么可以帮您？"',
        'turn 4 “你好” (line 21): matches: expected a match of "工单\\\\d+", '
        'got "您好，请问有什么可以帮您？"',
    ]
    assert [t.reply is not None for t in result.turns] == [True, True, True, True]


UNSCRIPTED = """\
conversations:
  - name: 没有脚本的模型
    turns:
      - user: 查一下余额
      - user: 你好
      - user: 尾号1234
      - user: 尾号5678
  - name: 下一个会话照常运行
    model: [好的。]
    turns:
      - user: 你好
        expect: {model_calls: 1}
"""


def test_a_turn_that_asks_the_model_unscripted_stops_its_conversation(
    tmp_path: Path, registry: Registry
) -> None:
    stopped, next_one = run_text(tmp_path, registry, UNSCRIPTED)
    assert list(stopped.problems) == [
        "turn 2 “你好” (line 5): model: the model was asked (1 call) but the turn scripts no answer",
        "turn 3 “尾号1234” (line 6): not run: turn 2 did not finish, so this turn and the 1 "
        "after it did not run",
    ]
    assert [(t.number, t.reply is not None, t.model_calls) for t in stopped.turns] == [
        (1, True, 0),
        (2, False, 1),
        (3, False, 0),
    ]
    assert next_one.ok


def test_an_outage_needs_an_installed_skill(tmp_path: Path, registry: Registry) -> None:
    pack = compiled(with_conversations(tmp_path, _OUTAGE), registry)
    skills = {k: v for k, v in registry.skills.items() if k != "account_balance"}
    (result,) = run_conversations(pack, dataclasses.replace(registry, skills=skills))
    assert list(result.problems) == [
        "turn 1 “查一下尾号1234的余额” (line 4): outage: no installed plugin implements the "
        "skill 'account_balance'"
    ]


_OUTAGE = """\
conversations:
  - name: 故障
    turns:
      - user: 查一下尾号1234的余额
        outage: account_balance
"""

MOVES = """\
conversations:
  - name: 时钟、会话和用户
    now: 2024-05-01T10:00:00+08:00
    turns:
      - user: 查一下余额
      - user: 查一下尾号1234的余额
        session: s2
        at: 2024-05-01T11:30:00+08:00
      - user: 查一下余额
        user_id: bob
        expect: {goals: {account-query: pending}}
      - user: 尾号5678
        expect: {goals: {account-query: completed}, memory: {account-query.card_tail: "5678"}}
"""


def test_clock_session_and_user_hold_from_the_turn_that_moves_them(
    tmp_path: Path, registry: Registry
) -> None:
    pack = compiled(with_conversations(tmp_path, MOVES), registry)
    kept = tmp_path / "kept"
    (result,) = run_conversations(pack, registry, workdir=kept)
    assert result.ok, result.problems
    db = kept / "conversation-1.db"
    with GoalStore(f"sqlite:///{db}") as store:
        seen = [
            (g.user_id, g.session_id, g.status, g.created_at.astimezone(UTC))
            for user in ("u1", "bob")
            for g in store.tree(user)
        ]
    assert seen == [
        ("u1", "s1", "pending", datetime(2024, 5, 1, 2, 0, tzinfo=UTC)),
        ("u1", "s2", "completed", datetime(2024, 5, 1, 3, 30, tzinfo=UTC)),
        ("bob", "s2", "completed", datetime(2024, 5, 1, 3, 30, tzinfo=UTC)),
    ]
    # a second run replaces the kept database: the same goals, not twice as many
    (again,) = run_conversations(pack, registry, workdir=kept)
    assert again.ok
    with GoalStore(f"sqlite:///{db}") as store:
        assert len(store.tree("u1")) == 2


def test_a_pack_without_conversations_runs_none(tmp_path: Path, registry: Registry) -> None:
    root = tmp_path / "balance"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("tests"))
    assert run_conversations(compiled(root, registry), registry, workdir=tmp_path / "w") == []
    assert not (tmp_path / "w").exists()
