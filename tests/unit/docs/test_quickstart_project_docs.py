"""docs/quickstart.md §5 is executed as a reader follows it, in a fresh directory: every
``console`` block is a command and what it prints, run at its place in the page.

``charter ...`` runs in-process and must print exactly the page's output, with nothing on stderr
(no warning) and exit 0; ``cd`` changes directory; ``pip install -q -e .`` installs the project
as pip does for the test only (``tests.support.installed``: the .dist-info on ``sys.path``, not
in the environment the tests run in); ``python -m pytest -q`` runs the project's own tests in a
subprocess that sees the same install (timings masked); ``export`` sets the variable; ``echo X |
charter chat ...`` types X into the chat. The model backend is replaced by a scripted one with no
answers: the pack is strict, and a turn that asked the model would fail.
"""

from __future__ import annotations

import base64
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import charter.agent.configured as configured
from charter.cli.main import main
from charter.llm.scripted import ScriptedLLM
from tests.support.installed import Site
from tests.unit.docs import pages

DOC = Path(__file__).resolve().parents[3] / "docs" / "quickstart.md"
SECTION = "## 5."


def transcripts() -> list[tuple[str, list[str]]]:
    out = []
    for info, text in pages.blocks(DOC, SECTION):
        if info == "console":
            command, *expected = text.splitlines()
            assert command.startswith("$ "), command
            out.append((command[2:], expected))
    return out


def test_the_walk_through_goes_from_a_new_project_to_a_chat() -> None:
    assert [command.split(" ")[0:2] for command, _ in transcripts()] == [
        ["charter", "new"],
        ["cd", "telecom"],
        ["pip", "install"],
        ["charter", "validate"],
        ["charter", "test"],
        ["python", "-m"],
        ["export", "CHARTER_MEMORY_KEY=$(python"],
        ["echo", "查一下订单DD20240001"],
    ]


def _masked(lines: list[str]) -> list[str]:
    """pytest's output without what differs from run to run: its time, the padding of the
    progress line (the terminal's width)."""
    return [" ".join(re.sub(r" in \d+\.\d+s$", " in Ns", line).split()) for line in lines]


def test_the_walk_through_runs_as_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    site: Site,
) -> None:
    for name in [n for n in os.environ if n.startswith("CHARTER_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def no_model(config: object, registry: object, extra: object = None) -> ScriptedLLM:
        return ScriptedLLM([])

    monkeypatch.setattr(configured, "make_llm", no_model)
    for command, expected in transcripts():
        capsys.readouterr()
        if command.startswith("cd "):
            monkeypatch.chdir(command.removeprefix("cd "))
        elif command == "pip install -q -e .":
            site.editable(Path.cwd())
        elif command.startswith("export CHARTER_MEMORY_KEY="):
            monkeypatch.setenv("CHARTER_MEMORY_KEY", base64.b64encode(os.urandom(32)).decode())
        elif command.startswith("python -m pytest"):
            env = {**site.environ(), "COLUMNS": "80"}
            argv = [sys.executable, *shlex.split(command)[1:], "-p", "no:cacheprovider"]
            done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert _masked(done.stdout.splitlines()) == _masked(expected), command
            continue
        else:
            typed, _, charter = command.rpartition(" | ")
            if typed:
                assert typed.startswith("echo "), command
                monkeypatch.setattr("sys.stdin", io.StringIO(typed.removeprefix("echo ") + "\n"))
            argv = shlex.split(charter)
            assert argv[0] == "charter", command
            code = main(argv[1:])
            out, err = capsys.readouterr()
            assert (code, err) == (0, ""), command
            assert out.splitlines() == expected, command
            continue
        assert expected == [], command
