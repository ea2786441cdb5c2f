"""load_yaml: diagnostics for YAML problems, plain data, and exact source locations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.diagnostics import Diagnostic, Location, Severity
from charter.pack import _compose
from charter.pack.yamlsrc import LocatedDoc, Pointer, load_yaml
from tests.support.hypo import examples

TAB_HINT = "indent with spaces; YAML does not allow tabs for indentation"
DUP_HINT = "remove one of them; the later value is the one used"


def summary(diags: list[Diagnostic]) -> list[tuple[str, str, int, int]]:
    return [(d.code, d.message, d.location.line, d.location.col) for d in diags]


def load_ok(text: str) -> LocatedDoc:
    doc, diags = load_yaml("f.yaml", text)
    assert diags == []
    assert doc is not None
    return doc


# (text, [(code, message, line, col)], hint of the first diagnostic)
PROBLEMS: dict[str, tuple[str, list[tuple[str, str, int, int]], str]] = {
    "tab indentation": (
        "a:\n\tb: 1\n",
        [("CH002", "tab character in indentation", 2, 1)],
        TAB_HINT,
    ),
    "tab after spaces": (
        "a:\n  \tb: 1\n",
        [("CH002", "tab character in indentation", 2, 3)],
        TAB_HINT,
    ),
    "every tab-indented line": (
        "a:\n\tb: 1\n\tc: 2\nd:\n \t- x\n",
        [
            ("CH002", "tab character in indentation", 2, 1),
            ("CH002", "tab character in indentation", 3, 1),
            ("CH002", "tab character in indentation", 5, 2),
        ],
        TAB_HINT,
    ),
    "tab on a blank line": (
        "a: 1\n\t\nb: 2\n",
        [("CH002", "tab character in indentation", 2, 1)],
        TAB_HINT,
    ),
    "tab between tokens": (
        "a:\tb\n",
        [("CH001", "found character '\\t' that cannot start any token", 1, 3)],
        "replace the tab with spaces; YAML does not allow tabs here",
    ),
    "unclosed quote": (
        'a: "foo\nb: 2\n',
        [("CH001", "found unexpected end of stream while scanning a quoted scalar", 1, 4)],
        "the quoted string that starts here is never closed: the file ends inside it",
    ),
    "bad indentation": (
        "a:\n  b: 1\n c: 2\n",
        [
            (
                "CH001",
                "expected <block end>, but found '<block mapping start>' "
                "while parsing a block mapping",
                3,
                2,
            )
        ],
        "check the indentation: this line does not line up with the block at line 1, column 1",
    ),
    "a list and then text": (
        "tests:\n  - name: a\n    output: [需人工确认]您好\n",
        [
            (
                "CH001",
                "expected <block end>, but found '<scalar>' while parsing a block mapping",
                3,
                20,
            )
        ],
        "a value that starts with '[' is read as a list, which ends at its ']'; "
        'quote the whole value: output: "[需人工确认]您好"',
    ),
    "a mapping and then text, a comment after": (
        "done: {amount}元  # 模板\nnext: 1\n",
        [
            (
                "CH001",
                "expected <block end>, but found '<scalar>' while parsing a block mapping",
                1,
                15,
            )
        ],
        "a value that starts with '{' is read as a mapping, which ends at its '}'; "
        'quote the whole value: done: "{amount}元"',
    ),
    "a list item and then text, quotes inside": (
        'items:\n  - [say "hi"] now\n',
        [
            (
                "CH001",
                "expected <block end>, but found '<scalar>' while parsing a block collection",
                2,
                16,
            )
        ],
        "a value that starts with '[' is read as a list, which ends at its ']'; "
        """quote the whole value: - '[say "hi"] now'""",
    ),
    "a quoted string and then text, quoted key": (
        '"a b": "x"y\n',
        [
            (
                "CH001",
                "expected <block end>, but found '<scalar>' while parsing a block mapping",
                1,
                11,
            )
        ],
        "a value that starts with a quote ends at the closing quote; "
        """quote the whole value: "a b": '"x"y'""",
    ),
    "colon inside a plain value": (
        "describe: note: this\n",
        [("CH001", "mapping values are not allowed here", 1, 15)],
        "put the value in quotes if it contains ': ', or check this line's indentation",
    ),
    "line without a key": (
        "a: 1\nfoo\nb: 2\n",
        [("CH001", "could not find expected ':' while scanning a simple key", 2, 1)],
        "write 'key: value', or indent this line to continue the value above it",
    ),
    "unclosed flow sequence": (
        "tags: [a, b\nnext: 1\n",
        [("CH001", "expected ',' or ']', but got ':' while parsing a flow sequence", 2, 5)],
        "separate items with ',' and close the collection at line 1, column 7",
    ),
    "flow sequence open at the end": (
        "tags: [\n",
        [
            (
                "CH001",
                "expected the node content, but found '<stream end>' while parsing a flow node",
                2,
                1,
            )
        ],
        "a '[' or '{' is never closed",
    ),
    "reserved character": (
        "a: @home\n",
        [("CH001", "found character '@' that cannot start any token", 1, 4)],
        "put the value in quotes",
    ),
    "unknown escape": (
        'a: "\\d+"\n',
        [
            (
                "CH001",
                "found unknown escape character 'd' while scanning a double-quoted scalar",
                1,
                6,
            )
        ],
        "inside double quotes write a backslash as \\\\, or use single quotes",
    ),
    "undefined alias": (
        "a: *base\n",
        [("CH001", "found undefined alias 'base'", 1, 4)],
        "define the anchor '&base' before using '*base'",
    ),
    "duplicate anchor": (
        "a: &x 1\nb: &x 2\n",
        [("CH001", "duplicate anchor 'x' (first defined at line 1, column 4)", 2, 4)],
        "give each anchor its own name",
    ),
    "control character": (
        "a: b\x07\n",
        [("CH001", "character U+0007 is not allowed in YAML", 1, 5)],
        'remove it, or write it as "\\u0007" inside a double-quoted string',
    ),
    "two documents": (
        "a: 1\n---\nb: 2\n",
        [("CH001", "expected a single YAML document", 2, 1)],
        "a pack file holds one document: remove the '---' or move the rest to another file",
    ),
    "duplicate key": (
        "id: a\ncheck: x\nid: b\n",
        [("CH003", "duplicate key 'id' (first defined at line 1)", 3, 1)],
        DUP_HINT,
    ),
    "duplicate key, nested, three times": (
        "rules:\n  - id: a\n    id: b\n    id: c\n",
        [
            ("CH003", "duplicate key 'id' (first defined at line 2)", 3, 5),
            ("CH003", "duplicate key 'id' (first defined at line 3)", 4, 5),
        ],
        DUP_HINT,
    ),
    "unsupported tag": (
        "a: !python/name:os.system x\n",
        [("CH001", "unsupported YAML tag '!python/name:os.system'", 1, 4)],
        "remove the tag; packs use plain YAML",
    ),
    "non-core standard tag": (
        "when: !!timestamp 2024-01-01\n",
        [("CH001", "unsupported YAML tag '!!timestamp'", 1, 7)],
        "remove the tag; packs use plain YAML",
    ),
    "bad explicit int": (
        "a: !!int ten\n",
        [("CH001", "'ten' is not a valid !!int", 1, 4)],
        "",
    ),
    "list as a key": (
        "? [a, b]\n: 1\n",
        [("CH001", "a mapping key must be a plain value, not a list", 1, 3)],
        "",
    ),
    "recursive alias": (
        "a: &x [1, *x]\n",
        [("CH001", "recursive alias: this node contains an alias to itself", 1, 4)],
        "",
    ),
    "merge of a scalar": (
        "a: {<<: 1}\n",
        [("CH001", "'<<' merges a mapping or a list of mappings only", 1, 9)],
        "",
    ),
}


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_yaml_problems(name: str) -> None:
    text, expected, hint = PROBLEMS[name]
    _, diags = load_yaml("f.yaml", text)
    assert summary(diags) == expected
    assert diags[0].hint == hint
    assert all(d.severity is Severity.ERROR and d.location.path == "f.yaml" for d in diags)


def test_tab_location_spans_the_tab() -> None:
    _, diags = load_yaml("f.yaml", "a:\n  \tb: 1\n")
    assert diags[0].location == Location("f.yaml", 2, 3, 2, 4)


def test_tab_inside_block_scalar_is_content() -> None:
    doc = load_ok("a: |\n  x\n  \ty\n")
    assert doc.data == {"a": "x\n\ty\n"}


def test_tab_inside_block_scalar_is_not_blamed_for_a_later_error() -> None:
    _, diags = load_yaml("f.yaml", "a: |\n  x\n  \ty\nb: [\n")
    assert [d.code for d in diags] == ["CH001"]


def test_duplicate_key_keeps_the_last_value() -> None:
    doc, _ = load_yaml("f.yaml", "id: a\nid: b\n")
    assert doc is not None and doc.data == {"id": "b"}


def test_problems_that_do_not_stop_parsing_come_together() -> None:
    doc, diags = load_yaml("f.yaml", "a: 1\na: 2\nb: !foo x\nc: !!int z\nd: 3\nd: 4\n")
    assert doc is not None and doc.data == {"a": 2, "b": "x", "c": "z", "d": 4}
    assert [(d.code, d.location.line) for d in diags] == [
        ("CH003", 2),
        ("CH001", 3),
        ("CH001", 4),
        ("CH003", 6),
    ]


def test_nesting_and_alias_limits() -> None:
    deep = "a: " + "[" * 2000 + "]" * 2000 + "\n"
    doc, diags = load_yaml("f.yaml", deep)
    assert doc is None and summary(diags) == [("CH001", "the document is nested too deeply", 1, 1)]
    lines = ["a0: &a0 [" + ", ".join(["x"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 7)]
    doc, diags = load_yaml("f.yaml", "\n".join(lines) + "\n")
    assert doc is None
    assert summary(diags) == [
        ("CH001", "the document expands to more than 1000000 values through aliases", 1, 1)
    ]
    doc, diags = load_yaml("f.yaml", "a: " + "[" * 120 + "]" * 120 + "\n")
    assert doc is not None
    assert summary(diags) == [("CH001", "the document is nested more than 100 levels deep", 1, 104)]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "\ufeff"])
def test_empty_file_is_none_without_diagnostics(text: str) -> None:
    doc, diags = load_yaml("pack.yaml", text)
    assert diags == []
    assert doc is not None and doc.data is None
    assert doc.loc(()) == Location("pack.yaml", 1, 1)
    assert doc.loc(("name",)) == Location("pack.yaml", 1, 1)


def test_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "pack.yaml"
    doc, diags = load_yaml(missing)
    assert doc is None
    assert summary(diags) == [("CH004", "file not found", 0, 0)]
    assert diags[0].location.path == str(missing)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    _, diags = load_yaml(tmp_path)
    assert summary(diags) == [("CH004", "expected a file, found a directory", 0, 0)]


def test_not_utf8_points_at_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_bytes("a: 中\nb: x".encode() + b"\xff\n")
    doc, diags = load_yaml(path)
    assert doc is None
    assert summary(diags) == [("CH004", "the file is not valid UTF-8 (byte 0xFF)", 2, 5)]
    assert diags[0].hint == "save the file with UTF-8 encoding"


def test_reads_the_file_and_keeps_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pack.yaml").write_text("\ufeffname: 中文\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    doc, diags = load_yaml("pack.yaml")
    assert diags == [] and doc is not None
    assert doc.path == "pack.yaml" and doc.data == {"name": "中文"}
    assert doc.loc(("name",)) == Location("pack.yaml", 1, 7, 1, 9)  # a BOM takes no column


CORE_VALUES: list[tuple[str, object]] = [
    ("yes", "yes"),
    ("on", "on"),
    ("No", "No"),
    ("true", True),
    ("False", False),
    ("~", None),
    ("null", None),
    ("", None),
    ("12", 12),
    ("+12", 12),
    ("012", 12),
    ("0o17", 15),
    ("0x1F", 31),
    ("1_000", "1_000"),
    ("12:30", "12:30"),
    ("1.5", 1.5),
    ("1e3", 1000.0),
    ("-.inf", float("-inf")),
    ("2024-01-01", "2024-01-01"),
    ("0.1.0", "0.1.0"),
    ("'12'", "12"),
    ("!!str 12", "12"),
    ("!!float 1", 1.0),
    ("<<", "<<"),
]


@pytest.mark.parametrize(("source", "value"), CORE_VALUES)
def test_yaml_12_core_scalars(source: str, value: object) -> None:
    doc = load_ok(f"a: {source}\n")
    assert doc.data == {"a": value}
    assert type(doc.data["a"]) is type(value)


def test_merge_keys_and_aliases() -> None:
    text = (
        "base: &base {on_fail: retry, tags: [x]}\n"
        "other: &other {on_fail: block, when: w}\n"
        "rule:\n"
        "  <<: [*base, *other]\n"
        "  id: r\n"
        "  on_fail: flag\n"
        "copy: *base\n"
    )
    doc = load_ok(text)
    assert doc.data["rule"] == {"on_fail": "flag", "tags": ["x"], "when": "w", "id": "r"}
    assert doc.data["copy"] is doc.data["base"]  # aliases share one object
    assert doc.loc(("rule", "tags", 0)) == Location("f.yaml", 1, 37, 1, 38)
    assert doc.key_loc(("rule", "when")) == Location("f.yaml", 2, 32, 2, 36)
    assert doc.loc(("rule", "on_fail")) == Location("f.yaml", 6, 12, 6, 16)


NESTED = """\
name: finance
rules:
  - id: price-format   # comment
    check: >-
      text matches
      /x/
    tags: [a, "b"]
  - {id: two, check: x}
context:
  deep:
    - 1
    - k: v

"""


@pytest.mark.parametrize(
    ("ptr", "loc", "key_loc", "end_loc"),
    [
        ((), (1, 1, 12, 11), (1, 1, 12, 11), (12, 11)),
        (("name",), (1, 7, 1, 14), (1, 1, 1, 5), (1, 14)),
        (("rules",), (3, 3, 8, 24), (2, 1, 2, 6), (8, 24)),
        (("rules", 0), (3, 5, 7, 19), (3, 5, 7, 19), (7, 19)),
        (("rules", 0, "id"), (3, 9, 3, 21), (3, 5, 3, 7), (3, 21)),
        (("rules", 0, "check"), (4, 12, 6, 10), (4, 5, 4, 10), (6, 10)),
        (("rules", 0, "tags", 1), (7, 15, 7, 18), (7, 15, 7, 18), (7, 18)),
        (("rules", 1), (8, 5, 8, 24), (8, 5, 8, 24), (8, 24)),
        (("rules", 1, "check"), (8, 22, 8, 23), (8, 15, 8, 20), (8, 23)),
        (("context", "deep", 1, "k"), (12, 10, 12, 11), (12, 7, 12, 8), (12, 11)),
        # missing parts fall back to the nearest ancestor that exists
        (("rules", 0, "when"), (3, 5, 7, 19), (3, 5, 7, 19), (7, 19)),
        (("rules", 5, "id"), (3, 3, 8, 24), (3, 3, 8, 24), (8, 24)),
        (("name", "x"), (1, 7, 1, 14), (1, 7, 1, 14), (1, 14)),
    ],
)
def test_node_locations(
    ptr: Pointer,
    loc: tuple[int, int, int, int],
    key_loc: tuple[int, int, int, int],
    end_loc: tuple[int, int],
) -> None:
    doc = load_ok(NESTED)
    assert doc.loc(ptr) == Location("f.yaml", *loc)
    assert doc.key_loc(ptr) == Location("f.yaml", *key_loc)
    assert doc.end_loc(ptr) == Location("f.yaml", *end_loc)


def test_hand_made_doc_has_file_level_locations() -> None:
    doc = LocatedDoc("x.yaml", "a: 1\n", {"a": 1})
    assert doc.loc(("a",)) == doc.key_loc(("a",)) == doc.offset_loc(("a",), 0)
    assert doc.loc(("a",)) == Location("x.yaml", 1, 1)


# (yaml, pointer, substring of the value, (line, col, end_line, end_col) of that substring)
OFFSETS: dict[str, tuple[str, Pointer, str, tuple[int, int, int, int]]] = {
    "plain": ("check: text contains 保证\n", ("check",), "保证", (1, 22, 1, 24)),
    "plain, several lines": (
        "check: every money in output\n  has twin   money_upper\n\n  and 中文\n",
        ("check",),
        "money_upper",
        (2, 14, 2, 25),
    ),
    "plain, after a blank line": (
        "check: every money in output\n  has twin   money_upper\n\n  and 中文\n",
        ("check",),
        "中文",
        (4, 7, 4, 9),
    ),
    "single quoted": ("a: 'it''s 中文 ok'\n", ("a",), "中文 ok", (1, 11, 1, 16)),
    "single quoted, after ''": ("a: 'it''s'\n", ("a",), "s", (1, 9, 1, 10)),
    'double quoted with \\" escapes': (
        'check: "output contains \\"保证收益\\" or x"\n',
        ("check",),
        '"保证收益" or',
        (1, 25, 1, 36),
    ),
    "double quoted, after \\u escape": ('a: "\\u4e2d文 text"\n', ("a",), "文 text", (1, 11, 1, 17)),
    "double quoted, the \\u escape itself": ('a: "\\u4e2d文"\n', ("a",), "中", (1, 5, 1, 11)),
    "double quoted over lines": (
        'a: "first\n   second \\\n   third"\n',
        ("a",),
        "third",
        (3, 4, 3, 9),
    ),
    "literal block": (
        "rules:\n  - check: |\n      output matches /\\d+元/\n      and 中文\n",
        ("rules", 0, "check"),
        "/\\d+元/",
        (3, 22, 3, 28),
    ),
    "literal block, second line": (
        "rules:\n  - check: |\n      output matches /\\d+元/\n      and 中文\n",
        ("rules", 0, "check"),
        "中文",
        (4, 11, 4, 13),
    ),
    "literal strip with comment": (
        "a: |-  # note\n    x = 1\n      y = 2\n",
        ("a",),
        "y = 2",
        (3, 7, 3, 12),
    ),
    "literal with indentation indicator": (
        "k:\n  - |2\n     two extra\n    base\n",
        ("k", 0),
        "two",
        (3, 6, 3, 9),
    ),
    "folded block": (
        "check: >\n  every money in output\n  has twin money_upper\n",
        ("check",),
        "money_upper",
        (3, 12, 3, 23),
    ),
    "folded, across the fold": (
        "check: >-\n  every money\n  has twin\n",
        ("check",),
        "money has",
        (2, 9, 3, 6),
    ),
    "folded, paragraphs and more-indented lines": (
        "a: >\n  one\n\n  two 中\n    more\n  back\n",
        ("a",),
        "more",
        (5, 5, 5, 9),
    ),
    "flow sequence": ('tags: [one, \'中文\', "x\\"y"]\n', ("tags", 2), '"y', (1, 21, 1, 24)),
    "flow mapping": ("ctx: {k: 'v 中', m: n}\n", ("ctx", "k"), "中", (1, 13, 1, 14)),
    "tagged and anchored": ("a: &x !!str 中文 value\nb: *x\n", ("b",), "value", (1, 16, 1, 21)),
    "CRLF line ends": ("a: |\r\n  x y\r\n  z\r\n", ("a",), "z", (3, 3, 3, 4)),
}


@pytest.mark.parametrize("name", list(OFFSETS))
def test_offset_loc(name: str) -> None:
    text, ptr, part, (line, col, end_line, end_col) = OFFSETS[name]
    doc = load_ok(text)
    value = doc.data
    for step in ptr:
        value = value[step]
    start = value.index(part)
    assert doc.offset_loc(ptr, start, start + len(part)) == Location(
        "f.yaml", line, col, end_line, end_col
    )
    assert doc.offset_loc(ptr, start) == Location("f.yaml", line, col)


@pytest.mark.parametrize("name", list(OFFSETS))
def test_offset_loc_lands_on_the_same_character(name: str) -> None:
    text, ptr, _, _ = OFFSETS[name]
    doc = load_ok(text)
    value = doc.data
    for step in ptr:
        value = value[step]
    lines = text.replace("\r\n", "\n").split("\n")
    for i, ch in enumerate(value):
        at = doc.offset_loc(ptr, i)
        found = lines[at.line - 1][at.col - 1 : at.col]
        if not ch.isspace():
            assert found in (ch, "\\"), (i, ch, at)  # escapes point at their backslash


def test_offset_loc_edges() -> None:
    doc = load_ok('a: "ab"\nb: ""\nc: 5\nd: [x]\n')
    assert doc.offset_loc(("a",), 2) == Location("f.yaml", 1, 7)  # just past the value
    assert doc.offset_loc(("a",), 99, 120) == Location("f.yaml", 1, 7, 1, 7)
    assert doc.offset_loc(("a",), -3) == Location("f.yaml", 1, 5)
    assert doc.offset_loc(("a",), 1, 1) == Location("f.yaml", 1, 6, 1, 6)
    assert doc.offset_loc(("b",), 0, 1) == Location("f.yaml", 2, 5, 2, 5)
    assert doc.offset_loc(("c",), 0, 1) == Location("f.yaml", 3, 4, 3, 5)
    assert doc.offset_loc(("d",), 0) == doc.loc(("d",))  # not a scalar: the node itself
    assert doc.offset_loc(("zz",), 0) == doc.loc(())


# ---- libyaml: the fast path must give what the pure-Python loader gives ----------------------

libyaml = pytest.mark.skipif(_compose._CLoader is None, reason="PyYAML without libyaml")

TRICKY = [
    "a: 中文字\nb: 😀😀 x\nc: [1, 2]\n",  # CJK and astral characters: marks count characters
    'a: 1\r\nb: "中\\u4e2d"\r\n',
    "x: a\x85b: c\n",
    "k:\u2028  v\n",
    "a: |\n  中文\n  二\n\nb: >-\n  x\n   y\n",
    "&a !!map\nx: &b !!str 1\ny: *b\n",
    "- a\n- [b, {c: d}]\n",
    "tags: [cha? ter, no-diagnosis?]\n",  # '?' ends a plain scalar in flow context for PyYAML
    "p: {pattern: \"^-?[0-9]+$\", q: '?'}\n",  # a '?' inside quotes reads the same
    'p: {pattern: "^-?[0-9]+$", q: a?b}\n',  # and one outside them still goes to PyYAML
    "{a: [b: , c]}\n",  # an empty value in a flow collection: libyaml marks it one later
    "a: !\n",  # the non-specific tag: PyYAML resolves an empty scalar to null, libyaml to ''
    "k: |#\n  t\n",  # PyYAML wants a space before a block header's comment
    "a:\tb\n",  # libyaml accepts a tab where PyYAML does not
    "\ufeff\ufeffa: 1\n",
    "a:\n- b\n-\n- {}\n",
    "- " * 600 + "x\n",  # deeper than PyYAML's recursion goes
]


def _repo_yaml(fixtures: bool = True) -> list[str]:
    root = Path(__file__).resolve().parents[3]
    paths = sorted([*root.glob("domains/**/*.yaml"), *root.glob("rulesets/**/*.yaml")])
    paths += sorted(root.glob("tests/fixtures/**/*.yaml")) if fixtures else []
    return [p.read_text(encoding="utf-8") for p in paths]


def _graph(node: Any, seen: dict[int, int]) -> Any:
    """A node graph as plain data, with marks, styles normalised, aliases as back-references."""
    if node is None:
        return None
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    head = (type(node).__name__, node.tag, node.start_mark.index, node.end_mark.index)
    if isinstance(node.value, str):
        return (*head, node.style or None, node.value)
    if isinstance(node.value[0] if node.value else None, tuple):
        return (*head, [(_graph(k, seen), _graph(v, seen)) for k, v in node.value])
    return (*head, bool(node.flow_style), [_graph(n, seen) for n in node.value])


def _composed(text: str, fast: bool) -> Any:
    try:
        return _graph(_compose.compose(text, fast=fast), {})
    except RecursionError:
        return "RecursionError"
    except yaml.YAMLError as exc:
        return str(exc)


def _observed(text: str) -> Any:
    """Everything load_yaml's caller can see: diagnostics, data, every location."""
    doc, diags = load_yaml("f.yaml", text)
    seen: list[Any] = [[(d.code, d.message, d.location, d.hint) for d in diags]]
    if doc is not None:
        seen.append(repr(doc.data))
        _locations(doc, doc.data, (), seen)
    return seen


def _locations(doc: LocatedDoc, value: Any, ptr: Pointer, out: list[Any]) -> None:
    out += [doc.loc(ptr), doc.key_loc(ptr), doc.end_loc(ptr)]
    if isinstance(value, str):
        out += [doc.offset_loc(ptr, i, i + 1) for i in range(len(value) + 1)]
    elif isinstance(value, dict):
        for key, sub in value.items():
            _locations(doc, sub, (*ptr, key), out)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _locations(doc, sub, (*ptr, i), out)


def _corpus() -> list[str]:
    texts = [t for t, _, _ in PROBLEMS.values()] + [t for t, _, _, _ in OFFSETS.values()]
    texts += [f"a: {source}\n" for source, _ in CORE_VALUES]
    return [*texts, NESTED, *TRICKY, *_repo_yaml()]


@libyaml
@pytest.mark.parametrize("text", _corpus(), ids=range(len(_corpus())))
def test_libyaml_composes_what_pyyaml_composes(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _composed(text, fast=True) == _composed(text, fast=False)
    fast = _observed(text)
    monkeypatch.setattr(_compose, "_CLoader", None)
    assert fast == _observed(text)


@libyaml
@pytest.mark.parametrize("text", _repo_yaml(fixtures=False), ids=range(len(_repo_yaml(False))))
def test_first_party_files_take_the_fast_path(text: str) -> None:
    loader = _compose._CLoader
    assert loader is not None
    root = yaml.compose(text, Loader=loader)
    assert root is not None and _compose._agrees(text, root)


_YAML_BITS = [*" \n:-?[]{},#&*!|>'\"%@.\\/", "中", "😀", "\r\n", "\x85", "\u2028", "  ", "\n  "]
_YAML_BITS += [": ", "- ", "? ", "...", "---", "&a ", "*a", "!!str ", "! ", "|-", ">+", "|2"]
_YAML_BITS += ["\\x41", "\\u4e2d", "<<: *a", "a", "1", "~", "{a: b}", "[x, y]", "'q'", '"d"']


@st.composite
def _edited_yaml(draw: st.DrawFn) -> str:
    text = list(draw(st.sampled_from([t for t in _corpus() if len(t) < 1000])))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(_YAML_BITS))
        if draw(st.booleans()) or i == len(text):
            text.insert(i, piece)
        else:
            text[i] = piece
    return "".join(text)


@libyaml
@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(_edited_yaml())
def test_libyaml_agrees_on_edited_documents(text: str) -> None:
    assert _composed(text, fast=True) == _composed(text, fast=False)
