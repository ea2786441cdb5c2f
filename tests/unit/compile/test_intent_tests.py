"""The ``intent_tests`` compile stage: ``tests/intents.yaml`` into frozen ``IntentPhrase``
values (``none`` as None, the state and act as written, the slots as JSON), each diagnostic
(CH385-CH389) with its exact message, place and hint, the schema's for a wrong value, and the
file read as a pack file (no CH005)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.specs.phrases import IntentPhrase
from charter.contracts.registry import Registry
from charter.diagnostics import sort_diagnostics
from tests.support.intent_table import tiny_pack

Row = tuple[str, str, str, str, str]


def problems(tmp_path: Path, registry: Registry, table: str) -> list[Row]:
    root = tiny_pack(tmp_path, table)
    _, diags = compile_path(root, registry, cache_dir=None)
    return [
        (d.code, str(d.severity), str(d.location).split("/tiny/", 1)[-1], d.message, d.hint)
        for d in sort_diagnostics(diags)
    ]


def test_the_table_compiles_into_phrases(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_path(tiny_pack(tmp_path), registry, cache_dir=None)
    assert [d.headline() for d in diags] == []
    assert pack is not None
    rows = [(p.say, p.intent, p.checks_intent, p.pending, p.act, p.slots) for p in pack.phrases]
    assert rows == [
        ("查一下余额尾号1234", "balance", True, None, None, {"card_tail": "1234"}),
        ("我卡里还剩多少钱", "balance", True, None, None, {}),
        ("帮我转账给张三", "transfer", True, None, None, {"payee": "张三"}),
        ("楼下着火了", "alarm", True, None, None, {}),
        ("你们周末上班吗", None, True, None, None, {}),
        ("好的", None, False, "confirm", "affirm", {}),
        ("算了", None, False, "confirm", "cancel", {}),
        ("尾号5678", None, False, "question", "answer", {}),
    ]
    first = pack.phrases[0]
    assert isinstance(first, IntentPhrase)
    assert json.loads(first.slots_json) == {"card_tail": "1234"}
    assert str(first.location).endswith("tiny/tests/intents.yaml:2:5")


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            "phrases:\n  - say: 查余额\n    intent: balnce\n",
            (
                "CH385",
                "warning",
                "tests/intents.yaml:3:13",
                "phrase '查余额' expects unknown intent 'balnce' (goals.yaml declares none): "
                "it is not measured",
                "did you mean 'balance'?",
            ),
        ),
        (
            "phrases:\n  - say: 好\n    pending: confirm\n    act: afirm\n",
            (
                "CH386",
                "error",
                "tests/intents.yaml:4:10",
                "phrase '好' expects unknown dialogue act 'afirm'",
                "did you mean 'affirm'?",
            ),
        ),
        (
            "phrases:\n  - say: 好\n    act: affirm\n",
            (
                "CH387",
                "error",
                "tests/intents.yaml:3:10",
                "phrase '好' expects the act 'affirm' with nothing pending",
                "an act answers something: add pending: confirm or pending: question",
            ),
        ),
        (
            "phrases:\n  - say: 好\n    pending: confirm\n",
            (
                "CH387",
                "error",
                "tests/intents.yaml:2:5",
                "phrase '好' expects neither an intent nor an act",
                "add intent: <id> (or intent: none), or pending: and act:",
            ),
        ),
        (
            "phrases:\n  - say: 厨房冒烟了\n    intent: alarm\n",
            (
                "CH388",
                "warning",
                "tests/intents.yaml:2:10",
                "phrase '厨房冒烟了' is one of the pack's examples of 'alarm': "
                "the table must be held out",
                "write the phrase in other words, or take it out of goals.yaml",
            ),
        ),
        (
            "phrases:\n  - say: 讲个笑话\n    intent: none\n",
            (
                "CH388",
                "warning",
                "tests/intents.yaml:2:10",
                "phrase '讲个笑话' is one of the pack's out_of_scope examples: "
                "the table must be held out",
                "write the phrase in other words, or take it out of goals.yaml",
            ),
        ),
        (
            'phrases:\n  - say: 查余额\n    intent: balance\n    slots: {card: "1234"}\n',
            (
                "CH389",
                "error",
                "tests/intents.yaml:4:13",
                "phrase '查余额' expects slot 'card', which intent 'balance' does not have",
                "did you mean 'card_tail'?",
            ),
        ),
        (
            'phrases:\n  - say: 你好\n    intent: none\n    slots: {card_tail: "1234"}\n',
            (
                "CH389",
                "error",
                "tests/intents.yaml:4:12",
                "phrase '你好' expects slots but no intent",
                "slots are read by the intent the phrase opens: add intent: <id>",
            ),
        ),
        (
            "phrases:\n  - say: 张三\n    pending: question\n    of: transfr\n    act: answer\n",
            (
                "CH385",
                "warning",
                "tests/intents.yaml:4:9",
                "phrase '张三' is said while unknown intent 'transfr' is pending: it is not measured",
                "did you mean 'transfer'?",
            ),
        ),
        (
            "phrases:\n  - say: 好\n    pending: confirm\n    of: balance\n    act: affirm\n",
            (
                "CH387",
                "error",
                "tests/intents.yaml:4:9",
                "phrase '好' is said with 'balance' awaiting a yes it never asks",
                "give 'balance' confirm: true, or name another",
            ),
        ),
        (
            "phrases:\n  - say: 好\n    pending: question\n    of: alarm\n    act: answer\n",
            (
                "CH387",
                "error",
                "tests/intents.yaml:4:9",
                "phrase '好' is said with 'alarm' asking a question it never asks",
                "'alarm' has no required slot",
            ),
        ),
        (
            "phrases:\n  - say: 张三\n    intent: none\n    of: transfer\n",
            (
                "CH387",
                "error",
                "tests/intents.yaml:4:9",
                "phrase '张三' is said with 'transfer' with nothing pending",
                "add pending: confirm or pending: question",
            ),
        ),
        (
            "phrases:\n  - say: 你好\n    intent: none\n    pending: later\n",
            (
                "CH013",
                "error",
                "tests/intents.yaml:4:14",
                "'pending' must be one of 'confirm', 'question', not 'later'",
                "",
            ),
        ),
    ],
    ids=[
        "unknown-intent",
        "unknown-act",
        "act-without-pending",
        "expects-nothing",
        "an-example",
        "out-of-scope-example",
        "unknown-slot",
        "slots-without-intent",
        "unknown-pending-intent",
        "pending-confirm-never-asked",
        "pending-question-never-asked",
        "of-without-pending",
        "schema",
    ],
)
def test_each_problem_is_reported_where_it_is(
    tmp_path: Path, registry: Registry, table: str, expected: Row
) -> None:
    assert problems(tmp_path, registry, table) == [expected]


def test_a_phrase_naming_an_unknown_intent_is_left_out(tmp_path: Path, registry: Registry) -> None:
    table = (
        "phrases:\n  - say: 查余额\n    intent: balnce\n  - say: 查下余额\n    intent: balance\n"
    )
    pack, _ = compile_path(tiny_pack(tmp_path, table), registry, cache_dir=None)
    assert pack is not None
    assert [p.say for p in pack.phrases] == ["查下余额"]


def test_of_names_the_pending_request(tmp_path: Path, registry: Registry) -> None:
    table = "phrases:\n  - say: 张三\n    pending: question\n    of: transfer\n    act: answer\n"
    pack, diags = compile_path(tiny_pack(tmp_path, table), registry, cache_dir=None)
    assert [d.headline() for d in diags] == []
    assert pack is not None
    assert [(p.say, p.pending, p.of) for p in pack.phrases] == [("张三", "question", "transfer")]
