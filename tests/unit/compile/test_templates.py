"""Response templates: parsed once, rendered many times, never guessing a missing value."""

from __future__ import annotations

from typing import Any

import pytest

from charter.compile.templates import Field, TemplateError, parse_template, plain
from charter.contracts.rules import Formatter
from charter.plugins.host import default_host

FORMATTERS: dict[str, Formatter] = dict(default_host().registry.formatters)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("你好", ("你好",)),
        ("{payee}", (Field(("payee",), (), 0, 7),)),
        ("向{payee}转账", ("向", Field(("payee",), (), 1, 8), "转账")),
        ("{args.account_tail}", (Field(("args", "account_tail"), (), 0, 19),)),
        ("{results.0.balance}", (Field(("results", "0", "balance"), (), 0, 19),)),
        ("{ balance | amount }", (Field(("balance",), ("amount",), 0, 20),)),
        ("{x|date|join}", (Field(("x",), ("date", "join"), 0, 13),)),
        ("{{字面}}", ("{字面}",)),
        ("a{{b}}{c}", ("a{b}", Field(("c",), (), 6, 9))),
    ],
)
def test_parse(text: str, parts: tuple[Any, ...]) -> None:
    assert parse_template(text).parts == parts


@pytest.mark.parametrize(
    ("text", "message", "start", "end"),
    [
        ("向{payee转账", "a '{' without its '}'", 1, 2),
        ("向{pa{yee}", "a '{' without its '}'", 1, 2),
        ("多了}", "a '}' without its '{'", 2, 3),
        ("{}", "'{}' does not name a field", 0, 2),
        ("{1x}", "'{1x}' does not name a field", 0, 4),
        ("{0.a}", "'{0.a}' does not name a field", 0, 5),
        ("{a..b}", "'{a..b}' does not name a field", 0, 6),
        ("{a|}", "'{a|}' has an empty or malformed formatter", 0, 4),
        ("{a|金额}", "'{a|金额}' has an empty or malformed formatter", 0, 6),
    ],
)
def test_syntax_errors_say_where(text: str, message: str, start: int, end: int) -> None:
    with pytest.raises(TemplateError) as got:
        parse_template(text)
    assert (got.value.message, got.value.start, got.value.end) == (message, start, end)


@pytest.mark.parametrize(
    ("text", "scope", "want"),
    [
        ("向{payee}转账", {"payee": "张三"}, "向张三转账"),
        (
            "余额{balance|amount}",
            {"balance": "12345.60"},
            "余额¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）",
        ),
        ("尾号{args.account_tail}", {"args": {"account_tail": "1234"}}, "尾号1234"),
        ("第{results.1.n}项", {"results": [{"n": 1}, {"n": 2}]}, "第2项"),
        ("{items}", {"items": ["耳机", "T恤"]}, "耳机、T恤"),
        ("{n}件", {"n": 3}, "3件"),
        ("{rate}", {"rate": 0.1}, "0.1"),
        ("{big}", {"big": 1e6}, "1000000"),
        ("{ok}", {"ok": True}, "是"),
        ("{d|date}", {"d": "2024年5月1日"}, "2024-05-01"),
        ("{t|when}", {"t": "2024-05-02T08:00/2024-05-02T12:00"}, "2024-05-02 08:00-12:00"),
    ],
)
def test_render(text: str, scope: dict[str, Any], want: str) -> None:
    assert parse_template(text).render(scope, FORMATTERS) == want


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("向{payee}转账", {}),  # missing
        ("向{payee}转账", {"payee": None}),
        ("向{payee}转账", {"payee": "  "}),  # blank
        ("{items}", {"items": []}),  # empty list
        ("{args.x}", {"args": {}}),
        ("{results.5.n}", {"results": [{"n": 1}]}),  # no such index
        ("{m}", {"m": {"a": 1}}),  # a mapping needs a formatter
        ("{a|amount}", {"a": "abc"}),  # the formatter cannot write it
        ("{a.b}", {"a": "text"}),  # a text has no fields
    ],
)
def test_a_template_with_a_field_it_cannot_write_is_not_eligible(
    text: str, scope: dict[str, Any]
) -> None:
    assert parse_template(text).render(scope, FORMATTERS) is None


def test_plain_writes_numbers_without_float_noise() -> None:
    assert [plain(0.1 + 0.2), plain(2.50), plain(10)] == ["0.30000000000000004", "2.5", "10"]
