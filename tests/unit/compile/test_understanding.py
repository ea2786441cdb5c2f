"""The understanding stage (ARCHITECTURE §6a): ranking and deciding with exact, hand-made
similarities; the fit's pieces; the diagnostics a pack's examples get, on packs whose examples
the ``hash`` embedder embeds (the same vectors on every machine)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from charter.compile.api import compile_path
from charter.compile.specs.understanding import (
    Band,
    Decision,
    Scored,
    decide,
    rank_rows,
)
from charter.compile.understanding import _best_f, _margin, _middle
from charter.contracts.registry import Registry

BANDS = (
    Band("fraud", 0.5, 0.5, safety=True),
    Band("balance", 0.8, 0.6),
    Band("transfer", 0.8, 0.6),
)


def scored(*rows: tuple[str, float]) -> tuple[Scored, ...]:
    return tuple(Scored(i, s, f"{i} example") for i, s in rows)


@pytest.mark.parametrize(
    ("ranking", "decision", "intents"),
    [
        (scored(("balance", 0.9), ("transfer", 0.7)), Decision.OPEN, ("balance",)),
        (scored(("balance", 0.9), ("transfer", 0.88)), Decision.CLARIFY, ("balance", "transfer")),
        # the second is close but under its ask band: the first opens alone
        (scored(("balance", 0.9), ("transfer", 0.59)), Decision.OPEN, ("balance",)),
        (scored(("balance", 0.7), ("transfer", 0.5)), Decision.CONFIRM, ("balance",)),
        (scored(("balance", 0.7), ("transfer", 0.69)), Decision.CLARIFY, ("balance", "transfer")),
        (scored(("balance", 0.55), ("transfer", 0.5)), Decision.NONE, ()),
        ((), Decision.NONE, ()),
    ],
)
def test_decide(ranking: tuple[Scored, ...], decision: Decision, intents: tuple[str, ...]) -> None:
    heard = decide(ranking, BANDS, margin=0.05)
    assert (heard.decision, heard.intents, heard.safety) == (decision, intents, ())


def test_a_vetoed_intent_is_passed_over() -> None:
    ranking = (
        Scored("balance", 0.95, "查余额", vetoed_by="余额怎么查"),
        Scored("transfer", 0.85, "转账"),
    )
    heard = decide(ranking, BANDS, margin=0.05)
    assert (heard.decision, heard.intents) == (Decision.OPEN, ("transfer",))


@pytest.mark.parametrize(
    ("fraud", "best", "opens"),
    [
        (0.6, 0.9, False),  # over its band, but far behind the best ordinary intent
        (0.6, 0.605, True),  # recall first: it may trail by SAFETY_LEAD (0.01)
        (0.45, 0.3, False),  # under its band
        (0.7, 0.3, True),
    ],
)
def test_a_safety_intent_opens_over_its_band_near_the_top(
    fraud: float, best: float, opens: bool
) -> None:
    ranking = tuple(sorted(scored(("fraud", fraud), ("balance", best)), key=lambda s: -s.score))
    heard = decide(ranking, BANDS, margin=0.05)
    assert (heard.safety == ("fraud",)) is opens


def test_rank_scores_the_mean_of_the_two_nearest_and_vetoes_by_nearer_near_misses() -> None:
    labels = ["a", "a", "a", "b", "!a", ""]
    texts = ["a1", "a2", "a3", "b1", "not a", "oos"]
    sims = np.array([0.9, 0.8, 0.1, 0.5, 0.95, 0.2], dtype=np.float32)
    ranking = rank_rows(labels, texts, sims, ("a", "b"))
    assert [(s.intent, round(s.score, 4), s.nearest, s.vetoed_by) for s in ranking] == [
        ("a", 0.85, "a1", "not a"),
        ("b", 0.5, "b1", None),
    ]
    held = rank_rows(labels, texts, sims, ("a", "b"), skip=4)  # the near miss held out
    assert held[0].vetoed_by is None


@pytest.mark.parametrize(
    ("hits", "false", "threshold"),
    [
        ([0.9, 0.8, 0.7], [], 0.7),  # no false alarm: every hit
        ([0.9, 0.8, 0.7], [0.75], 0.8),  # the false alarm costs more than the hit under it
        ([0.9, 0.8, 0.7, 0.6], [0.65], 0.7),
        ([0.5], [0.9], 0.5),  # a hit at least, whatever it costs
    ],
)
def test_the_open_band_maximises_f_half(
    hits: list[float], false: list[float], threshold: float
) -> None:
    assert _best_f(hits, false) == pytest.approx(threshold, abs=2e-4)


@pytest.mark.parametrize(
    ("open_", "unrelated", "ask"),
    [(0.9, [0.8, 0.7], 0.85), (0.9, [], 0.9), (0.9, [0.95], 0.9)],
)
def test_the_middle_band_is_halfway_down_to_unrelated_talk(
    open_: float, unrelated: list[float], ask: float
) -> None:
    assert _middle(open_, unrelated) == pytest.approx(ask)


def test_the_margin_covers_the_confusions_the_examples_left() -> None:
    labels = ["a", "b", "a"]
    held = [
        (Scored("b", 0.91, "b1"), Scored("a", 0.9, "a2")),  # an a example lost to b by 0.01
        (Scored("b", 0.9, "b2"), Scored("a", 0.5, "a1")),
        (Scored("a", 0.9, "a1"), Scored("b", 0.8, "b1")),
    ]
    assert _margin(labels, held, set()) == pytest.approx(0.0101, abs=1e-6)
    assert _margin(["a"], [held[2]], set()) == 0.003  # no confusion: the least margin


# ---- the stage on packs --------------------------------------------------------------------


def write_pack(root: Path, goals: str) -> Path:
    root.mkdir()
    (root / "pack.yaml").write_text("name: p\nversion: 0.1.0\n", encoding="utf-8")
    (root / "memory.yaml").write_text("retrieval:\n  embedder: hash\n", encoding="utf-8")
    (root / "goals.yaml").write_text(goals, encoding="utf-8")
    return root


GOALS = """\
out_of_scope: [今天天气怎么样, 讲个笑话]
intents:
  - id: balance
    describe: 查询余额
    examples: [卡里还有多少钱, 账上还剩多少钱, 看看我的钱, 余额多少, 卡里剩多少]
  - id: transfer
    describe: 转账
    trigger: input contains "转账"
    examples: [给张三打钱, 打钱给李四]
"""


def test_an_intent_may_have_examples_and_no_trigger(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_path(write_pack(tmp_path / "p", GOALS), registry, cache_dir=None)
    assert pack is not None and pack.goals is not None and pack.understanding is not None
    balance = pack.goals.intent("balance")
    assert balance is not None and balance.trigger is None and balance.literals == ()
    assert [(d.code, d.message, d.location.line) for d in diags] == [
        (
            "CH380",
            "intent 'transfer' has 2 example(s); at least 5 are needed to fit its thresholds",
            9,
        )
    ]


def test_an_example_nearer_another_intent_is_reported_where_it_is_written(
    tmp_path: Path, registry: Registry
) -> None:
    goals = GOALS.replace("余额多少, 卡里剩多少]", "余额多少, 卡里剩多少, 打钱给王五]")
    _, diags = compile_path(write_pack(tmp_path / "p", goals), registry, cache_dir=None)
    assert [d.code for d in diags] == ["CH380", "CH381"]
    assert diags[1].message == (
        "example '打钱给王五' of intent 'balance' is closer to 'transfer' than to its own intent"
    )
    assert (diags[1].location.line, diags[1].location.col) == (5, 54)


def test_an_utterance_written_twice_is_reported(tmp_path: Path, registry: Registry) -> None:
    goals = GOALS.replace("[给张三打钱, 打钱给李四]", "[给张三打钱, 打钱给李四, 讲个笑话]")
    _, diags = compile_path(write_pack(tmp_path / "p", goals), registry, cache_dir=None)
    assert "'讲个笑话' is an example of 'transfer' and out of scope" in [
        d.message for d in diags if d.code == "CH384"
    ]


def test_a_safety_intent_cannot_ask_or_run_anything(tmp_path: Path, registry: Registry) -> None:
    goals = GOALS + (
        '  - id: fraud\n    describe: 诈骗\n    safety: true\n    trigger: input contains "被骗"\n'
        "    confirm: true\n"
    )
    pack, diags = compile_path(write_pack(tmp_path / "p", goals), registry, cache_dir=None)
    assert pack is None
    assert [(d.code, d.message) for d in diags if d.is_error] == [
        ("CH383", "safety intent 'fraud' has confirm:, which a safety intent cannot have")
    ]


def test_without_the_embedder_the_examples_are_not_used(tmp_path: Path, registry: Registry) -> None:
    bare = dataclasses.replace(registry, embedders={})
    pack, diags = compile_path(write_pack(tmp_path / "p", GOALS), bare, cache_dir=None)
    assert pack is not None and pack.understanding is None
    assert "CH382" in [d.code for d in diags]
