"""The prebuilt LALR tables shipped as ``charter.lark.tables``: current, equivalent, optional."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import lark
import pytest

from charter.dsl import tables
from charter.dsl.parser import DSLSyntaxError, _parser, parse_action, parse_expr

STALE = (
    "framework/charter/dsl/charter.lark.tables was not built from the current charter.lark, "
    "parser options and Lark version; regenerate it with "
    f"`{tables.REGENERATE}` and commit the file"
)


def test_shipped_tables_match_the_grammar_and_lark() -> None:
    data = tables.shipped()
    assert data is not None, STALE
    assert tables.header(data) == tables.fingerprint(tables.grammar_text()), STALE
    assert tables.loads(data, tables.grammar_text()) is not None, STALE


def test_the_parser_comes_from_the_shipped_tables() -> None:
    assert _parser().source_path == "<deserialized>", STALE  # what Lark.load leaves


def _automaton(parser: lark.Lark) -> Any:
    """The LALR automaton with states numbered in the order a breadth-first walk meets them.

    Lark numbers states differently from one build to the next; this form does not."""
    table = parser.parser.parser._parse_table
    order: dict[Any, int] = {}
    queue: deque[Any] = deque()
    for start in sorted(table.start_states):
        state = table.start_states[start]
        order.setdefault(state, len(order))
        queue.append(state)
    rows = []
    while queue:
        state = queue.popleft()
        row: list[tuple[str, str, Any]] = []
        for token, (action, arg) in sorted(table.states[state].items()):
            if action.name == "Shift":
                if arg not in order:
                    order[arg] = len(order)
                    queue.append(arg)
                row.append((token, "shift", order[arg]))
            else:
                rule = (arg.origin.name, tuple(s.name for s in arg.expansion), arg.alias, arg.order)
                row.append((token, "reduce", rule))
        rows.append(row)
    ends = {name: order.get(state) for name, state in table.end_states.items()}
    return rows, ends


def _terminals(parser: lark.Lark) -> list[Any]:
    return sorted((t.name, repr(t.pattern), t.priority) for t in parser.terminals)


def test_shipped_tables_are_the_grammar_built_afresh() -> None:
    built = tables.build(tables.grammar_text())
    assert _automaton(_parser()) == _automaton(built)
    assert _terminals(_parser()) == _terminals(built)
    assert sorted(map(str, _parser().rules)) == sorted(map(str, built.rules))
    for name in ("propagate_positions", "maybe_placeholders", "start", "lexer", "parser"):
        assert getattr(_parser().options, name) == getattr(built.options, name), name


def _outcome(parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except DSLSyntaxError as exc:
        return (exc.message, exc.start, exc.end, exc.hint)


SAMPLES = [
    'output contains "a" and not (input matches /x/i or len(output) > 3)',
    "every money in output has unit 元 and count(phone, output) <= 1",
    "output contains any [",
    "output contans 'x'",
    'output contains "a" unless preceded by ["b"] within 2.5',
    "“x”",
    "",
    "some date in output",
    "context.a.b[0] == -1.5e3",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_loaded_and_built_parsers_agree(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = (_outcome(parse_expr, text), _outcome(parse_action, text))
    _parser.cache_clear()
    monkeypatch.setattr(tables, "shipped", lambda: None)
    try:
        assert _parser().source_path != "<deserialized>"
        assert (_outcome(parse_expr, text), _outcome(parse_action, text)) == shipped
    finally:
        _parser.cache_clear()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: b"no header line",
        lambda data: b"[1, 2]\n" + data.partition(b"\n")[2],
        lambda data: data.replace(b'"lark": "', b'"lark": "0.0-', 1),
        lambda data: data.replace(b'"grammar_sha256": "', b'"grammar_sha256": "0', 1),
        lambda data: data[: len(data) // 2],
        lambda data: data.partition(b"\n")[0] + b"\nnot a pickle",
    ],
    ids=["empty", "no header", "bad header", "other lark", "other grammar", "cut", "garbage"],
)
def test_unusable_tables_fall_back_to_the_grammar(
    damage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tables.shipped()
    assert data is not None
    assert tables.loads(damage(data), tables.grammar_text()) is None
    monkeypatch.setattr(tables, "shipped", lambda: damage(data))
    parser = tables.load_parser()
    assert parser.source_path != "<deserialized>"
    assert parser.parse('output contains "x"', start="start") is not None


def test_write_round_trips(tmp_path: Path) -> None:
    target = tables.write(tmp_path / "t.tables")
    data = target.read_bytes()
    assert tables.header(data) == tables.fingerprint(tables.grammar_text())
    loaded = tables.loads(data, tables.grammar_text())
    assert loaded is not None
    assert _automaton(loaded) == _automaton(_parser())
