"""docs/quickstart.md §4 is executed: in a fresh directory, each ``$ charter`` transcript, run at
its place in the page, prints exactly what the page shows, and each ``yaml`` block whose first
line names a file of the pack (``# bank/...``) is written there before the commands after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.docs import pages

DOC = Path(__file__).resolve().parents[3] / "docs" / "quickstart.md"


def steps() -> list[tuple[str, str, str]]:
    return pages.steps(DOC, "bank", "## 4.")


def test_the_journey_has_files_and_transcripts() -> None:
    assert [(kind, what) for kind, what, _ in steps()] == [
        ("run", "charter new pack bank"),
        ("file", "bank/skills/transfer.yaml"),
        ("file", "bank/goals.yaml"),
        ("file", "bank/tests/conversations/transfer.yaml"),
        ("run", "charter validate bank"),
        ("run", "charter test bank"),
    ]


def test_the_journey_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    codes = pages.play(steps(), tmp_path, lambda: capsys.readouterr().out)
    assert codes == [0, 0, 0]
