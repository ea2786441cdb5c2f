"""Execute the documentation: every example rules file in the docs compiles and its tests pass.

* Every fenced block tagged ``yaml`` in ``docs/dsl.md`` and ``docs/authoring.md`` whose YAML has
  a top-level ``rules:`` key is an example rules file. It is compiled as ``rules.yaml`` of a
  generated pack, must compile without errors, must carry ``tests:``, and every test case must
  pass. Test ids are ``<doc>:<line of the opening fence>``.
* ``docs/diagnostics.md`` lists exactly the codes of ``charter.diagnostics.CODES``.
* ``docs/dsl.md`` shows every DSL keyword, every built-in repair and every installed extractor in
  a rule of an executed example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.diagnostics import CODES, render_text
from charter.plugins.host import default_registry
from charter.reflect.engine import Engine
from charter.reflect.testing import Coverage, run_pack

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
EXAMPLE_DOCS = ("dsl.md", "authoring.md")
GRAMMAR = ROOT / "framework" / "charter" / "dsl" / "charter.lark"
PACK_YAML = "name: doc-example\nversion: 0.1.0\n"
DSL_KEYS = ("check", "when", "on_fail")

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a Markdown file."""

    doc: str
    line: int  # 1-based line of the opening fence
    info: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block, with its info string and its text (fence indentation removed)."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""
        ):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1  # the closing fence
        info = m["info"].strip().split(" ")[0] if m["info"].strip() else ""
        blocks.append(Block(path.name, start + 1, info, "\n".join(body) + "\n"))
    return blocks


def _load(block: Block) -> Any:
    try:
        return yaml.safe_load(block.text)
    except yaml.YAMLError as exc:  # a broken example is a failure of its own
        raise AssertionError(f"{block.id}: the yaml block is not valid YAML: {exc}") from exc


def is_rules_example(block: Block) -> bool:
    if block.info != "yaml":
        return False
    try:
        data = yaml.safe_load(block.text)
    except yaml.YAMLError:
        # reported by the example's own test rather than as a collection error
        return re.search(r"^rules:", block.text, flags=re.M) is not None
    return isinstance(data, dict) and "rules" in data


@cache
def rules_examples() -> tuple[Block, ...]:
    out: list[Block] = []
    for name in EXAMPLE_DOCS:
        out += [b for b in fenced_blocks(DOCS / name) if is_rules_example(b)]
    return tuple(out)


def registry() -> Registry:
    return default_registry()[0]


def dsl_texts(block: Block) -> list[str]:
    """The DSL expressions and actions of an example's rules (none if the YAML is broken)."""
    try:
        data = yaml.safe_load(block.text)
    except yaml.YAMLError:
        return []
    out: list[str] = []
    for rule in data.get("rules") or []:
        if isinstance(rule, dict):
            out += [str(rule[k]) for k in DSL_KEYS if isinstance(rule.get(k), str)]
    return out


# ---- the examples ------------------------------------------------------------------------------


@pytest.mark.parametrize("block", rules_examples(), ids=lambda b: b.id)
def test_example_compiles_and_its_tests_pass(block: Block, tmp_path: Path) -> None:
    reg = registry()
    data = _load(block)
    assert data.get("tests"), f"{block.id}: an example must pin its behaviour with tests:"
    (tmp_path / "pack.yaml").write_text(PACK_YAML, encoding="utf-8")
    (tmp_path / "rules.yaml").write_text(block.text, encoding="utf-8")
    pack, diagnostics = compile_path(tmp_path, reg, cache_dir=None)
    errors = [d for d in diagnostics if d.is_error]
    assert not errors and pack is not None, f"{block.id}: the example does not compile:\n" + (
        render_text(errors)
    )
    results = run_pack(pack, Engine(pack, reg), Coverage())
    assert len(results) == len(data["tests"])
    failed = [
        f"  case '{r.case.name}' (line {block.line + r.case.location.line}): "
        + "; ".join(r.problems)
        for r in results
        if not r.ok
    ]
    assert not failed, f"{block.id}: test cases fail:\n" + "\n".join(failed)


def test_the_docs_have_examples() -> None:
    docs = {b.doc for b in rules_examples()}
    assert docs == set(EXAMPLE_DOCS)


# ---- diagnostics.md ----------------------------------------------------------------------------

_CODE_LINE = re.compile(r"^(?:[-*] +)?`?(?P<code>CH\d{3})`?\s+—\s+(?P<text>\S.*)$")


def documented_codes() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (DOCS / "diagnostics.md").read_text(encoding="utf-8").splitlines():
        m = _CODE_LINE.match(line.strip())
        if m is not None:
            assert m["code"] not in out, f"{m['code']} is documented twice"
            out[m["code"]] = m["text"]
    return out


def test_every_code_is_documented_and_nothing_else() -> None:
    documented = documented_codes()
    assert sorted(set(CODES) - set(documented)) == [], "codes missing from docs/diagnostics.md"
    assert sorted(set(documented) - set(CODES)) == [], "docs/diagnostics.md names unknown codes"


def test_each_code_line_starts_with_its_summary() -> None:
    for code, text in documented_codes().items():
        assert text.startswith(CODES[code]), f"{code}: the line should start with {CODES[code]!r}"


# ---- coverage of dsl.md -------------------------------------------------------------------------

_TERMINAL = re.compile(r"^(?P<name>[A-Z_]+)(?:\.\d+)?\s*:\s*/(?P<pattern>.*)/\s*$")


def grammar_keywords() -> set[str]:
    """Words of the keyword terminals: those whose pattern is only lowercase words."""
    words: set[str] = set()
    for line in GRAMMAR.read_text(encoding="utf-8").splitlines():
        m = _TERMINAL.match(line.strip())
        if m is None:
            continue
        body = m["pattern"].replace(r"\b", "")
        if body.startswith("(?:") and body.endswith(")"):
            body = body[3:-1]
        if re.fullmatch(r"[a-z]+(?:\|[a-z]+)*", body):
            words.update(body.split("|"))
    return words


def _dsl_of_dsl_md() -> str:
    return "\n".join(t for b in rules_examples() if b.doc == "dsl.md" for t in dsl_texts(b))


def _has_word(word: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None


def test_grammar_keywords_are_found() -> None:
    # guards the keyword test below against a grammar file it can no longer read
    assert {"contains", "unless", "every", "followed", "escalate", "fix"} <= grammar_keywords()


def test_every_keyword_is_shown_in_an_example() -> None:
    dsl = _dsl_of_dsl_md()
    missing = sorted(w for w in grammar_keywords() if not _has_word(w, dsl))
    assert missing == [], f"keywords without an example rule in docs/dsl.md: {missing}"


def test_every_repair_is_shown_in_an_example() -> None:
    dsl = _dsl_of_dsl_md()
    missing = sorted(
        name for name in registry().repairs if not re.search(rf"\bfix\s+{name}\b", dsl)
    )
    assert missing == [], f"repairs without an example rule in docs/dsl.md: {missing}"


def test_every_extractor_is_shown_in_an_example() -> None:
    dsl = _dsl_of_dsl_md()
    missing = sorted(name for name in registry().extractors if not _has_word(name, dsl))
    assert missing == [], f"extractors without an example rule in docs/dsl.md: {missing}"
