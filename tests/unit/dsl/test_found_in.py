"""``found in <path>``: the item predicate that grounds items in other texts, as parsed."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter.dsl import ast as A
from charter.dsl.parser import DSLSyntaxError, parse_expr

OUT = A.Path(A.Name("output"))
MONEY = A.Name("money")


def _path(root: str, *parts: str | int) -> A.Path:
    return A.Path(A.Name(root), tuple(parts))


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        (
            "every money in output found in model.grounds",
            A.Quantified("every", MONEY, OUT, A.IFound(_path("model", "grounds"))),
        ),
        (
            "no percent in output found in context.banned",
            A.Quantified("no", A.Name("percent"), OUT, A.IFound(_path("context", "banned"))),
        ),
        (
            "some date in input found in skill.results[0].text",
            A.Quantified(
                "some",
                A.Name("date"),
                A.Path(A.Name("input")),
                A.IFound(_path("skill", "results", 0, "text")),
            ),
        ),
        (
            "every money in output not found in context.banned",
            A.Quantified("every", MONEY, OUT, A.INot(A.IFound(_path("context", "banned")))),
        ),
        (
            'every money in output (has unit "元" and found in context.quote)',
            A.Quantified(
                "every",
                MONEY,
                OUT,
                A.IAnd((A.IUnit(A.Terms(("元",))), A.IFound(_path("context", "quote")))),
            ),
        ),
        (
            # `and` after the path belongs to the enclosing expression
            'every money in output found in context.q and output contains "元"',
            A.And(
                (
                    A.Quantified("every", MONEY, OUT, A.IFound(_path("context", "q"))),
                    A.Contains(OUT, "one", A.Terms(("元",))),
                )
            ),
        ),
        # `found` stays a name wherever a name is expected
        (
            "context.found == 1",
            A.Compare("==", _path("context", "found"), A.Num(Decimal(1))),
        ),
        (
            "every money in output found in context.found",
            A.Quantified("every", MONEY, OUT, A.IFound(_path("context", "found"))),
        ),
        ("founders.x == 1", A.Compare("==", _path("founders", "x"), A.Num(Decimal(1)))),
    ],
)
def test_parses_to_the_expected_tree(text: str, tree: A.Expr) -> None:
    assert parse_expr(text) == tree


def test_spans_cover_the_predicate_and_the_path() -> None:
    text = "every money in output found in skill.results"
    tree = parse_expr(text)
    assert isinstance(tree, A.Quantified) and isinstance(tree.pred, A.IFound)
    s, e = tree.pred.span
    assert text[s:e] == "found in skill.results"
    s, e = tree.pred.ground.span
    assert text[s:e] == "skill.results"
    assert tree.pred.ground.dotted() == "skill.results"


def test_the_node_is_frozen_and_compares_without_spans() -> None:
    a = A.IFound(_path("context", "x"), span=(0, 5))
    b = A.IFound(_path("context", "x"), span=(7, 9))
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.ground = _path("context", "y")  # type: ignore[misc]
    assert A.walk(a) == [a, a.ground, a.ground.root]


PARENS = (
    'a compound item check needs parentheses: every money in output (has unit "元" and '
    "found in context.prices)"
)
NEEDS_PATH = "'found in' takes a path to the texts to look in: found in context.prices"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("every money in output found in", ("unexpected end of expression", 30, 31, NEEDS_PATH)),
        ('every money in output found in ["¥1"]', ("unexpected '['", 31, 32, NEEDS_PATH)),
        ('every money in output found in "¥1"', ("unexpected '\"¥1\"'", 31, 35, NEEDS_PATH)),
        (
            'every money in output has unit "元" and found in context.q',
            ("unexpected 'context'", 48, 55, PARENS),
        ),
        (
            "every money in output found context.q",
            ("unexpected 'context'", 28, 35, "expected 'in'"),
        ),
        (
            "every money in output found in context.q.",
            ("unexpected end of expression", 41, 42, "expected a name"),
        ),
    ],
)
def test_syntax_errors(text: str, error: tuple[str, int, int, str]) -> None:
    with pytest.raises(DSLSyntaxError) as exc:
        parse_expr(text)
    assert (exc.value.message, exc.value.start, exc.value.end, exc.value.hint) == error
