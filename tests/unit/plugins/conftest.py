"""Fake entry points, so plugin-host tests control exactly which plugins are "installed"."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import charter.plugins.host
import charter.plugins.manager


@dataclass(frozen=True)
class FakeDist:
    name: str
    version: str


@dataclass(frozen=True)
class FakeEntryPoint:
    """Quacks like ``importlib.metadata.EntryPoint`` for what the host reads."""

    name: str
    plugin: Any  # returned by load(); an exception instance is raised instead
    dist: FakeDist

    def load(self) -> Any:
        if isinstance(self.plugin, BaseException):
            raise self.plugin
        return self.plugin


Install = Callable[..., None]


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """``install(("acme", plugin, "charter-acme", "1.0"), ...)``: these are the entry points."""
    charter.plugins.host._HOSTS.clear()
    for var in (
        "CHARTER_PLUGINS",
        "CHARTER_DISABLE_PLUGIN_AUTOLOAD",
        "CHARTER_PLUGIN_ERRORS",
        "CHARTER_TRACE_PLUGINS",
    ):
        monkeypatch.delenv(var, raising=False)

    def _install(*specs: tuple[str, Any, str, str]) -> None:
        eps = [FakeEntryPoint(n, p, FakeDist(d, v)) for n, p, d, v in specs]
        monkeypatch.setattr(charter.plugins.manager, "entry_points", lambda: eps)
        charter.plugins.host._HOSTS.clear()

    _install()
    yield _install
    charter.plugins.host._HOSTS.clear()
