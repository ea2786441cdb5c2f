"""The plain rows of ``charter chat``: labels in a column, a long one still apart."""

from __future__ import annotations

from charter.cli.chat_render import Row, plain_rows


def test_short_labels_share_the_column() -> None:
    assert plain_rows([Row("goals", ("a",)), Row("memories", ("b", "c"))]) == (
        "  goals       a\n  memories    b\n              c\n"
    )


def test_a_label_longer_than_the_column_keeps_two_spaces() -> None:
    rows = [Row("order_id", ("DD1",)), Row("medication.drug", ("阿莫西林",))]
    assert plain_rows(rows) == ("  order_id         DD1\n  medication.drug  阿莫西林\n")
