"""What every test directory shares: the installed plugins' registry and the shipped packs,
compiled once per process; the ``charter`` CLI run in-process; a compile cache and a
Hypothesis storage directory of the session's own; the Hypothesis profiles; and the report of
where the time went (docs/testing.md, section 7).

The suite runs in parallel (pytest-xdist, ``-n auto --dist worksteal``): every session-scoped
fixture here is built once per worker, and nothing a test writes is shared with another
worker (temporary paths, one PostgreSQL schema per test, ports from the OS).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from tests.support.cli import RunCharter, runner
from tests.support.packs import ShippedPacks, installed_registry

pytest_plugins = ["tests.support.timing", "tests.support.example_counts", "tests.support.installed"]

# ``ci`` (make test, and a bare ``pytest``): every example count as written, derandomized so
# every run tries the same examples, no deadline (a loaded CI machine is no failure), no example
# database (nothing written into the checkout, nothing shared between workers). ``dev``
# (make test-fast): the same, randomized, with a tenth of the examples (tests.support.hypo).
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", parent=settings.get_profile("ci"), derandomize=False, max_examples=20
)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci")
    # Hypothesis caches what it reads of the source (.hypothesis/constants) in the working
    # directory: a directory of this process's own instead, never the checkout
    if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
        storage = tempfile.mkdtemp(prefix="charter-hypothesis-")
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = storage
        config.add_cleanup(lambda: _forget_storage(storage))


def _forget_storage(storage: str) -> None:
    shutil.rmtree(storage, ignore_errors=True)
    os.environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)


@pytest.fixture(scope="session", autouse=True)
def _own_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Packs compiled with the default cache go to a directory of this worker's session, never
    to the user's cache (another run, another worker or the developer's own)."""
    cache = tmp_path_factory.mktemp("charter-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHARTER_CACHE_DIR", str(cache))
        yield cache


@pytest.fixture(scope="session")
def registry() -> Registry:
    """The installed plugins' registry (no plugin may report a problem)."""
    return installed_registry()


@pytest.fixture(scope="session")
def shipped_packs() -> Mapping[str, CompiledPack]:
    """finance, ecommerce and medical from ``domains/``, each compiled once per worker, when
    a test first asks for it."""
    return ShippedPacks()


@pytest.fixture
def charter(capsys: pytest.CaptureFixture[str]) -> RunCharter:
    """``charter("memory", "list", ...)`` → ``Run(code, out, err)``, in-process."""
    return runner(capsys)
