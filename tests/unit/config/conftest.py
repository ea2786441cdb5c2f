"""Every configuration test starts from a clean environment and an empty working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from charter.config import Config, load_config
from charter.diagnostics import Diagnostic
from tests.unit.config.helpers import Load


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("CHARTER_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def load(tmp_path: Path) -> Load:
    """``load(charter_toml=..., pyproject=..., **environ)`` in ``tmp_path``."""

    def load_(
        charter_toml: str | None = None, pyproject: str | None = None, **environ: str
    ) -> tuple[Config, list[Diagnostic]]:
        if charter_toml is not None:
            (tmp_path / "charter.toml").write_text(charter_toml, encoding="utf-8")
        if pyproject is not None:
            (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        return load_config(environ=environ)

    return load_
