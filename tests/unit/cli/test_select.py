"""``charter test -k``: pytest's keyword expressions over a case's keywords."""

from __future__ import annotations

import pytest

from charter.cli.select import SelectError, case_keywords, compile_selection

WORDS = case_keywords(
    "finance",
    "conversation",
    "Refund after 退款 request",
    "domains/finance/tests/conversations/refund.yaml",
)


def test_the_keywords_of_a_case() -> None:
    assert WORDS == (
        "finance",
        "conversation",
        "Refund after 退款 request",
        "refund.yaml",
        "refund",
    )


@pytest.mark.parametrize(
    ("expression", "selected"),
    [
        ("refund", True),
        ("REFUND", True),  # case does not matter
        ("退款", True),
        ("conversation", True),
        ("not conversation", False),
        ("refund and not conversation", False),
        ("refund and conversation", True),
        ("medical or finance", True),
        ("medical or (finance and planner)", False),
        ("not not finance", True),
        ("fin", True),  # a part of a keyword
        ("refund.yaml", True),
        ("android", False),  # a name that starts like a keyword is a name
        ("ordinary", False),
        ("(((finance)))", True),
    ],
)
def test_selection(expression: str, selected: bool) -> None:
    assert compile_selection(expression).selects(WORDS) is selected


@pytest.mark.parametrize(
    ("expression", "column", "reason"),
    [
        ("", 1, "expected a name, 'not' or '('; got end of input"),
        ("   ", 1, "expected a name, 'not' or '('; got end of input"),
        ("a and", 6, "expected a name, 'not' or '('; got end of input"),
        ("not", 4, "expected a name, 'not' or '('; got end of input"),
        ("a b", 3, "expected 'and', 'or' or the end; got 'b'"),
        ("(a b", 4, "expected 'and', 'or' or ')'; got 'b'"),
        ("a & b", 3, "expected 'and', 'or' or the end; got '&'"),
        ("(a", 3, "expected ')'; got end of input"),
        ("a)", 2, "expected the end; got ')'"),
        ("and", 1, "expected a name, 'not' or '('; got 'and'"),  # a keyword is never a name
        ("or b", 1, "expected a name, 'not' or '('; got 'or'"),
        ("a and or", 7, "expected a name, 'not' or '('; got 'or'"),
    ],
)
def test_an_expression_that_does_not_parse(expression: str, column: int, reason: str) -> None:
    with pytest.raises(SelectError) as caught:
        compile_selection(expression)
    assert (caught.value.column, caught.value.reason) == (column, reason)
    assert caught.value.render() == f"    {expression}\n    {' ' * (column - 1)}^"
