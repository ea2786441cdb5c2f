"""The limits on one DSL expression (CH113-CH116), checked before parsing."""

from __future__ import annotations

import pytest

from charter.dsl.limits import MAX_DEPTH, MAX_LITERAL, MAX_SOURCE, MAX_TERMS, over_limits
from charter.dsl.parser import DSLSyntaxError, parse_expr


def _error(text: str) -> DSLSyntaxError:
    with pytest.raises(DSLSyntaxError) as info:
        parse_expr(text)
    return info.value


def test_an_expression_longer_than_the_limit() -> None:
    e = _error('output contains "x" or ' * 1000 + 'output contains "y"')
    assert (e.code, e.message, e.start) == (
        "CH113",
        "expression has 23,019 characters, more than 20,000",
        MAX_SOURCE,
    )


def test_nesting_deeper_than_the_limit() -> None:
    e = _error("(" * (MAX_DEPTH + 1) + 'output contains "x"' + ")" * (MAX_DEPTH + 1))
    assert (e.code, e.message, e.start) == (
        "CH114",
        "expression is nested more than 50 levels deep",
        MAX_DEPTH,
    )


def test_more_terms_than_the_limit() -> None:
    words = ", ".join(f'"{i}"' for i in range(MAX_TERMS + 2))
    e = _error(f"output contains any [{words}]")
    assert (e.code, e.message) == ("CH115", "expression has more than 1,000 terms")


def test_a_literal_longer_than_the_limit() -> None:
    e = _error('output contains "' + "x" * (MAX_LITERAL + 1) + '"')
    assert (e.code, e.message, e.start) == (
        "CH116",
        "string of 2,001 characters, more than 2,000",
        16,
    )
    e = _error("output matches /" + "x" * (MAX_LITERAL + 1) + "/")
    assert e.message == "regular expression of 2,001 characters, more than 2,000"


def test_punctuation_inside_literals_is_not_counted() -> None:
    inside = "(" * 60 + ", and or not" * 200
    assert over_limits(f'output contains "{inside}"'[:MAX_LITERAL]) is None
    assert over_limits('output matches /(((((((a)))))))/ and output contains "(,"') is None


def test_at_the_limits_an_expression_parses() -> None:
    nested = "(" * MAX_DEPTH + 'output contains "x"' + ")" * MAX_DEPTH
    assert parse_expr(nested) is not None
    words = ", ".join(f'"{i}"' for i in range(MAX_TERMS))
    assert parse_expr(f"output contains any [{words}]") is not None
