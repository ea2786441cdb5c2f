"""format_yaml: the pack layout, what it keeps as written, and that the loader reads the same.

The table pins input -> output; every output formats to itself (idempotency), and the loader
reads every output as it read the input. A property test does the same for documents PyYAML
writes in random layouts, and every shipped pack file, re-indented four spaces deep with list
items flush with their key, formats back to itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charter.pack.fmt import FormatError, find_files, format_file, format_yaml, pack_files
from charter.pack.schema import validate
from charter.pack.yamlsrc import load_yaml
from tests.support.hypo import examples
from tests.unit.pack.relayout import relayout

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted([*ROOT.glob("domains/**/*.yaml"), *ROOT.glob("rulesets/**/*.yaml")])

# (name, input, output)
CASES: list[tuple[str, str, str]] = [
    (
        "mappings two spaces a level",
        "limits:\n    max_depth: 2\n    timeout: 30m\n",
        "limits:\n  max_depth: 2\n  timeout: 30m\n",
    ),
    (
        "list items two spaces under their key",
        "extends:\n- rulesets/a\n-   rulesets/b\n",
        "extends:\n  - rulesets/a\n  - rulesets/b\n",
    ),
    (
        "a list of mappings",
        "rules:\n- id: a\n  check: x\n- id: b\n  check: y\n",
        "rules:\n  - id: a\n    check: x\n  - id: b\n    check: y\n",
    ),
    ("keys keep their order", "z: 1\na: 2\nm: 3\n", "z: 1\na: 2\nm: 3\n"),
    (
        "comments stay where they are",
        "# 文件说明\nrules:   # 规则\n  # 第一条\n  - id: a   # 行尾\n# 结尾\n",
        "# 文件说明\nrules:   # 规则\n  # 第一条\n  - id: a   # 行尾\n# 结尾\n",
    ),
    (
        "a comment moves with the line it precedes",
        "a:\n    b: 1\n    # about c\n    c: 2\n",
        "a:\n  b: 1\n  # about c\n  c: 2\n",
    ),
    (
        "a comment after a block scalar moves with the line it precedes",
        "a:\n    b: |\n      x\n    # about c\n    c: 1\n",
        "a:\n  b: |\n    x\n  # about c\n  c: 1\n",
    ),
    (
        "a comment after the last value keeps its column",
        "a:\n  b: 1\n  # the end\n",
        "a:\n  b: 1\n  # the end\n",
    ),
    (
        "an end-of-line comment keeps its column",
        "k:\n    a: 1 # c\n    bb: 2    # d\n",
        "k:\n  a: 1   # c\n  bb: 2      # d\n",
    ),
    (
        "the editor's schema comment",
        "# yaml-language-server: $schema=../../.schemas/pack.json\nname: express\n",
        "# yaml-language-server: $schema=../../.schemas/pack.json\nname: express\n",
    ),
    ("blank lines stay", "a: 1\n\nb: 2\n", "a: 1\n\nb: 2\n"),
    (
        "Chinese text as written",
        "message: 请于2024-05-01前支付¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。\n",
        "message: 请于2024-05-01前支付¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。\n",
    ),
    ("\\u escapes become the characters", 'a: "\\u4e2d\\u6587"\n', 'a: "中文"\n'),
    (
        "quotes stay, in their kind; plain stays plain",
        'a: "yes"\nb: "123"\nc: "[需人工确认]您好"\nd: \'single\'\ne: "不必要的引号"\nf: yes\n',
        'a: "yes"\nb: "123"\nc: "[需人工确认]您好"\nd: \'single\'\ne: "不必要的引号"\nf: yes\n',
    ),
    ("an empty value is null", "a: ~\nb:\nc: Null\n", "a: null\nb: null\nc: null\n"),
    (
        "flow collections stay flow, one space after each comma",
        "tags: [a,b,  c]\nctx: {user: {verified: true}}\n"
        "not: {anyOf: [{required: [a]}, {required: [b]}]}\n",
        "tags: [a, b, c]\nctx: {user: {verified: true}}\n"
        "not: {anyOf: [{required: [a]}, {required: [b]}]}\n",
    ),
    (
        "a comma in a flow list splits it, which the space shows",
        "contains: [¥5,000.00]\n",
        "contains: [¥5, 000.00]\n",
    ),
    (
        "a literal block re-indented",
        "check: |-\n    every money in output\n    has twin money_upper\n",
        "check: |-\n  every money in output\n  has twin money_upper\n",
    ),
    (
        "a folded block keeps its line breaks",
        'when: >-\n  output mentions percent near ["收益",\n  "回报"]\n',
        'when: >-\n  output mentions percent near ["收益",\n  "回报"]\n',
    ),
    (
        "a keep block at the end gets a document end",
        "a: |+\n  text\n\n",
        "a: |+\n  text\n\n...\n",
    ),
    (
        "an indentation indicator stays",
        "a: |2\n   leading space\n",
        "a: |2\n   leading space\n",
    ),
    (
        "a plain string over two lines becomes one line",
        "describe: a long\n  plain scalar\n",
        "describe: a long plain scalar\n",
    ),
    ("document markers go, their comment stays", "--- # 说明\na: 1\n...\n", "# 说明\na: 1\n"),
    ("CRLF, BOM, no final newline", "\ufeffa: 1\r\nb: 2", "a: 1\nb: 2\n"),
    ("trailing blanks and blank lines go", "a: 1   \n\n\n", "a: 1\n"),
    (
        "anchors, aliases and merge keys stay",
        "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n",
        "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n",
    ),
    ("an empty file stays empty", "", ""),
    ("a file of comments", "# 还没有规则   \n\n", "# 还没有规则\n"),
    # ruamel.yaml's layout for a list directly inside a list
    ("a list in a list", "k:\n- - a\n  - b\n", "k:\n  -   - a\n      - b\n"),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=IDS)
def test_layout(name: str, text: str, expected: str) -> None:
    assert format_yaml(text) == expected


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=IDS)
def test_formatting_twice_is_formatting_once(name: str, text: str, expected: str) -> None:
    assert format_yaml(expected) == expected


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=IDS)
def test_the_loader_reads_the_same(name: str, text: str, expected: str) -> None:
    before, _ = load_yaml("f.yaml", text)
    after, _ = load_yaml("f.yaml", expected)
    assert (before.data if before else None) == (after.data if after else None)


def test_long_lines_are_not_folded() -> None:
    text = "message: " + "很长的一句话，" * 60 + "\nwhen: " + "output contains x or " * 30 + "y\n"
    assert format_yaml(text) == text


def test_a_directive_that_changes_what_ruamel_reads_is_refused() -> None:
    # ruamel.yaml reads yes as a boolean under %YAML 1.1 and would write true; the loader
    # reads the string 'yes' either way
    with pytest.raises(FormatError) as raised:
        format_yaml("%YAML 1.1\n---\na: yes\n")
    err = raised.value
    assert (err.message, err.line, err.col) == (
        "formatting would change what the loader reads at a",
        3,
        4,
    )
    assert err.hint == (
        "charter fmt leaves the file as it is; a %YAML directive is the usual cause "
        "(remove it), otherwise please report the file"
    )


# ---- files --------------------------------------------------------------------------------------


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


# (file content, (code, line, col) of each diagnostic): the loader's own diagnostics
BROKEN: list[tuple[str, str | bytes, list[tuple[str, int, int]]]] = [
    ("unclosed flow list", "a: [1, 2\nb: 3\n", [("CH001", 2, 2)]),
    ("tab indentation", "a:\n\tb: 1\n", [("CH002", 2, 1)]),
    ("duplicate key", "a: 1\na: 2\n", [("CH003", 2, 1)]),
    ("not UTF-8", b"a: \xff\n", [("CH004", 1, 4)]),
]


@pytest.mark.parametrize(("name", "content", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_file_that_does_not_load_is_left_alone_with_the_loaders_diagnostics(
    name: str, content: str | bytes, expected: list[tuple[str, int, int]], tmp_path: Path
) -> None:
    path = _write(tmp_path / "rules.yaml", content)
    outcome = format_file(path, str(path))
    got = [(d.code, d.location.line, d.location.col) for d in outcome.diagnostics]
    assert got == expected
    _, loaders = load_yaml(str(path))
    assert list(outcome.diagnostics) == [d for d in loaders if d.is_error]
    assert not outcome.changed
    assert outcome.after == outcome.before


def test_a_file_formatting_would_change_is_left_alone(tmp_path: Path) -> None:
    path = _write(tmp_path / "rules.yaml", "%YAML 1.1\n---\na: yes\n")
    outcome = format_file(path, "p/rules.yaml")
    assert [(d.code, str(d.location), d.message) for d in outcome.diagnostics] == [
        ("CH001", "p/rules.yaml:3:4", "formatting would change what the loader reads at a")
    ]
    assert (outcome.changed, outcome.after) == (False, "%YAML 1.1\n---\na: yes\n")


def test_format_file_reads_but_does_not_write(tmp_path: Path) -> None:
    path = _write(tmp_path / "rules.yaml", "rules:\n- id: a\n")
    outcome = format_file(path, "shown/rules.yaml")
    assert (outcome.shown, outcome.before, outcome.after, outcome.changed) == (
        "shown/rules.yaml",
        "rules:\n- id: a\n",
        "rules:\n  - id: a\n",
        True,
    )
    assert path.read_text(encoding="utf-8") == "rules:\n- id: a\n"


def test_pack_files_are_the_files_the_loader_reads(tmp_path: Path) -> None:
    pack = tmp_path / "p"
    for name in [
        "pack.yaml",
        "rules.yaml",
        "learning.yaml",
        "skills/b.yaml",
        "skills/a.yaml",
        "fixes/one.yaml",
        "patches/ignored.yaml",
        "tests/conversations/c.yaml",
        "tests/rules_test.yaml",
        "rules.yml",
        "notes.yaml",
    ]:
        _write(pack / name, "patches_dir: fixes\n" if name == "learning.yaml" else "a: 1\n")
    assert [p.relative_to(pack).as_posix() for p in pack_files(pack)] == [
        "pack.yaml",
        "rules.yaml",
        "learning.yaml",
        "skills/a.yaml",
        "skills/b.yaml",
        "fixes/one.yaml",
        "tests/conversations/c.yaml",
    ]


def test_find_files(tmp_path: Path) -> None:
    for name in ["packs/a/pack.yaml", "packs/b/pack.yaml", "packs/.hidden/c/pack.yaml"]:
        _write(tmp_path / name, "name: x\n")
    _write(tmp_path / "empty" / "README.md", "")
    _write(tmp_path / "loose.yml", "a: 1\n")
    paths = [
        tmp_path / "packs",
        tmp_path / "packs" / "a" / "pack.yaml",  # already found through packs/
        tmp_path / "loose.yml",
        tmp_path / "empty",
        tmp_path / "empty" / "README.md",
        tmp_path / "missing",
    ]
    files, nothing = find_files(paths)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "packs/a/pack.yaml",
        "packs/b/pack.yaml",
        "loose.yml",
    ]
    assert [(p.relative_to(tmp_path).as_posix(), why) for p, why in nothing] == [
        ("empty", "no pack.yaml at or below"),
        ("empty/README.md", "not a YAML file"),
        ("missing", "no such file or directory"),
    ]


# ---- the shipped packs ----------------------------------------------------------------------


def test_the_shipped_packs_are_there() -> None:
    assert len(SHIPPED) >= 60


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_shipped_file_relaid_out_formats_back_to_itself(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    relaid = relayout(text)
    assert relaid != text
    assert format_yaml(relaid) == text
    before, _ = load_yaml("f.yaml", text)
    after, _ = load_yaml("f.yaml", relaid)
    assert before is not None and after is not None and before.data == after.data


def _fenced(section: str) -> list[tuple[str, str]]:
    """(info, text) of each fenced block of the docs/authoring.md section titled so."""
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w*)\n(.*?)```", body, flags=re.S)


def test_the_docs_example_formats_as_shown() -> None:
    blocks = _fenced("10. One layout for every file: charter fmt")
    (_, before), (_, after) = [b for b in blocks if b[0] == "yaml"]
    assert before != after
    assert format_yaml(before) == after
    doc, diags = load_yaml("domains/express/pack.yaml", after)
    assert doc is not None and diags == [] and validate(doc, "pack") == []


# ---- any document -------------------------------------------------------------------------------

_WORDS = ["yes", "no", "on", "null", "~", "123", "0o17", "1_000", "2024-05-01", "1:20", ".5"]
_TRICKY = ["[需人工确认]您好", "{x}", "a: b", "a #b", "# c", "*a", "&b", "!t", "%p", "@x", "`q"]
_TEXT = st.text(alphabet="ab 中文，。:#-'\"\\[]{}!&*\n\t", min_size=0, max_size=12)
_SCALARS = st.one_of(
    st.sampled_from(_WORDS + _TRICKY),
    _TEXT,
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_KEYS = st.text(alphabet="abz_中文-", min_size=1, max_size=6)
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.dictionaries(_KEYS, _DOCS, min_size=1, max_size=4),
    indent=st.integers(2, 6),
    flow=st.sampled_from([False, None, True]),
    width=st.integers(20, 120),
    unicode=st.booleans(),
    comment=st.booleans(),
    style=st.sampled_from([None, '"', "'", "|", ">"]),
)
def test_any_document_keeps_its_meaning_and_formats_once(
    data: dict[str, Any],
    indent: int,
    flow: bool | None,
    width: int,
    unicode: bool,
    comment: bool,
    style: str | None,
) -> None:
    text = yaml.safe_dump(
        data,
        indent=indent,
        default_flow_style=flow,
        width=width,
        allow_unicode=unicode,
        sort_keys=False,
        default_style=style,
    )
    if comment:
        text = f"# 说明\n{text}# 结尾\n"
    before, diags = load_yaml("f.yaml", text)
    assert before is not None and not [d for d in diags if d.is_error]
    once = format_yaml(text)
    after, _ = load_yaml("f.yaml", once)
    assert after is not None and after.data == before.data
    assert format_yaml(once) == once
