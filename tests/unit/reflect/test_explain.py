"""``charter check --explain``: every rule's outcome on a text, why, and what it saw."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from charter.reflect.engine import Engine
from charter.reflect.explain import explain

RULES = """
rules:
  - id: ban
    describe: ban 绝对
    message: 不用绝对
    check: not output contains any ["绝对", "肯定"]
    on_fail: retry
  - id: disclaimer
    describe: needs 请遵医嘱
    when: output contains "药"
    check: output contains "请遵医嘱"
    on_fail: fix append "（请遵医嘱）"
  - id: money
    describe: money with two decimals
    check: every money in output (decimals == 2)
    on_fail: flag
"""


def rows(engine: Engine, text: str) -> list[tuple[str, str, str, list[tuple[str, int, int]]]]:
    return [
        (r.rule, r.outcome, r.reason, [(s.text, s.start, s.end) for s in r.seen])
        for r in explain(engine, text)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "您好",
            [
                ("ban", "pass", "passed: nothing it looks for is in the text", []),
                ("disclaimer", "skip", 'skipped: its when did not hold (output contains "药")', []),
                ("money", "pass", "passed: nothing it looks for is in the text", []),
            ],
        ),
        (
            "绝对有效的药，肯定，12.5元",
            [
                ("ban", "fail", "failed: 不用绝对", [("绝对", 0, 2), ("肯定", 7, 9)]),
                ("disclaimer", "fail", "failed: needs 请遵医嘱", [("药", 5, 6)]),
                ("money", "fail", "failed: money with two decimals", [("12.5元", 10, 15)]),
            ],
        ),
        (
            "这个药请遵医嘱，12.50元",
            [
                ("ban", "pass", "passed: nothing it looks for is in the text", []),
                (
                    "disclaimer",
                    "pass",
                    'passed: its check held (output contains "请遵医嘱")',
                    [("药", 2, 3), ("请遵医嘱", 3, 7)],
                ),
                (
                    "money",
                    "pass",
                    "passed: its check held (every money in output (decimals == 2))",
                    [("12.50元", 8, 14)],
                ),
            ],
        ),
    ],
)
def test_each_rule_says_why(
    engine_for: Callable[[str], Engine],
    text: str,
    expected: list[tuple[str, str, str, list[tuple[str, int, int]]]],
) -> None:
    assert rows(engine_for(RULES), text) == expected


def test_a_failure_blames_what_its_finding_shows(engine_for: Callable[[str], Engine]) -> None:
    engine = engine_for(RULES)
    text = "绝对有效的药，肯定"
    blamed = {r.rule: r.blamed for r in explain(engine, text)}
    findings = {f.rule_id: f.spans for f in engine.check(text).findings}
    assert blamed == {"ban": findings["ban"], "disclaimer": findings["disclaimer"], "money": ()}
    assert blamed["ban"] == ((0, 2), (7, 9))
