"""Pack patterns are evaluated with a time bound (issue 16, point 8): what a timeout means."""

from __future__ import annotations

from typing import Any

import pytest

from charter.compile import primitives
from charter.compile.build import Builder
from charter.compile.codegen import rule_function
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.dsl.parser import parse_expr
from charter.text.patterns import BoundedPattern, PatternTimeout, bounded


class _Slow:
    """A compiled pattern that always runs out of time."""

    pattern = "slow"
    flags = groups = 0
    groupindex: dict[str, int] = {}  # noqa: RUF012

    def search(self, *args: Any, **kwargs: Any) -> None:
        raise TimeoutError("regex timed out")

    finditer = match = fullmatch = search


def test_a_catastrophic_search_stops_and_says_so() -> None:
    p = bounded(r"(a+)+$", timeout=0.01)
    with pytest.raises(PatternTimeout):
        p.search("a" * 5000 + "!")
    assert p.found("a" * 5000 + "!", on_timeout=True) is True
    assert p.found("a" * 5000 + "!", on_timeout=False) is False
    assert p.search("aaa") is not None
    assert [m.group() for m in bounded("a").finditer("a b a")] == ["a", "a"]


@pytest.mark.parametrize(
    ("expr", "outcome"),
    [
        ("output matches /x/", "fail"),
        ("not output matches /x/", "fail"),
        ('not (output matches /x/ or output contains "y")', "fail"),
        ('output contains "y" or output matches /x/', "pass"),  # y is in the text
        ("not not output matches /x/", "fail"),
        ("some money in output matches /x/", "fail"),  # an item's pattern: no match
    ],
)
def test_a_timed_out_pattern_makes_its_expression_not_hold(
    monkeypatch: pytest.MonkeyPatch, registry: Any, expr: str, outcome: str
) -> None:
    monkeypatch.setattr(primitives, "bounded", lambda *a, **k: BoundedPattern(_Slow()))  # type: ignore[arg-type]
    node = parse_expr(expr)
    table = LiteralTable(sorted(primitives.literals_of(node)))
    builder = Builder(table.ids, {}, registry.predicates)
    env = Env("y 5元", "", {}, table, dict(registry.extractors))
    assert rule_function("r", None, node, builder)(env) == outcome  # generated code
    assert builder.expr(node)(env) == (outcome == "pass")  # the closures agree
