"""A result made once per test run, however many xdist workers need it.

A module- or session-scoped fixture is built once per *worker*: when the work-stealing
scheduler splits a module's tests over two workers, its fixture is built twice. For the few
that cost tens of seconds (a benchmark run in a subprocess) or touch something the workers
share (the repository's list of git worktrees), ``once_per_run`` makes the value in one worker
under a file lock, keeps it as JSON in the directory the run's workers share, and hands it to
the others (pytest-xdist's documented recipe). A ``make`` that raises leaves nothing behind:
the next worker tries again and fails the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock


def shared_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary directory: each worker's own one is below it."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, key: str, make: Callable[[Path], Any]
) -> Any:
    """``make(directory)`` the first time any worker asks for ``key`` in this run (a JSON
    value), the stored value afterwards."""
    root = shared_directory(tmp_path_factory)
    stored = root / f"once-{key}.json"
    with FileLock(str(stored) + ".lock"):
        if stored.is_file():
            return json.loads(stored.read_text(encoding="utf-8"))
        workdir = root / f"once-{key}"
        workdir.mkdir(exist_ok=True)
        value = make(workdir)
        stored.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        return value
