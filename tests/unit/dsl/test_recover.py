"""Every syntax error of one expression (charter.dsl.recover): the top-level clauses after the
first error are parsed alone, and nothing is reported that the author did not write."""

from __future__ import annotations

import pytest

from charter.dsl.parser import DSLSyntaxError, parse_action, parse_expr


@pytest.mark.parametrize(
    ("text", "errors"),
    [
        ('output contans "保证"', [("unexpected 'contans'", 7)]),
        (
            'output contans "保证" or output contans "稳赚"',
            [("unexpected 'contans'", 7), ("unexpected 'contans'", 30)],
        ),
        # a clause that parses ends the search; one after it with an error is found too
        (
            'output contans "保证" and output contains "风险" or input contans "理财"',
            [("unexpected 'contans'", 7), ("unexpected 'contans'", 54)],
        ),
        # inside parentheses only the first: a clause cut out of them would not parse alone
        ('(output contans "保证" or output contans "稳赚")', [("unexpected 'contans'", 8)]),
        # an unclosed string swallows the rest: nothing after it is guessed at
        ('output contains "保证 or output contans "稳赚"', [("unexpected character '稳'", 39)]),
        # or/and inside a string or a regular expression are not connectives
        ('output contans "a or b" and output matches /x and y/', [("unexpected 'contans'", 7)]),
    ],
)
def test_every_clause_error_is_reported_once(text: str, errors: list[tuple[str, int]]) -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_expr(text)
    assert [(e.message, e.start) for e in info.value.every()] == errors


def test_an_action_has_one_clause_and_one_error() -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_action("fix apend 1 or retyr")
    assert len(info.value.every()) == 1
