"""docs/skills.md: every ``python example`` block runs (its asserts are the page's claims),
with ``workdir`` a fresh directory; the worked example of a contract's ``tests:`` (its
``# acme/...`` file written in a fresh directory, its ``$ charter test acme`` transcript) prints
exactly what the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.docs import pages

DOC = Path(__file__).resolve().parents[3] / "docs" / "skills.md"
BLOCKS = re.findall(r"```python example\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) == 1


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, tmp_path: Path) -> None:
    exec(compile(code, str(DOC), "exec"), {"workdir": tmp_path})


def test_the_skill_tests_example_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = pages.steps(DOC, "acme")
    assert [kind for kind, _, _ in steps] == ["file", "run"]
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "pack.yaml").write_text("name: acme\nversion: 0.1.0\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    assert pages.play(steps, tmp_path, lambda: capsys.readouterr().out) == [1]
