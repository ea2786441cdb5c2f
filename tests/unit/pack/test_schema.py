"""Pack file schemas: registry, schema hygiene, and jsonschema errors as exact Diagnostics."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from charter.diagnostics import Diagnostic, Severity
from charter.pack import KINDS, load_yaml, schema_for, validate
from charter.pack.schema import _diagnose
from charter.pack.yamlsrc import LocatedDoc
from tests.support.hypo import examples

REPO = Path(__file__).resolve().parents[3]

VALID_RULES = """\
rules:
  - id: no-absolute-terms
    describe: 禁用绝对化用语
    message: 请勿使用“肯定”“绝对”等绝对化用语
    check: not output contains any ["肯定", "绝对"]
    on_fail: retry
    on_unfixed: escalate
    tags: [compliance]
  - id: price-format
    describe: "价格必须带 \\"元\\""
    when: |
      output matches /\\d+/
    check: >-
      every money in output
      has unit "元"
    on_fail: fix add_unit "元"
    override: true
tests:
  - name: 不能保证收益 does not trip
    input: 能保证收益吗？
    output: '我们不能保证收益。'
    context: {low_confidence: true, anything: [1, {a: b}]}
    pass: [no-absolute-terms]
    fail: []
    verdict: pass
    fixed: 我们不能保证收益。
"""

VALID_PACK = """\
name: finance
version: 0.1.0
kind: domain
description: 金融领域规则包
locale: zh-CN
extends: [rulesets/zh-customer-service]
requires:
  charter: ">=0.1"
  plugins: [charter-zh]
thresholds:
  uncertainty: 0.72
  max_retries: 2
  retrieval_top_k: 3
messages:
  safe: 抱歉，这个问题我暂时无法回答，已为您转接人工客服。
  escalate: 已为您转接人工客服，请稍候。
"""


def check(kind: str, text: str) -> list[Diagnostic]:
    doc, diags = load_yaml(f"{kind}.yaml", text)
    assert diags == []
    assert doc is not None
    return validate(doc, kind)


def summary(diags: list[Diagnostic]) -> list[tuple[str, str, int, int, str]]:
    return [(d.code, d.message, d.location.line, d.location.col, d.hint) for d in diags]


def test_registry() -> None:
    assert KINDS["pack"].schema_file == "pack.json" and KINDS["pack"].pattern == "pack.yaml"
    assert KINDS["pack"].required is True
    assert KINDS["rules"].schema_file == "rules.json" and KINDS["rules"].pattern == "rules.yaml"
    assert all(name == kind.name for name, kind in KINDS.items())


def _properties(node: Any, where: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            found.append((f"{where}/{name}", sub))
        for key, sub in node.items():
            found += _properties(sub, f"{where}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            found += _properties(sub, f"{where}/{i}")
    return found


@pytest.mark.parametrize("kind", list(KINDS))
def test_schemas_are_valid_and_documented(kind: str) -> None:
    schema = schema_for(kind)
    assert schema is schema_for(kind)  # loaded once
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    props = _properties(schema)
    assert props
    for where, sub in props:
        assert sub.get("title") and sub.get("description"), where


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for sub in node.values():
            found += _objects(sub)
    elif isinstance(node, list):
        for sub in node:
            found += _objects(sub)
    return found


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_object_but_free_form_maps_is_closed(kind: str) -> None:
    for obj in _objects(schema_for(kind)):
        if obj.get("title") != "Context" and not obj.get("x-free-form"):
            assert obj.get("additionalProperties") is False, obj.get("title")


def test_unknown_kind() -> None:
    with pytest.raises(KeyError):
        schema_for("goals-typo")


@pytest.mark.parametrize(("kind", "text"), [("rules", VALID_RULES), ("pack", VALID_PACK)])
def test_valid_files(kind: str, text: str) -> None:
    assert check(kind, text) == []


def _repo_files() -> list[Path]:
    return sorted(
        path
        for top in ("domains", "rulesets")
        for path in (REPO / top).glob("*/*.yaml")
        if path.stem in KINDS
    )


@pytest.mark.parametrize("path", _repo_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_first_party_packs_validate(path: Path) -> None:
    doc, diags = load_yaml(path)
    assert doc is not None and diags == []
    assert validate(doc, path.stem) == []


REQUIRED_RULES = "required keys: id, describe, check, on_fail"
NAME_HINT = "try 'price-format'"

# kind, yaml, [(code, message, line, col, hint)]
SCHEMA_ERRORS: dict[str, tuple[str, str, list[tuple[str, str, int, int, str]]]] = {
    "wrong type, integer": (
        "pack",
        "name: x\nversion: '1'\nthresholds:\n  max_retries: two\n",
        [("CH010", "'max_retries' must be an integer, not a string", 4, 16, "")],
    ),
    "wrong type, number as string": (
        "pack",
        "name: x\nversion: 1.0\n",
        [
            (
                "CH010",
                "'version' must be a string, not a number",
                2,
                10,
                "put the value in quotes to make it a string",
            )
        ],
    ),
    "wrong type, empty value": (
        "rules",
        "rules:\n  - id: a\n    describe: d\n    check:\n    on_fail: retry\n",
        [("CH010", "'check' must be a string, but it is empty", 4, 11, "")],
    ),
    "wrong type, yes is a string": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, override: yes}\n",
        [
            (
                "CH010",
                "'override' must be true or false, not a string",
                2,
                62,
                "write true or false, without quotes",
            )
        ],
    ),
    "DSL condition given true": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, when: true}\n",
        [
            (
                "CH010",
                "'when' must be a string, not a boolean",
                2,
                58,
                "'when' takes a condition written in the DSL (docs/dsl.md), not true or false: "
                "to check the rule always, leave 'when' out",
            )
        ],
    ),
    "DSL condition given false": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, when: false}\n",
        [
            (
                "CH010",
                "'when' must be a string, not a boolean",
                2,
                58,
                "'when' takes a condition written in the DSL (docs/dsl.md), not true or false",
            )
        ],
    ),
    "DSL expression given a number": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: 1, on_fail: retry}\n",
        [
            (
                "CH010",
                "'check' must be a string, not an integer",
                2,
                33,
                "'check' takes an expression written in the DSL (docs/dsl.md), not a number",
            )
        ],
    ),
    "DSL trigger given true": (
        "goals",
        "intents:\n  - {id: a, describe: d, trigger: true}\n",
        [
            (
                "CH010",
                "'trigger' must be a string, not a boolean",
                2,
                35,
                "'trigger' takes a condition written in the DSL (docs/dsl.md), not true or false",
            )
        ],
    ),
    "text given true": (
        "rules",
        "rules:\n  - {id: a, describe: true, check: c, on_fail: retry}\n",
        [
            (
                "CH010",
                "'describe' must be a string, not a boolean",
                2,
                23,
                "put the value in quotes to make it a string",
            )
        ],
    ),
    "wrong type, list item": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry}\n  - just text\n",
        [("CH010", "item 2 of 'rules' must be a mapping, not a string", 3, 5, "")],
    ),
    "wrong type, string for a list": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, tags: compliance}\n",
        [
            (
                "CH010",
                "'tags' must be a list, not a string",
                2,
                58,
                "write a list: [a, b] or one '- item' per line",
            )
        ],
    ),
    "wrong type, item of a list": (
        "pack",
        "name: x\nversion: '1'\nextends: [a, 2]\n",
        [
            (
                "CH010",
                "item 2 of 'extends' must be a string, not an integer",
                3,
                14,
                "put the value in quotes to make it a string",
            )
        ],
    ),
    "wrong type, whole file": (
        "pack",
        "- name: x\n",
        [
            (
                "CH010",
                "the file must contain a mapping, not a list",
                1,
                1,
                "start with the keys name, version",
            )
        ],
    ),
    "missing key, with rule id": (
        "rules",
        "rules:\n  - id: price-format\n    describe: d\n    on_fail: retry\n",
        [("CH011", "missing required key 'check' in rule 'price-format'", 2, 5, REQUIRED_RULES)],
    ),
    "missing keys, without id": (
        "rules",
        "rules:\n  - describe: d\n    check: c\n",
        [
            ("CH011", "missing required key 'id'", 2, 5, REQUIRED_RULES),
            ("CH011", "missing required key 'on_fail'", 2, 5, REQUIRED_RULES),
        ],
    ),
    "missing key in a test": (
        "rules",
        "rules: []\ntests:\n  - name: 保证\n",
        [
            (
                "CH011",
                "missing required key 'output' in test '保证'",
                3,
                5,
                "required keys: name, output",
            )
        ],
    ),
    "missing key at the top": (
        "pack",
        "name: x\n",
        [("CH011", "missing required key 'version'", 1, 1, "required keys: name, version")],
    ),
    "unknown key": (
        "rules",
        "rules:\n  - id: a\n    describe: d\n    chek: c\n    check: c\n    on_fail: retry\n",
        [("CH012", "unknown key 'chek'", 4, 5, "did you mean 'check'?")],
    ),
    "unknown keys, each one": (
        "pack",
        "name: x\nversion: '1'\nthresholds: {uncertanty: 0.5, zzz: 1}\n",
        [
            ("CH012", "unknown key 'uncertanty'", 3, 14, "did you mean 'uncertainty'?"),
            (
                "CH012",
                "unknown key 'zzz'",
                3,
                31,
                "expected one of: max_retries, retrieval_top_k, uncertainty",
            ),
        ],
    ),
    "enum": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, on_unfixed: rety}\n",
        [
            (
                "CH013",
                "'on_unfixed' must be one of 'block', 'escalate', 'retry', 'flag', not 'rety'",
                2,
                64,
                "did you mean 'retry'?",
            )
        ],
    ),
    "enum without a close match": (
        "pack",
        "name: x\nversion: '1'\nkind: library\n",
        [("CH013", "'kind' must be one of 'domain', 'ruleset', not 'library'", 3, 7, "")],
    ),
    "pattern": (
        "rules",
        "rules:\n  - {id: Price_Format, describe: d, check: c, on_fail: retry}\n",
        [
            (
                "CH013",
                "'id' must be lowercase letters, digits and '-', starting with a letter, "
                "not 'Price_Format'",
                2,
                10,
                NAME_HINT,
            )
        ],
    ),
    "pattern without a fix": (
        "pack",
        "name: 9lives\nversion: '1'\n",
        [
            (
                "CH013",
                "'name' must be lowercase letters, digits and '-', starting with a letter, "
                "not '9lives'",
                1,
                7,
                "",  # the message says the pattern in words; no regex for the reader
            )
        ],
    ),
    "minimum and maximum": (
        "pack",
        "name: x\nversion: '1'\nthresholds:\n  uncertainty: 1.5\n  retrieval_top_k: 0\n",
        [
            ("CH013", "'uncertainty' must be at most 1, not 1.5", 4, 16, ""),
            ("CH013", "'retrieval_top_k' must be at least 1, not 0", 5, 20, ""),
        ],
    ),
    "empty string": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: ''}\n",
        [("CH013", "'on_fail' must not be empty", 2, 45, "")],
    ),
    "duplicate list item": (
        "rules",
        "rules:\n  - {id: a, describe: d, check: c, on_fail: retry, tags: [x, y, x]}\n",
        [("CH013", "'tags' lists 'x' more than once", 2, 65, "")],
    ),
    "format": (
        "pack",
        "name: x\nversion: '1'\nrequires: {charter: banana}\n",
        [
            (
                "CH013",
                "'charter' is not a valid version specifier: 'banana'",
                3,
                21,
                "use a PEP 440 specifier such as '>=0.1,<0.2'",
            )
        ],
    ),
    "empty file": (
        "pack",
        "",
        [
            (
                "CH010",
                "the file must contain a mapping, but it is empty",
                1,
                1,
                "start with the keys name, version",
            )
        ],
    ),
}


@pytest.mark.parametrize("name", list(SCHEMA_ERRORS))
def test_schema_errors(name: str) -> None:
    kind, text, expected = SCHEMA_ERRORS[name]
    diags = check(kind, text)
    assert summary(diags) == expected
    for d in diags:
        assert d.severity is (Severity.WARNING if d.code == "CH012" else Severity.ERROR)


def test_unknown_key_location_spans_the_key() -> None:
    [diag] = check("pack", "name: x\nversion: '1'\nlocal: zh\n")
    assert (diag.location.line, diag.location.col, diag.location.end_col) == (3, 1, 6)
    assert diag.hint == "did you mean 'locale'?"


def test_all_problems_in_one_file_are_reported() -> None:
    text = """\
rules:
  - id: Bad_Id
    describe: 1
    chek: x
    on_fail: retry
  - id: ok
    describe: d
    check: c
    on_fail: retry
    on_unfixed: nope
tests:
  - name: t
    output: o
    verdict: maybe
    extra: 1
"""
    assert [(d.code, d.location.line) for d in check("rules", text)] == [
        ("CH011", 2),
        ("CH013", 2),
        ("CH010", 3),
        ("CH012", 4),
        ("CH013", 10),
        ("CH013", 14),
        ("CH012", 15),
    ]


def test_one_of_reports_the_closest_alternative() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {
                "oneOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "required": ["all"],
                        "additionalProperties": False,
                        "properties": {"all": {"type": "array"}},
                    },
                ]
            },
            "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"enum": ["none"]}]},
        },
    }
    doc, _ = load_yaml("x.yaml", "when: {all: 3}\nlimit: 0\n")
    assert doc is not None
    diags = _diagnose(doc, Draft202012Validator(schema))
    assert summary(diags) == [
        ("CH013", "'all' must be a list, not an integer", 1, 13, ""),
        ("CH013", "'limit' must be at least 1, not 0", 2, 8, ""),
    ]
    assert all(d.severity is Severity.ERROR for d in diags)


def test_one_of_matching_twice() -> None:
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    doc = LocatedDoc("x.yaml", "3\n", 3)
    assert summary(_diagnose(doc, Draft202012Validator(schema))) == [
        ("CH013", "the file does not match exactly one allowed form", 1, 1, "")
    ]


# ---- robustness: whatever the text, only Diagnostics come out --------------------------------

_PIECES = [*" \t\n\r:-[]{}'\"#&*!|>%@`,?\\", "中", "文", "\x85", "\u2028", "\x07", "\ufeff"]
_PIECES += ["a", "id", "0", "1.5", "true", "~", "<<", "---", "...", "- ", ": ", "&x ", "*x", "!!"]


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    text = list(VALID_RULES)
    rnd = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(1, 8))):
        i = rnd.randrange(len(text) + 1)
        op, piece = rnd.random(), rnd.choice(_PIECES)
        if op < 0.35 and i < len(text):
            text[i] = piece
        elif op < 0.7:
            text.insert(i, piece)
        else:
            del text[i : i + rnd.randint(1, 12)]
    return "".join(text)


def _walk(doc: LocatedDoc, value: Any, ptr: tuple[str | int, ...]) -> None:
    doc.loc(ptr)
    doc.key_loc(ptr)
    doc.end_loc(ptr)
    if isinstance(value, str):
        for i in range(len(value) + 1):
            doc.offset_loc(ptr, i, i + 1)
    elif isinstance(value, dict):
        for key, sub in value.items():
            _walk(doc, sub, (*ptr, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _walk(doc, sub, (*ptr, i))


@settings(
    max_examples=examples(300),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.one_of(st.text(max_size=200), st.text(alphabet="".join(_PIECES)), _mutated()))
def test_any_text_yields_only_diagnostics(text: str) -> None:
    doc, diags = load_yaml("rules.yaml", text)
    assert all(isinstance(d, Diagnostic) for d in diags)
    if doc is not None:
        for kind in KINDS:
            assert all(isinstance(d, Diagnostic) for d in validate(doc, kind))
        _walk(doc, doc.data, ())
