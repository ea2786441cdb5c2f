"""Running ``charter`` as a user does, for the benchmarks that time whole processes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def charter_command() -> list[str]:
    """The installed ``charter`` script next to this interpreter, as a user runs it."""
    script = shutil.which("charter", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script]
    return [sys.executable, "-c", "from charter.cli.main import console; console()"]


def bytecode_env(pycache: Path) -> dict[str, str]:
    """The environment of every timed process: Python's bytecode cached in ``pycache``.

    pip compiles an installed package's bytecode when it installs it, so a user's ``charter``
    never compiles Python source; a development checkout, or a machine with
    ``PYTHONDONTWRITEBYTECODE`` set, would compile every module on every run, and the figures
    would be those of the Python compiler. ``PYTHONPYCACHEPREFIX`` keeps the bytecode out of
    the checkout; one untimed run of each case fills it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(pycache)}
