"""The installed ``charter`` command, run as a user runs it: its path, a port for it, and
``charter serve`` started in a subprocess and ready."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest


def free_port() -> int:
    """A port the OS just gave out (bound and released): never a fixed one, so workers
    running in parallel do not collide."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def charter_executable() -> Path:
    """The ``charter`` console script installed next to the running interpreter."""
    candidate = Path(sys.executable).with_name("charter")
    if candidate.is_file():
        return candidate
    found = shutil.which("charter")
    if found is None:
        pytest.fail("the charter console script is not installed")
    return Path(found)


@contextlib.contextmanager
def serving(cwd: Path, env: Mapping[str, str], url: str, log: Path) -> Iterator[None]:
    """``charter serve`` started in ``cwd`` with ``env`` (its stderr in ``log``), ready at
    ``url``; terminated on exit. Readiness, not a timed assertion: start-up compiles the pack
    and migrates the stores, so it may take long on a loaded machine."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [str(charter_executable()), "serve"],
            cwd=cwd,
            env=dict(env),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"charter serve exited {proc.returncode}:\n{log.read_text('utf-8')}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"charter serve did not start:\n{log.read_text('utf-8')}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=60)
