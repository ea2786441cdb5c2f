"""The ``conversations`` compile stage: ``tests/conversations/*.yaml`` into frozen
``Conversation`` specs (defaults, per-turn keys, expectations normalised), each diagnostic
(CH360-CH369) with its exact message, place and hint, the schema's for a misspelt key, and the
files in the compile cache key."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.conversations import (
    DEFAULT_NOW,
    EVENT_KINDS,
    Conversation,
    Expect,
    compile_conversations,
    parse_time,
    template_matches,
)
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, sort_diagnostics
from charter.pack.yamlsrc import load_yaml

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "conversations" / "balance"
FILE = "tests/conversations/talk.yaml"


def make_pack(tmp_path: Path, text: str, name: str = "talk.yaml") -> Path:
    root = tmp_path / "balance"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("tests"))
    (root / "tests" / "conversations").mkdir(parents=True)
    (root / "tests" / "conversations" / name).write_text(text, encoding="utf-8")
    return root


def problems(root: Path, registry: Registry) -> list[tuple[str, str, str, str]]:
    _, diags = compile_path(root, registry, cache_dir=None)
    return [_row(d, root) for d in sort_diagnostics(diags)]


def _row(d: Diagnostic, root: Path) -> tuple[str, str, str, str]:
    where = str(d.location).split("/balance/", 1)[-1]
    return d.code, where, d.message, d.hint


# ---- what compiles --------------------------------------------------------------------------

GOOD = """\
conversations:
  - name: 默认值
    turns:
      - user: 查一下余额
  - name: 每个键
    user: bob
    session: s9
    now: 2024-06-01T09:00:00Z
    model: [一, 二]
    turns:
      - user: 尾号1234
        session: s2
        at: 2024-06-01T09:05:00+08:00
        user_id: carol
        model: 三
        outage: account_balance
        expect:
          reply: 好
          contains: 好
          not_contains: [坏, 差]
          matches: 好
          responses: [builtin.cancelled, builtin.cancelled#2]
          events: [result, fallback]
          verdict: pass
          answered_by: template
          goals: {account-query: completed}
          slots: {account-query: {card_tail: "1234"}}
          skills: [account_balance]
          ticket: false
          memory: {card_tail: "1234"}
          model_calls: 0
"""


def test_conversations_compile_with_their_defaults(tmp_path: Path, registry: Registry) -> None:
    root = make_pack(tmp_path, GOOD)
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None and [d for d in diags if d.code.startswith("CH36")] == []
    first, second = pack.conversations
    assert (first.name, first.user, first.session, first.now, first.model) == (
        "默认值",
        "u1",
        "s1",
        DEFAULT_NOW,
        (),
    )
    assert [(t.text, t.session, t.at, t.user_id, t.model, t.outage) for t in first.turns] == [
        ("查一下余额", None, None, None, None, None)
    ]
    assert first.turns[0].expect == Expect()
    assert str(first.location).endswith(f"{FILE}:2:5")
    assert (second.user, second.session, second.now, second.model) == (
        "bob",
        "s9",
        "2024-06-01T09:00:00Z",
        ("一", "二"),
    )
    turn = second.turns[0]
    assert (turn.session, turn.at, turn.user_id, turn.model, turn.outage) == (
        "s2",
        "2024-06-01T09:05:00+08:00",
        "carol",
        ("三",),
        "account_balance",
    )
    assert turn.location.line == 11
    assert turn.expect == Expect(
        reply="好",
        contains=("好",),
        not_contains=("坏", "差"),
        matches="好",
        responses=("builtin.cancelled", "builtin.cancelled#2"),
        events=("result", "fallback"),
        verdict="pass",
        answered_by="template",
        goals=(("account-query", "completed"),),
        slots=(("account-query", '{"card_tail": "1234"}'),),
        skills=("account_balance",),
        ticket=False,
        memory=(("card_tail", "1234"),),
        model_calls=0,
    )
    assert turn.expect.slot_values() == {"account-query": {"card_tail": "1234"}}
    # the specs travel in the pickled pack (the disk cache)
    assert pickle.loads(pickle.dumps(pack)).conversations == pack.conversations


def test_conversation_files_are_read_by_name_and_key_the_cache(
    tmp_path: Path, registry: Registry
) -> None:
    root = make_pack(
        tmp_path, "conversations:\n  - name: b\n    turns: [{user: 查余额}]\n", "b.yaml"
    )
    (root / "tests" / "conversations" / "a.yaml").write_text(
        "conversations:\n  - name: a\n    turns: [{user: 查余额}]\n", encoding="utf-8"
    )
    cache = tmp_path / "cache"
    pack, _ = compile_path(root, registry, cache_dir=cache)
    assert pack is not None and [c.name for c in pack.conversations] == ["a", "b"]
    assert [Path(f).name for f in pack.files][-2:] == ["a.yaml", "b.yaml"]
    (root / "tests" / "conversations" / "a.yaml").write_text(
        "conversations:\n  - name: a2\n    turns: [{user: 查余额}]\n", encoding="utf-8"
    )
    again, _ = compile_path(root, registry, cache_dir=cache)
    assert again is not None and [c.name for c in again.conversations] == ["a2", "b"]


def test_a_pack_without_conversations_has_none(tmp_path: Path, registry: Registry) -> None:
    root = tmp_path / "balance"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("tests"))
    pack, _ = compile_path(root, registry, cache_dir=None)
    assert pack is not None and pack.conversations == ()


# ---- the diagnostics ------------------------------------------------------------------------

BAD = """\
conversations:
  - name: 重名
    turns:
      - user: 查一下余额
  - name: 重名
    now: 2024-05-01T10:00
    turns:
      - user: 尾号1234
        at: "13:00"
        outage: acount_balance
        expect:
          verdict: passed
          answered_by: modle
          events: [result, slot_askd]
          matches: 尾号(\\d{4}
          goals: {acount-query: completed}
          slots: {account-query: {card_tial: "1234"}}
          skills: [account_balance, balance]
          responses: [builtin.cancelled, builtin.canceled]
          model_calls: -1
          contains: [余额, 尾号]
          not_contains: [尾号]
      - user: 你好
        expect:
          reply: 您好
          contains: 余额
          matches: 再见
"""


def test_every_problem_at_its_place(tmp_path: Path, registry: Registry) -> None:
    root = make_pack(tmp_path, BAD)
    assert problems(root, registry) == [
        (
            "CH360",
            f"{FILE}:5:11",
            f"conversation '重名' is defined twice (first at {root.resolve()}/{FILE}:2:11)",
            "give each conversation of the pack its own name: reports and JUnit name them",
        ),
        (
            "CH366",
            f"{FILE}:6:10",
            "'2024-05-01T10:00' is not an ISO date-time with a UTC offset",
            "write a date, a time and the offset: 2024-05-01T10:00:00+08:00",
        ),
        (
            "CH366",
            f"{FILE}:9:13",
            "'13:00' is not an ISO date-time with a UTC offset",
            "write a date, a time and the offset: 2024-05-01T10:00:00+08:00",
        ),
        (
            "CH368",
            f"{FILE}:10:17",
            "outage of unknown skill 'acount_balance'",
            "did you mean 'account_balance'?",
        ),
        ("CH364", f"{FILE}:12:20", "unknown verdict 'passed'", "did you mean 'pass'?"),
        ("CH364", f"{FILE}:13:24", "unknown answered_by 'modle'", "did you mean 'model'?"),
        (
            "CH364",
            f"{FILE}:14:28",
            "unknown event kind 'slot_askd'",
            "did you mean 'slot_asked'?",
        ),
        (
            "CH365",
            f"{FILE}:15:28",
            "matches is not a valid regular expression: missing )",
            "the syntax of Python's regex module; escape a literal character with \\",
        ),
        (
            "CH361",
            f"{FILE}:16:19",
            "unknown intent 'acount-query'",
            "did you mean 'account-query'?",
        ),
        (
            "CH362",
            f"{FILE}:17:35",
            "intent 'account-query' has no slot 'card_tial'",
            "did you mean 'card_tail'?",
        ),
        ("CH363", f"{FILE}:18:37", "unknown skill 'balance'", "did you mean 'account_balance'?"),
        (
            "CH369",
            f"{FILE}:19:42",
            "unknown response template 'builtin.canceled'",
            "did you mean 'builtin.cancelled'?",
        ),
        ("CH367", f"{FILE}:20:24", "model_calls is -1", "count the calls: 0 or more"),
        (
            "CH367",
            f"{FILE}:22:25",
            "'尾号' is both in contains and in not_contains",
            "keep it in one of the two",
        ),
        (
            "CH367",
            f"{FILE}:26:21",
            "the expected reply does not contain '余额'",
            "fix one of them",
        ),
        (
            "CH367",
            f"{FILE}:27:20",
            "the expected reply does not match matches",
            "fix one of them",
        ),
    ]


def test_a_misspelt_key_is_the_schemas_warning(tmp_path: Path, registry: Registry) -> None:
    root = make_pack(
        tmp_path,
        "conversations:\n  - name: a\n    turns:\n      - user: 查余额\n"
        "        expect: {contians: [余额]}\n",
    )
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None
    assert [_row(d, root) for d in diags] == [
        ("CH012", f"{FILE}:5:18", "unknown key 'contians'", "did you mean 'contains'?")
    ]
    assert not diags[0].is_error


def test_without_goals_or_skills_every_name_is_unknown() -> None:
    doc, _ = load_yaml(
        "talk.yaml",
        "conversations:\n  - name: a\n    turns:\n      - user: 查余额\n        outage: x\n"
        "        expect: {goals: {a: active}, skills: [x]}\n",
    )
    assert doc is not None
    specs, diags = compile_conversations([doc], None, None)
    assert [(d.code, str(d.location), d.message, d.hint) for d in diags] == [
        (
            "CH368",
            "talk.yaml:5:17",
            "outage of unknown skill 'x'",
            "the pack has no skill contracts (skills/*.yaml)",
        ),
        (
            "CH363",
            "talk.yaml:6:47",
            "unknown skill 'x'",
            "the pack has no skill contracts (skills/*.yaml)",
        ),
        (
            "CH361",
            "talk.yaml:6:26",
            "unknown intent 'a'",
            "the pack has no goals.yaml: no goal is ever opened",
        ),
    ]
    assert [c.name for c in specs] == ["a"] and isinstance(specs[0], Conversation)


def test_template_ids_are_not_checked_without_compiled_responses() -> None:
    doc, _ = load_yaml(
        "talk.yaml",
        "conversations:\n  - name: a\n    turns:\n      - user: 查余额\n"
        "        expect: {responses: [anything.at_all]}\n",
    )
    assert doc is not None
    _, unchecked = compile_conversations([doc], None, None, None)
    assert unchecked == []
    _, checked = compile_conversations([doc], None, None, frozenset({"pack.cancelled"}))
    assert [(d.code, d.message) for d in checked] == [
        ("CH369", "unknown response template 'anything.at_all'")
    ]


@pytest.mark.parametrize(
    ("want", "got", "same"),
    [
        ("transfer.slot_corrected", "transfer.slot_corrected", True),
        ("transfer.slot_corrected", "transfer.slot_corrected#2", True),
        ("transfer.slot_corrected", "transfer.slot_corrected#2.1", True),
        ("transfer.slot_corrected#2", "transfer.slot_corrected#2.1", True),
        ("transfer.slot_corrected#2", "transfer.slot_corrected#3", False),
        ("transfer.slot_corrected#2.1", "transfer.slot_corrected#2.2", False),
        ("transfer.slot_corrected#2", "transfer.slot_corrected#21", False),
        ("transfer.slot", "transfer.slot_corrected", False),
        ("transfer", "transfer.slot_corrected", False),
    ],
)
def test_template_ids(want: str, got: str, same: bool) -> None:
    assert template_matches(want, got) is same


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("2024-05-01T10:00:00+08:00", True),
        ("2024-05-01T02:00Z", True),
        ("2024-05-01 10:00+08:00", True),
        ("2024-05-01T10:00", False),
        ("2024-05-01", False),
        ("2024-13-01T10:00+08:00", False),
        ("下午三点", False),
    ],
)
def test_times(text: str, ok: bool) -> None:
    assert (parse_time(text) is not None) is ok


def test_event_kinds_are_the_goal_events_plus_the_turns_told_without_them() -> None:
    assert len(EVENT_KINDS) == len(set(EVENT_KINDS)) == 19
    assert EVENT_KINDS[:3] == ("slot_asked", "slot_corrected", "slot_carried")
