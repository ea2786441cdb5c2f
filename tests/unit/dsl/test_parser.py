"""Parsing DSL text into the frozen AST, and syntax errors with exact offsets and hints."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter.dsl import ast as A
from charter.dsl.parser import DSLSyntaxError, parse_action, parse_expr

OUT = A.Path(A.Name("output"))


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ('output contains "绝对"', A.Contains(OUT, "one", A.Terms(("绝对",)))),
        (
            'output contains any ["a", "b",]',
            A.Contains(OUT, "any", A.Terms(("a", "b"))),
        ),
        (
            'not output contains "保证" unless preceded by ["不", "无法"] within 2',
            A.Not(
                A.Contains(
                    OUT,
                    "one",
                    A.Terms(("保证",)),
                    (A.Unless("preceded", A.Terms(("不", "无法")), 2),),
                )
            ),
        ),
        ("output matches /a\\/b/i", A.Matches(OUT, A.Regex("a/b", "i"))),
        (
            'output mentions percent near "收益" within 5',
            A.Mentions(OUT, A.Name("percent"), A.Near(A.Terms(("收益",)), 5)),
        ),
        (
            "every money in output has twin money_upper",
            A.Quantified("every", A.Name("money"), OUT, A.ITwin(A.Name("money_upper"))),
        ),
        (
            'no money in output (has unit "元" and not decimals == 2)',
            A.Quantified(
                "no",
                A.Name("money"),
                OUT,
                A.IAnd((A.IUnit(A.Terms(("元",))), A.INot(A.IDecimals("==", 2)))),
            ),
        ),
        (
            "context.range[1] - context.range[0] <= 3",
            A.Compare(
                "<=",
                A.Arith(
                    "-",
                    A.Path(A.Name("context"), ("range", 1)),
                    A.Path(A.Name("context"), ("range", 0)),
                ),
                A.Num(Decimal(3)),
            ),
        ),
        ("len(output) > -1", A.Compare(">", A.Len(OUT), A.Num(Decimal(-1)))),
        (
            "a == 1 or b == 2 and c == 3",
            A.Or(
                (
                    A.Compare("==", A.Path(A.Name("a")), A.Num(Decimal(1))),
                    A.And(
                        (
                            A.Compare("==", A.Path(A.Name("b")), A.Num(Decimal(2))),
                            A.Compare("==", A.Path(A.Name("c")), A.Num(Decimal(3))),
                        )
                    ),
                )
            ),
        ),
        ('has_pii(output, "phone")', A.Call(A.Name("has_pii"), (OUT, A.Str("phone")))),
        (
            "'单引号' == context.x",
            A.Compare("==", A.Str("单引号"), A.Path(A.Name("context"), ("x",))),
        ),
        (r'output contains "a\"b\u4e2d"', A.Contains(OUT, "one", A.Terms(('a"b中',)))),
    ],
)
def test_parses_to_the_expected_tree(text: str, tree: A.Expr) -> None:
    assert parse_expr(text) == tree


def test_spans_point_at_tokens() -> None:
    text = "every mony in output has twin money_upper"
    tree = parse_expr(text)
    assert isinstance(tree, A.Quantified)
    s, e = tree.extractor.span
    assert text[s:e] == "mony"
    assert isinstance(tree.pred, A.ITwin)
    s, e = tree.pred.extractor.span
    assert text[s:e] == "money_upper"


def test_keywords_need_word_boundaries() -> None:
    # 'not' must not be read as the quantifier 'no' followed by 't', nor 'input' as 'in'
    tree = parse_expr('not input contains "x" and notes.x == 1')
    assert isinstance(tree, A.And)
    assert tree.items[1] == A.Compare("==", A.Path(A.Name("notes"), ("x",)), A.Num(Decimal(1)))


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("retry", A.Action("retry")),
        ("block", A.Action("block")),
        (
            'fix append "（请遵医嘱）"',
            A.Action("fix", A.Name("append"), (A.RepairArgNode("string", "（请遵医嘱）"),)),
        ),
        (
            'fix replace ["最便宜", "最低价"] with "超值"',
            A.Action(
                "fix",
                A.Name("replace"),
                (
                    A.RepairArgNode("strings", ("最便宜", "最低价")),
                    A.RepairArgNode("name", "with"),
                    A.RepairArgNode("string", "超值"),
                ),
            ),
        ),
        (
            "fix reformat money",
            A.Action("fix", A.Name("reformat"), (A.RepairArgNode("name", "money"),)),
        ),
    ],
)
def test_actions(text: str, action: A.Action) -> None:
    assert parse_action(text) == action


@pytest.mark.parametrize(
    ("text", "message", "start", "end", "hint"),
    [
        ('output contain "x"', "unexpected 'contain'", 7, 14, "did you mean 'contains'?"),
        (
            "output contains",
            "unexpected end of expression",
            15,
            16,
            "expected 'all', 'any', a string",
        ),
        (
            "output contains “x”",
            "unexpected character '“'",
            16,
            17,
            'use ASCII quotes "..." around strings',
        ),
        ('output contains "x', "unexpected character '\"'", 16, 17, "this string is not closed"),
        (
            "output matches /abc",
            "unexpected character '/'",
            15,
            16,
            "a regular expression is written /.../ and must be closed",
        ),
        ('output contains any ["a" "b"]', "unexpected '\"b\"'", 25, 28, "expected ',', ']'"),
        (
            "every money in output decimals == 1.5",
            "decimals must be a whole number, not 1.5",
            34,
            37,
            "",
        ),
        (
            'output contains "x" unles preceded by "a"',
            "unexpected 'unles'",
            20,
            25,
            "did you mean 'unless'?",
        ),
        ("", "empty expression", 0, 1, 'write a condition such as output contains "请遵医嘱"'),
        ("   ", "empty expression", 0, 1, 'write a condition such as output contains "请遵医嘱"'),
    ],
)
def test_syntax_errors(text: str, message: str, start: int, end: int, hint: str) -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_expr(text)
    err = info.value
    assert (err.message, err.start, err.end, err.hint) == (message, start, end, hint)


def test_action_syntax_error() -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_action("retyr")
    assert info.value.message == "unexpected 'retyr'"
    assert info.value.hint == "did you mean 'retry'?"


def test_ast_is_frozen_and_compares_without_positions() -> None:
    a = parse_expr('output contains "x"')
    b = parse_expr('   output   contains   "x"')
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.mode = "all"  # type: ignore[misc]
