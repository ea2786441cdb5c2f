"""Smoke test of ``benchmarks/bench_turn.py`` and its replies section (``bench_replies.py``): it
runs, prints every figure and a verdict per target, writes its JSON, leaves no git worktree
behind, and its pieces (the turns read from the conversation files, the import check, the
rounds check, a baseline that cannot be checked out) do what they say. No timing is asserted."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.unit.benchmarks.smoke import check_lines, quick_once, worktrees_in

# slow: benchmark smoke: runs the benchmark script in a subprocess (seconds to a minute)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks"
PACKS = ("finance", "ecommerce", "medical")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    # the baseline's worktree was removed: the run has a temporary directory of its own, so a
    # benchmark running beside it (bench_understand makes a worktree too) does not count
    return quick_once(tmp_path_factory, "bench_turn.py", check=worktrees_in)


def turns_in(pack: str) -> int:
    files = sorted((ROOT / "domains" / pack / "tests" / "conversations").glob("*.yaml"))
    docs = [yaml.safe_load(f.read_text("utf-8")) for f in files]
    return sum(len(c["turns"]) for d in docs for c in d["conversations"])


def test_prints_every_figure_and_a_verdict_per_target(
    quick_run: tuple[str, dict[str, Any]],
) -> None:
    stdout, figures = quick_run
    baseline = figures["replies"]["baseline"]
    expected = [
        "Charter turn benchmark: ecommerce pack, scripted backend, 20 turns (4 per user)",
        "  verdicts: ask 5, pass 15",
        "  model calls: 0",  # strict: every reply composed from templates
        "Replies without generation, per pack: the conversation tests' user turns, a fresh agent "
        "per conversation (SQLite file, fixed clock), every model call answered “好的，已为您处理。” "
        "by the scripted backend, 1 round(s), load average ",
        f"baseline: not available ({baseline.get('unavailable')})"
        if "unavailable" in baseline
        else f"  before = 0affdca ({baseline['commit'][:12]}) in a temporary git worktree; ",
        "  a turn without generation made no model call (the fill step's call for model: true "
        "slots counts as one)",
        *(f"{p}: {turns_in(p)} turns, without generation " for p in PACKS),
        "outcomes: the 1 round(s) of each side played alike (model calls, verdicts, tickets): OK",
    ]
    targets = ["framework overhead per turn "]
    for p in PACKS:
        targets += [
            f"{p}: replies drafted by the model in strict mode ",
            f"{p}: template-answered turn median ",
        ]
    verdicts = [t["target"] for t in figures["targets"]]
    if "generation" in figures:  # llama-cpp-python and the plugin are installed
        targets.append("generation through charter ")
        assert figures["generation"]["ratio"] > 0
    check_lines(stdout, expected, targets)
    assert len(verdicts) == len(targets)


def test_figures_are_written(quick_run: tuple[str, dict[str, Any]]) -> None:
    _, figures = quick_run
    assert figures["turn"]["turns"] == 20
    assert figures["turn"]["model_calls"] == 0
    assert 0 < figures["turn"]["p50_ms"] <= figures["turn"]["p90_ms"]
    replies = figures["replies"]
    assert replies["rounds"] == 1
    assert replies["baseline"]["ref"] == "0affdca"
    sides = {"today"} if "unavailable" in replies["baseline"] else {"today", "before"}
    for p in PACKS:
        assert set(replies["packs"][p]) == sides
        today = replies["packs"][p]["today"]
        assert today["turns"] == turns_in(p)
        assert today["raised"] == []
        assert today["drafts"] == 0  # strict packs: the model never drafts a reply
        assert today["timed"] == today["without_generation"]
        assert 0 < today["p50_ms"] <= today["p90_ms"]
        before = replies["packs"][p].get("before")
        if before is not None and not before["raised"]:  # the same turns, by the old code
            assert before["turns"] == today["turns"]


@pytest.fixture
def bench_replies(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("bench_replies")


def test_turns_carry_their_user_session_and_time(bench_replies: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "tests" / "conversations").mkdir(parents=True)
    (tmp_path / "tests" / "conversations" / "a.yaml").write_text(
        """conversations:
  - name: two sessions
    user: bob
    turns:
      - user: 你好
        expect: {reply: 您好}
      - user: 查订单
        session: s2
        at: 2024-05-01T10:05:00+08:00
        outage: order_lookup
      - user: 好的
        user_id: amy
  - name: defaults
    now: "2026-02-10T10:00:00+08:00"
    model: '{"year": 2025}'
    turns:
      - user: 去年一季度
""",
        "utf-8",
    )
    assert bench_replies.conversations(tmp_path) == [
        {
            "name": "a: two sessions",
            "now": "2024-05-01T10:00:00+08:00",
            "turns": [
                {"text": "你好", "user": "bob", "session": "s1", "at": None},
                {
                    "text": "查订单",
                    "user": "bob",
                    "session": "s2",
                    "at": "2024-05-01T10:05:00+08:00",
                },
                {"text": "好的", "user": "amy", "session": "s2", "at": None},
            ],
        },
        {
            "name": "a: defaults",
            "now": "2026-02-10T10:00:00+08:00",
            "turns": [{"text": "去年一季度", "user": "u1", "session": "s1", "at": None}],
        },
    ]


def test_a_side_stops_when_charter_comes_from_elsewhere(
    bench_replies: ModuleType, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit, match=r"^charter was imported from .*, not from "):
        bench_replies._imported_from(tmp_path)


def test_rounds_that_disagree_are_refused(bench_replies: ModuleType) -> None:
    turn = {"generations": 0, "attempts": 0, "ticket": False, "verdict": "pass", "ms": 1.0}
    assert bench_replies.figures([[[turn]], [[{**turn, "ms": 2.0}]]])["p50_ms"] == 1.5
    with pytest.raises(AssertionError, match="the rounds disagree"):
        bench_replies.figures([[[turn]], [[{**turn, "generations": 1}]]])


def test_a_baseline_that_cannot_be_checked_out_says_why(bench_replies: ModuleType) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    with bench_replies.worktree("no-such-ref-1f3e") as got:
        assert got == "no commit no-such-ref-1f3e in the repository"
