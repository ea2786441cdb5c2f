"""docs/responses.md is executed: the worked example's files are written in the page's order
(each ``yaml`` block whose first line names a file of the pack, ``# pay/...``; a later block
replaces an earlier one) and each ``$ charter`` transcript prints exactly what the page shows;
the conversation at the top is what the finance pack answers; the built-in wording table is
Charter's."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from charter.agent import Agent
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
    codes = pages.play(steps(), tmp_path, lambda: capsys.readouterr().out)
    ran = list(zip([w for k, w, _ in steps() if k == "run"], codes, strict=True))
    assert ran == [
        ("charter validate pay", 1),
        ("charter validate pay", 0),
        ("charter test pay", 0),
    ]


def test_the_conversation_at_the_top_is_the_finance_packs(tmp_path: Path) -> None:
    (text,) = [t for info, t in blocks() if info == "text" and t.startswith("U: ")]
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
    shown = [text for info, text in readme if info == "text" and "U: " in text]
    (tested,) = [t for info, t in blocks() if info == "text" and t.startswith("U: ")]
    assert shown[1] == tested  # the first is the understanding one (below)


def _said(text: str) -> list[tuple[str, str]]:
    """(user, reply) pairs of a transcript: U: lines, A: lines with their indented rest."""
    pairs: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("U: "):
            pairs.append((line[3:], ""))
        elif line.startswith("A: "):
            pairs[-1] = (pairs[-1][0], line[3:])
        elif line.startswith("   ") and pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + "\n" + line[3:])
    return pairs


def test_the_readme_journeys_are_the_finance_conversation_tests() -> None:
    """Each turn of the README's third transcript (and its first) is a turn of a finance
    conversation test,
    with that exact reply: what the README shows is what `charter test` checks."""
    readme = pages.blocks(ROOT / "README.md")
    shown = [text for info, text in readme if info == "text" and "U: " in text]
    tested: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "domains/finance/tests/conversations").glob("*.yaml")):
        for conv in yaml.safe_load(path.read_text(encoding="utf-8"))["conversations"]:
            for turn in conv["turns"]:
                reply = (turn.get("expect") or {}).get("reply")
                if isinstance(reply, str):
                    tested.add((turn["user"], reply))
    pairs = _said(shown[2])
    assert len(pairs) == 6
    assert [p for p in pairs if p not in tested] == []
    understood = _said(shown[0])  # an intent as customers say it
    assert len(understood) == 4
    assert [p for p in understood if p not in tested] == []
