"""Measuring understanding on an intent table (``charter.conversations.understanding`` and its
report): each phrase planned from its state, keyword triggers only and with the examples (the
``hash`` embedder of the tiny pack: no model loads), and the scores made of the outcomes —
precision, recall, clarifying questions, confusion, out of scope, acts, slots — with what fails
a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from charter.agent.parts import understander_for
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.specs.phrases import IntentPhrase
from charter.contracts.registry import Registry
from charter.conversations.understanding import Measure, Outcome, measure, states
from charter.conversations.understanding_report import UnderstandingReport, render, report_for
from charter.diagnostics import Location
from tests.support.intent_table import tiny_pack


@pytest.fixture
def pack(tmp_path: Path, registry: Registry) -> CompiledPack:
    compiled, diags = compile_path(tiny_pack(tmp_path), registry, cache_dir=None)
    assert compiled is not None, [d.headline() for d in diags]
    return compiled


def _rows(m: Measure) -> list[tuple[str, str | None, str, str | None, dict[str, str]]]:
    return [(o.phrase.say, o.decided, o.layer, o.act, dict(o.slots)) for o in m.outcomes]


def test_the_states_a_phrase_is_said_in(pack: CompiledPack) -> None:
    assert pack.goals is not None
    by = states(pack.goals)
    assert by[None].goals == ()
    confirm = by["confirm"].goals[0]
    # the confirmed intent, its slots as the planner test gives them, awaiting the yes
    assert (confirm.intent, dict(confirm.slots), confirm.awaiting, confirm.missing) == (
        "transfer",
        {"payee": "张三"},
        True,
        (),
    )
    question = by["question"].goals[0]
    assert (question.intent, question.status, question.missing) == (
        "balance",
        "pending",
        ("card_tail",),
    )
    # of: the question of another intent, every required slot missing
    asked = states(pack.goals, "transfer")["question"].goals[0]
    assert (asked.intent, asked.missing) == ("transfer", ("payee",))
    assert "question" not in states(pack.goals, "alarm")  # it asks nothing


@pytest.mark.parametrize(
    ("with_examples", "expected"),
    [
        (
            False,
            [
                ("查一下余额尾号1234", "balance", "keyword", None, {"card_tail": "1234"}),
                ("我卡里还剩多少钱", None, "", None, {}),
                ("帮我转账给张三", "transfer", "keyword", None, {"payee": "张三"}),
                ("楼下着火了", "alarm", "safety", None, {}),
                ("你们周末上班吗", None, "", None, {}),
                ("好的", None, "act", "affirm", {}),
                ("算了", None, "act", "cancel", {}),
                ("尾号5678", None, "answer", "answer", {}),
            ],
        ),
        (
            True,
            [
                ("查一下余额尾号1234", "balance", "keyword", None, {"card_tail": "1234"}),
                ("我卡里还剩多少钱", "balance", "example", None, {}),
                ("帮我转账给张三", "transfer", "keyword", None, {"payee": "张三"}),
                ("楼下着火了", "alarm", "safety", None, {}),
                ("你们周末上班吗", None, "", None, {}),
                ("好的", None, "act", "affirm", {}),
                ("算了", None, "act", "cancel", {}),
                ("尾号5678", None, "answer", "answer", {}),
            ],
        ),
    ],
    ids=["keywords-only", "with-examples"],
)
def test_each_phrase_is_planned_from_its_state(
    pack: CompiledPack, registry: Registry, with_examples: bool, expected: list[object]
) -> None:
    understander = understander_for(pack, registry, None) if with_examples else None
    assert _rows(measure(pack, registry, understander)) == expected


def test_the_report_puts_both_runs_side_by_side(pack: CompiledPack, registry: Registry) -> None:
    report = report_for(pack, registry, understander_for(pack, registry, None))
    assert report.safety == ("alarm",)
    assert report.examples is not None
    assert report.keywords.accuracy() == pytest.approx(4 / 5)
    assert report.examples.accuracy() == pytest.approx(1.0)
    assert report.problems(100, 100) == []
    assert len(report.loo) == 18  # 15 examples and 3 out_of_scope utterances, each held out
    loo = report.loo_accuracy()
    assert loo is not None and 0 < loo <= 1
    text = render(report).splitlines()
    assert text[1:5] == [
        "  keyword triggers only | with examples",
        "  intent    phrases        precision           recall",
        "  alarm           1  100.0% | 100.0%  100.0% | 100.0% (safety)",
        "  balance         2  100.0% | 100.0%   50.0% | 100.0%",
    ]
    assert text[6:10] == [
        "  accuracy:  80.0% | 100.0% (5 phrases; 0 clarifying questions, 0 naming the expected "
        "intent)",
        "  out of scope, answered by no intent: 100.0% | 100.0% (1 phrase)",
        "  dialogue acts: 100.0% | 100.0% (3 phrases)",
        "  slots: 100.0% | 100.0% (2 phrases)",
    ]
    assert text[-1] == (
        "  layer that decided (with examples): act 2, keyword 2, answer 1, example 1, none 1, "
        "safety 1"
    )


# ---- scores, from outcomes written by hand ---------------------------------------------------

AT = Location("tests/intents.yaml", 1, 1)


def said(say: str, intent: str | None, act: str | None = None, **slots: str) -> IntentPhrase:
    return IntentPhrase(
        say, intent, act, "confirm" if act else None, json.dumps(slots), AT, act is None
    )


OUTCOMES = (
    Outcome(said("a1", "a"), "a", "keyword"),
    Outcome(said("a2", "a"), "clarify", "example", ("a", "b")),  # right, clarified
    Outcome(said("a3", "a"), "b", "example"),
    Outcome(said("b1", "b"), "b", "keyword", slots={"x": "1"}),
    Outcome(said("b2", "b", x="2"), "b", "keyword", slots={"x": "3"}),
    Outcome(said("s1", "s"), "s", "safety"),
    Outcome(said("s2", "s"), None, ""),
    Outcome(said("n1", None), None, ""),
    Outcome(said("n2", None), "a", "example"),
    Outcome(said("y", None, "affirm"), None, "act", act="affirm"),
    Outcome(said("no", None, "deny"), None, "", act="other"),
)
MEASURE = Measure(OUTCOMES, ("s", "a", "b"))


@pytest.mark.parametrize(
    ("intent", "expected", "decided", "precision", "recall"),
    [
        ("s", 2, 1, 1.0, 0.5),
        ("a", 3, 2, 0.5, 2 / 3),  # the clarifying question naming a finds it
        ("b", 2, 3, 2 / 3, 1.0),
    ],
)
def test_precision_and_recall(
    intent: str, expected: int, decided: int, precision: float, recall: float
) -> None:
    s = MEASURE.score(intent)
    assert (s.expected, s.decided) == (expected, decided)
    assert s.precision == pytest.approx(precision)
    assert s.recall == pytest.approx(recall)


def test_the_other_scores() -> None:
    assert MEASURE.accuracy() == pytest.approx(6 / 9)
    assert MEASURE.clarified() == (1, 1)
    assert MEASURE.out_of_scope() == (2, 1)
    assert MEASURE.acts() == (2, 1)
    assert MEASURE.slots() == (1, 0)
    assert MEASURE.confusion() == (("a", "b", 1), ("none", "a", 1), ("s", "none", 1))
    assert MEASURE.layers() == (
        ("example", 3),
        ("keyword", 3),
        ("none", 3),
        ("act", 1),
        ("safety", 1),
    )
    assert [o.phrase.say for o in MEASURE.misses()] == ["a3", "b2", "s2", "n2", "no"]


@pytest.mark.parametrize(
    ("minimums", "expected"),
    [
        ((0, 0), ["safety intent 's' recall 50.0% is below 100%"]),
        (
            (70, 60),
            [
                "safety intent 's' recall 50.0% is below 100%",
                "intent 'a' recall 66.7% is below 70%",
                "intent 'a' precision 50.0% is below 60%",
            ],
        ),
        # 2/3 is 66.7 %: a minimum of exactly that passes (no float noise fails it)
        ((100 * 2 / 3, 0), ["safety intent 's' recall 50.0% is below 100%"]),
    ],
)
def test_what_fails_the_run(minimums: tuple[float, float], expected: list[str]) -> None:
    report = UnderstandingReport("p", AT, MEASURE, MEASURE, (), ("s",))
    assert report.problems(*minimums) == expected
