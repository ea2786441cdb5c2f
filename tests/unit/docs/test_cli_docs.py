"""Every ``$ charter ...`` transcript in docs/cli.md and docs/ci.md is run and compared."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


def transcripts(doc: str) -> list[tuple[str, str, list[str]]]:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"```console\n(.*?)```", text, flags=re.S):
        line = text[: m.start()].count("\n") + 2
        command: str | None = None
        expected: list[str] = []
        for row in m.group(1).splitlines():
            if row.startswith("$ "):
                if command is not None:
                    found.append((f"{doc}:{line}", command, expected))
                command, expected = row[2:], []
            else:
                expected.append(row)
        if command is not None:
            found.append((f"{doc}:{line}", command, expected))
    return found


CASES = transcripts("cli.md")
# what plays or formats every shipped pack takes seconds to tens of seconds: the slow tier
SLOW = ("charter test domains", "charter fmt --check domains")


def params() -> list[object]:
    out = []
    for case in CASES:
        # slow: playing or formatting every shipped pack (SLOW) takes 4 to 20 s
        marks = [pytest.mark.slow] if case[1].startswith(SLOW) else []
        out.append(pytest.param(*case, id=case[0], marks=marks))
    return out


@pytest.mark.parametrize(("where", "command", "expected"), params())
def test_transcript(
    where: str,
    command: str,
    expected: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path))
    argv = shlex.split(command)
    assert argv[0] == "charter"
    main(argv[1:])
    assert capsys.readouterr().out.splitlines() == expected


def test_there_are_transcripts() -> None:
    assert len(CASES) == 9


def _yaml_blocks(doc: str) -> list[object]:
    import yaml

    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S)]


def test_ci_doc_hooks_exist() -> None:
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    ids = {h["id"] for h in hooks}
    assert ids == {"charter-validate", "charter-test", "charter-fmt"}
    remote, local, _ = _yaml_blocks("ci.md")
    assert {h["id"] for r in remote["repos"] for h in r["hooks"]} == ids  # type: ignore[index]
    assert local["repos"][0]["hooks"][0]["entry"].startswith("charter validate")  # type: ignore[index]


@pytest.mark.slow  # validates, tests and formats every shipped pack (about 20 s)
def test_ci_doc_workflow_commands_pass(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    for sub in ("domains", "rulesets"):
        (tmp_path / sub).symlink_to(ROOT / sub)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    workflow = _yaml_blocks("ci.md")[2]
    steps = workflow["jobs"]["packs"]["steps"]  # type: ignore[index]
    commands = [s["run"] for s in steps if str(s.get("run", "")).startswith("charter ")]
    assert len(commands) == 3
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0, command
    assert (tmp_path / "reports" / "charter.xml").is_file()
    capsys.readouterr()


def test_ci_doc_github_annotation_matches_the_renderer() -> None:
    from charter.diagnostics import Location, error, render_github

    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(.*?)\n```", text, flags=re.S)
    assert shown is not None
    d = error(
        "CH102",
        "unknown extractor 'mony'",
        Location("domains/finance/rules.yaml", 21, 28),
        "did you mean 'money'?",
    )
    assert render_github([d]).strip() == shown.group(1)
