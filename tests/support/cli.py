"""Running the ``charter`` CLI in-process from a unit test: what it returned and printed.

Test modules import ``Run`` (to compare whole results) and ``RunCharter`` (the fixture's
type); the ``charter`` fixture itself lives in ``tests/conftest.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from charter.cli.main import main


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


RunCharter = Callable[..., Run]


def runner(capsys: pytest.CaptureFixture[str]) -> RunCharter:
    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
