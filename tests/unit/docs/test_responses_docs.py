"""docs/responses.md is executed: the worked example's files are written in the page's order
(each ``yaml`` block whose first line names a file of the pack, ``# pay/...``; a later block
replaces an earlier one) and each ``$ charter`` transcript prints exactly what the page shows;
the conversation at the top is what the finance pack answers; the built-in wording table is
Charter's."""

from __future__ import annotations

import base64
import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest

from charter.agent import Agent
from charter.cli.main import main
from charter.compile.response_spec import BUILTIN
from charter.llm.scripted import ScriptedLLM
from tests.unit.docs import pages

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "responses.md"


def blocks() -> list[tuple[str, str]]:
    return pages.blocks(DOC)


def steps() -> list[tuple[str, str, str]]:
    """("file", path, text) and ("run", command, expected output), in the page's order."""
    return pages.steps(DOC, "pay")


def test_the_worked_example_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    ran = []
    for kind, what, text in steps():
        if kind == "file":
            path = tmp_path / what
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            continue
        argv = shlex.split(what)
        assert argv[0] == "charter"
        code = main(argv[1:])
        assert capsys.readouterr().out.splitlines() == text.splitlines(), what
        ran.append((what, code))
    assert ran == [
        ("charter validate pay", 1),
        ("charter validate pay", 0),
        ("charter test pay", 0),
    ]


def test_the_conversation_at_the_top_is_the_finance_packs(tmp_path: Path) -> None:
    (text,) = [t for info, t in blocks() if info == "text"]
    turns: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("U: "):
            turns.append((line[3:], []))
        elif line.startswith("A: "):
            turns[-1][1].append(line[3:])
        else:
            turns[-1][1].append(line.strip())
    llm = ScriptedLLM([])
    with Agent.from_pack(
        "finance",
        llm=llm,
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        memory_key=base64.b64encode(bytes(range(32))).decode(),
        clock=lambda: datetime(2024, 5, 1, 2, 0, tzinfo=UTC),
    ) as agent:
        for said, reply in turns:
            assert agent.turn("u1", "s1", said).text.splitlines() == reply, said
    assert llm.calls == ()


def test_the_builtin_table_is_charters() -> None:
    page = DOC.read_text(encoding="utf-8").split("The built-in wording", 1)[1]
    for event, texts in BUILTIN.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{event}` | "))
        shown = row.split(" | ", 1)[1].rsplit(" |", 1)[0]
        want = (
            " · ".join(f"`{t}`" for t in texts)
            if texts
            else "— (an intent without a skill needs its own)"
        )
        assert shown == want, event


def test_the_readme_shows_the_same_conversation() -> None:
    readme = pages.blocks(ROOT / "README.md")
    (shown,) = [text for info, text in readme if info == "text" and "U: " in text]
    (tested,) = [t for info, t in blocks() if info == "text"]
    assert shown == tested
