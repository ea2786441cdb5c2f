"""Every pack file schema has its own ``$id`` and is a valid draft 2020-12 schema, ``charter
schema KIND`` prints it, and the editor set-up of docs/authoring.md §11 works as written: the
commands write every schema, the VS Code mapping gives each shipped pack file the schema of its
kind (and the file validates against it), the modeline's relative path reaches the schema.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from charter.cli import schema as schema_cmd
from charter.pack.fmt import format_yaml
from charter.pack.schema import KINDS, schema_for, validate
from charter.pack.yamlsrc import load_yaml

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "framework" / "charter" / "pack" / "schemas"
BASE = "https://charter.invalid/schemas/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def test_every_schema_file_is_a_kind() -> None:
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(
        k.schema_file for k in KINDS.values()
    )


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_schema_has_its_id_and_is_valid(kind: str) -> None:
    schema = schema_for(kind)
    assert list(schema)[:2] == ["$schema", "$id"]
    assert schema["$schema"] == DRAFT
    assert schema["$id"] == BASE + KINDS[kind].schema_file
    Draft202012Validator.check_schema(schema)


def test_the_ids_are_unique() -> None:
    ids = [schema_for(kind)["$id"] for kind in KINDS]
    assert len(set(ids)) == len(ids) == 12


# keywords of drafts 2019-09 and 2020-12 that a draft-07 validator (the YAML language server's)
# would ignore; $defs is only a place that "$ref": "#/$defs/..." points into, which it follows
_NEWER = {
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "$vocabulary",
    "contentSchema",
    "dependentRequired",
    "dependentSchemas",
    "maxContains",
    "minContains",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


@pytest.mark.parametrize("kind", list(KINDS))
def test_editors_that_know_draft_07_read_them_fully(kind: str) -> None:
    assert _keys(schema_for(kind)) & _NEWER == set()


@pytest.mark.parametrize("kind", list(KINDS))
def test_charter_schema_prints_it(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert schema_cmd.run(kind) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["$id"] == BASE + f"{kind}.json"
    assert printed == schema_for(kind)


# ---- docs/authoring.md §11 ---------------------------------------------------------------------


def _fenced() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    body = text.split("\n## 11. Schemas in the editor\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w*)\n(.*?)```", body, flags=re.S)


def _block(info: str) -> str:
    found = [text for kind, text in _fenced() if kind == info]
    assert len(found) == 1, info
    return found[0]


def _glob(pattern: str) -> re.Pattern[str]:
    """A VS Code glob (``**/`` any folders, ``*`` within one name) as a regular expression."""
    parts = re.split(r"(\*\*/|\*)", pattern)
    table = {"**/": "(?:.*/)?", "*": "[^/]*"}
    return re.compile("".join(table.get(p, re.escape(p)) for p in parts) + r"\Z")


def _matches(patterns: list[str], name: str) -> bool:
    """As the YAML language server matches: the last pattern that matches is not a '!' one."""
    hits = [p for p in patterns if _glob(p.removeprefix("!")).match(name)]
    return bool(hits) and not hits[-1].startswith("!")


def _write_schemas(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What the sh block does, with `charter schema` run in-process; the kinds it names."""
    script = _block("sh")
    assert script.splitlines()[0] == "mkdir -p .schemas"
    loop = re.search(r"for kind in ([a-z ]+); do\n  (.*)\ndone", script)
    assert loop is not None
    assert loop[2] == 'charter schema "$kind" > ".schemas/$kind.json"'
    kinds = loop[1].split()
    (root / ".schemas").mkdir()
    for kind in kinds:
        assert schema_cmd.run(kind) == 0
        (root / ".schemas" / f"{kind}.json").write_text(capsys.readouterr().out, encoding="utf-8")
    return kinds


def test_the_commands_write_every_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _write_schemas(tmp_path, capsys) == list(KINDS)
    for kind in KINDS:
        written = json.loads((tmp_path / ".schemas" / f"{kind}.json").read_text("utf-8"))
        assert written["$id"] == BASE + f"{kind}.json"


def test_the_mapping_gives_each_shipped_file_its_kinds_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_schemas(tmp_path, capsys)
    mapping: dict[str, list[str]] = json.loads(_block("json"))["yaml.schemas"]
    conversations = "**/" + KINDS["conversations"].pattern
    assert mapping == {
        f"./.schemas/{k}.json": [f"**/{v.pattern}"]
        + ([] if "/" in v.pattern else [f"!{conversations}"])
        for k, v in KINDS.items()
    }
    shipped = sorted([*ROOT.glob("domains/**/*.yaml"), *ROOT.glob("rulesets/**/*.yaml")])
    assert len(shipped) >= 60
    for file in shipped:
        name = file.relative_to(ROOT).as_posix()
        matched = [path for path, patterns in mapping.items() if _matches(patterns, name)]
        assert len(matched) == 1, name
        schema: dict[str, Any] = json.loads((tmp_path / matched[0]).read_text("utf-8"))
        doc, _ = load_yaml(name, file.read_text(encoding="utf-8"))
        assert doc is not None
        errors = list(Draft202012Validator(schema).iter_errors(doc.data))
        assert errors == [], name


def test_the_modeline_names_the_schema_from_the_file() -> None:
    block = _block("yaml")
    first = block.splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix)
    target = posixpath.normpath(posixpath.join("domains/express", first.removeprefix(prefix)))
    assert target == ".schemas/pack.json"
    doc, diags = load_yaml("domains/express/pack.yaml", block)
    assert doc is not None and diags == [] and validate(doc, "pack") == []
    assert format_yaml(block) == block
