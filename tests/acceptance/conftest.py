"""Shared helpers for the acceptance tests: run the ``charter`` CLI as a user would.

Everything is a fixture, so test modules never import this file (what they share besides
fixtures is in ``tests/support``):

* ``run_cli(*args, stdin=None)`` calls ``charter.cli.main.main([...])`` in-process (fast) and
  reads what it printed through pytest's ``capsys``;
* ``run_console_script(*args, stdin=None, cwd=ROOT)`` runs the installed ``charter`` command
  in a real subprocess, to prove the console script itself works.

Both return a ``CliResult`` (``code``, ``out``, ``err``). Every test below this directory runs
with the repository root as the working directory (so ``--domain finance`` resolves) and with
``CHARTER_CACHE_DIR`` pointing at a session temporary directory, never at the user's cache.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from charter.cli.main import main
from tests.support.console import charter_executable
from tests.support.paths import ROOT


@dataclass(frozen=True)
class CliResult:
    """What one ``charter`` invocation returned and printed."""

    code: int
    out: str
    err: str


RunCli = Callable[..., CliResult]


@pytest.fixture(scope="session")
def charter_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compile cache for the whole session: the packs are compiled once, not per test."""
    return tmp_path_factory.mktemp("charter-cache")


@pytest.fixture(autouse=True)
def _charter_environment(monkeypatch: pytest.MonkeyPatch, charter_cache_dir: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("CHARTER_NO_CACHE", raising=False)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(charter_cache_dir))


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """``run_cli("check", "--domain", "finance", text, stdin=None)`` -> exit code and output.

    ``stdin`` (a string) replaces ``sys.stdin`` for the call; without it the CLI must not
    need to read standard input.
    """

    def run(*args: str, stdin: str | None = None) -> CliResult:
        capsys.readouterr()  # drop anything printed before this call
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def run_console_script(charter_cache_dir: Path) -> RunCli:
    """``run_console_script("check", ..., stdin=None, cwd=ROOT)``: the installed command.

    Runs ``charter`` in a real subprocess, UTF-8 in and out, with the session's compile cache.
    """

    def run(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> CliResult:
        environ = {
            **os.environ,
            "CHARTER_CACHE_DIR": str(charter_cache_dir),
            "PYTHONIOENCODING": "utf-8",
        }
        environ.pop("CHARTER_NO_CACHE", None)
        proc = subprocess.run(
            [str(charter_executable()), *args],
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=cwd,
            env=environ,
            timeout=120,
            check=False,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return run
