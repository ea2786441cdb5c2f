"""The plain rows of ``charter chat``: labels in a column, a long one still apart; what a
user typed or a reply holds never reaches the terminal as a control sequence."""

from __future__ import annotations

import io
import json

import pytest

from charter.agent.reply import Reply
from charter.cli.chat_render import PlainOut, RichOut, Row, plain_rows
from charter.text.display import shown, shown_json


def test_short_labels_share_the_column() -> None:
    assert plain_rows([Row("goals", ("a",)), Row("memories", ("b", "c"))]) == (
        "  goals       a\n  memories    b\n              c\n"
    )


def test_a_label_longer_than_the_column_keeps_two_spaces() -> None:
    rows = [Row("order_id", ("DD1",)), Row("medication.drug", ("阿莫西林",))]
    assert plain_rows(rows) == ("  order_id         DD1\n  medication.drug  阿莫西林\n")


def test_a_reply_and_what_was_typed_never_reach_the_terminal_raw() -> None:
    typed = io.StringIO("查\x1b[2J订单\r\n")
    out = io.StringIO()
    plain = PlainOut(stdin=typed, stdout=out)
    assert plain.read() == "查\x1b[2J订单"  # the agent gets what was typed
    plain.reply(Reply("订单\x9b31m已发货\u202e", "pass"), [Row("slot", ("DD1\x07",))])
    assert out.getvalue() == (
        "> 查\\x1b[2J订单\n[pass] 订单\\x9b31m已发货\\u202e\n  slot        DD1\\x07\n"
    )


def test_the_rich_renderer_escapes_too() -> None:
    from rich.console import Console

    buffer = io.StringIO()
    rich = RichOut(console=Console(file=buffer, color_system=None, width=80))
    rich.reply(Reply("好\x1b]0;x\x07的", "pass"), [])
    assert buffer.getvalue() == " pass  好\\x1b]0;x\\x07的\n"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("你好", "你好"),
        ("行一\n\t行二", "行一\n\t行二"),
        ("\x1b[31m", "\\x1b[31m"),
        ("a\rb", "a\\rb"),
        ("\x00\x7f\x85\x9b", "\\x00\\x7f\\x85\\x9b"),
        ("\u202eabc\u202c\u2066\u2069", "\\u202eabc\\u202c\\u2066\\u2069"),
        ("\u2028\u2029", "\\u2028\\u2029"),
        ("👨\u200d👩", "👨\u200d👩"),  # a joiner is part of the emoji, not an attack
    ],
)
def test_shown(text: str, want: str) -> None:
    assert shown(text) == want


def test_shown_json_stays_json() -> None:
    value = {"reply": "a\x1b\x85\u202e\u2028b"}
    dumped = shown_json(json.dumps(value, ensure_ascii=False))
    assert dumped == '{"reply": "a\\u001b\\u0085\\u202e\\u2028b"}'
    assert json.loads(dumped) == value
