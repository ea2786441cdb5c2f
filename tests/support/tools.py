"""The development tools a test runs as a pack's author would (ruff, mypy), from this
interpreter's environment first: the test is skipped, saying why, where they are not installed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


def dev_tool(name: str) -> str:
    """The path of ``name`` beside this interpreter, else on PATH; skip the test without it."""
    found = Path(sys.executable).with_name(name)
    if found.is_file():
        return str(found)
    on_path = shutil.which(name)
    if on_path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return on_path
