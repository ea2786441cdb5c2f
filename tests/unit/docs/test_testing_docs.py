"""docs/testing.md is executed: on a copy of the pack it describes (the conversation fixture,
without its tests), each ``yaml`` block whose first line names a file of the pack
(``# balance/...``) is written there, and each ``$ charter test`` transcript, run at its place
in the page, prints exactly what the page shows. The Python example runs."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from charter.cli.main import main
from tests.unit.docs import pages

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "testing.md"
FIXTURE = ROOT / "tests" / "fixtures" / "conversations" / "balance"


def blocks() -> list[tuple[str, str]]:
    return pages.blocks(DOC)


def steps() -> list[tuple[str, str, str]]:
    """("file", path, text) and ("run", command, expected output), in the page's order."""
    return pages.steps(DOC, "balance")


def test_the_page_has_files_and_transcripts() -> None:
    assert [kind for kind, _, _ in steps()] == ["file", "run", "file", "run"]


def test_the_example_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(FIXTURE, tmp_path / "balance", ignore=shutil.ignore_patterns("tests"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    for kind, what, text in steps():
        if kind == "file":
            path = tmp_path / what
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            continue
        argv = shlex.split(what)
        assert argv[0] == "charter"
        main(argv[1:])
        assert capsys.readouterr().out.splitlines() == text.splitlines(), what


def test_the_fixture_and_the_page_test_the_same_pack() -> None:
    names = {p.name for p in FIXTURE.iterdir()}
    assert names == {
        "pack.yaml",
        "goals.yaml",
        "skills",
        "fallbacks.yaml",
        "responses.yaml",
        "tests",
    }
    assert "mode: assisted" in (FIXTURE / "responses.yaml").read_text(encoding="utf-8")


@pytest.mark.slow  # plays the finance pack's conversations (about 6 s)
def test_the_python_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (code,) = [text for info, text in blocks() if info == "python"]
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    exec(compile(code, str(DOC), "exec"), {})
    assert capsys.readouterr().out.splitlines()[-1].startswith("intents ")
