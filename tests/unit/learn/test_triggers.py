"""The trigger functions on their own: rejection words, entropy, concept corrections."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from charter.compile.specs.learn import LearningSpec, Triggers
from charter.learn.log import Evidence
from charter.learn.triggers import (
    CallSeen,
    History,
    Signals,
    TurnSeen,
    concept_correction,
    evaluate,
    is_rejection,
    mean_entropy,
)

AT = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
SPEC = LearningSpec(concepts=(("市盈率", "股价 ÷ 每股收益"), ("市净率", "股价 ÷ 每股净资产")))


@pytest.mark.parametrize(
    ("text", "rejects"),
    [
        ("不对", True),
        ("不对，是2025年的", True),
        ("错了", True),
        ("重新来", True),
        ("你理解错了吧", True),
        ("答非所问", True),
        ("没错", False),
        ("不错，谢谢", False),
        ("对不对？", False),
        ("是不是错了？", False),
        ("这个数错了吗", False),
        ("好的", False),
        ("我还没用过这张卡", False),  # 没用 + 过: not "useless"
        ("我转错了账户怎么办", False),  # the user's own mistake
        ("我记错了，是尾号5678", False),
        ("你算错了", True),
        ("感觉不对劲", False),
    ],
)
def test_is_rejection(text: str, rejects: bool) -> None:
    assert is_rejection(text) is rejects


@dataclass(frozen=True)
class WithEntropy:
    mean_entropy: float
    logprobs: tuple[float, ...] = (-9.0,)


@dataclass(frozen=True)
class WithLogprobs:
    logprobs: tuple[float, ...]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (WithEntropy(2.5), 2.5),  # the backend's full-vocabulary entropy wins
        (WithLogprobs((-1.0, -3.0)), 2.0),  # mean surprisal
        (WithLogprobs(()), None),
        (object(), None),
    ],
)
def test_mean_entropy(completion: object, expected: float | None) -> None:
    assert mean_entropy(completion) == expected


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("不对，我问的是市净率，不是市盈率", ("市盈率", "市净率")),
        ("不是市盈率，是市净率", ("市盈率", "市净率")),
        ("我要市净率不是市盈率", ("市盈率", "市净率")),
        ("不是市盈率而是市净率", ("市盈率", "市净率")),
        ("不对，重新来", None),
        ("不是市盈率，是市盈率", None),
        ("不是股价，是市净率", None),  # 股价 is not a concept of learning.yaml
    ],
)
def test_concept_correction(text: str, pair: tuple[str, str] | None) -> None:
    assert concept_correction(SPEC, text) == pair


def test_a_concept_correction_needs_two_concepts() -> None:
    assert concept_correction(LearningSpec(), "不是市盈率，是市净率") is None


def _turn(text: str, *calls: CallSeen) -> TurnSeen:
    return TurnSeen(text=text, at=AT, calls=calls, hypothesis="查询市净率", intent="metric")


def test_a_concept_correction_is_the_reflection_s_correction() -> None:
    history = History()
    assert evaluate(SPEC, history, "u", "s", Signals(_turn("茅台的市净率是多少"))) == []
    (r,) = evaluate(SPEC, history, "u", "s", Signals(_turn("不对，我问的是市净率，不是市盈率")))
    assert (r.trigger, r.hypothesis, r.correction) == (
        "negation",
        "用户问的是市净率，不是市盈率",
        {"concept": "市净率", "instead_of": "市盈率"},
    )
    assert r.evidence == (
        Evidence("user_input", AT, "茅台的市净率是多少"),
        Evidence("user_feedback", AT, "不对，我问的是市净率，不是市盈率"),
    )


def test_three_failures_in_a_row_with_a_threshold_of_three() -> None:
    spec = LearningSpec(triggers=Triggers(skill_failures=3))
    history = History()
    down = CallSeen("s", {}, "failed", "timeout")
    fired = [
        [r.trigger for r in evaluate(spec, history, "u", "s", Signals(_turn(f"第{n}次", down)))]
        for n in (1, 2, 3, 4)
    ]
    # the third failure reflects and starts the count again: an outage is one entry per three
    assert fired == [[], [], ["skill_failure"], []]


def test_invalid_arguments_are_not_a_skill_failure() -> None:
    history = History()
    refused = CallSeen("s", {}, "invalid", "invalid_args")
    for _ in range(3):
        assert evaluate(LearningSpec(), history, "u", "s", Signals(_turn("x", refused))) == []


def test_history_is_bounded_and_forgets_a_user() -> None:
    history = History(limit=2)
    for n in range(3):
        history.remember(f"u{n}", "s", _turn("x"))
    assert list(history.last) == [("u1", "s"), ("u2", "s")]
    history.streak("u2", CallSeen("s", {}, "failed", "error"), AT)
    history.forget("u2")
    assert list(history.last) == [("u1", "s")] and history.streaks == {}


def test_history_is_safe_to_share_between_threads() -> None:
    import threading

    history = History(limit=500)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(3000):
                history.remember(f"w{n}-{i}", "s", _turn("x"))
                history.streak(f"w{n}-{i % 7}", CallSeen("s", {}, "failed", "error"), AT)
        except BaseException as exc:  # what an unguarded dict raises mid-iteration
            errors.append(exc)

    def forget() -> None:
        try:
            for _ in range(300):
                history.forget("w0-5")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    threads.append(threading.Thread(target=forget))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(history.last) == 500
