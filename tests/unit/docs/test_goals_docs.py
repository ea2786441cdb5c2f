"""docs/goals.md is executed: its goals.yaml example validates and its planner cases pass; its
rules example (the ``goal.`` subject) compiles and its cases pass."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "goals.md"


def yaml_blocks() -> list[tuple[int, str]]:
    text = DOC.read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group(1))
        for m in re.finditer(r"```yaml\n(.*?)```", text, flags=re.S)
    ]


def _kind(block: str) -> str:
    data = yaml.safe_load(block)  # every yaml block parses, fragments included
    if not isinstance(data, dict):
        return "fragment"
    return "goals" if "intents" in data else "rules" if "rules" in data else "fragment"


BLOCKS = [
    (line, block, kind) for line, block in yaml_blocks() if (kind := _kind(block)) != "fragment"
]


def test_the_doc_has_a_goals_and_a_rules_example() -> None:
    assert sorted({kind for _, _, kind in BLOCKS}) == ["goals", "rules"]


@pytest.mark.parametrize(
    ("line", "block", "kind"), BLOCKS, ids=[f"goals.md:{b[0]}" for b in BLOCKS]
)
def test_example_validates_and_its_cases_pass(
    line: int,
    block: str,
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    pack = tmp_path / "example"
    pack.mkdir()
    (pack / "pack.yaml").write_text(
        "name: example\nversion: 0.1.0\nrequires:\n  plugins: [charter-zh]\n", encoding="utf-8"
    )
    (pack / f"{kind}.yaml").write_text(block, encoding="utf-8")
    assert main(["validate", "--strict", str(pack)]) == 0, capsys.readouterr().out
    code = main(["test", str(pack)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^[1-9][0-9]* passed, 0 failed$", out, flags=re.M), out
