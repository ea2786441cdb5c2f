"""The plugin through the real plugin host: its entry point registers the ``llamacpp`` backend,
``charter plugins`` lists it, and registering it loads neither llama.cpp nor a model."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

import charter.plugins.host
from charter.contracts.models import LLMBackend
from charter.plugins.host import default_registry
from charter_llamacpp.plugin import BACKEND, LlamaCppBackend
from tests.support.cli import RunCharter


@pytest.fixture
def real_host(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> Iterator[None]:
    """The installed entry points, whatever the environment says about plugins."""
    for var in ("CHARTER_PLUGINS", "CHARTER_DISABLE_PLUGIN_AUTOLOAD", "CHARTER_PLUGIN_ERRORS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(str(tmp_path))  # no charter.toml here
    charter.plugins.host._HOSTS.clear()
    yield
    charter.plugins.host._HOSTS.clear()


@pytest.mark.usefixtures("real_host")
def test_registered_through_the_entry_point() -> None:
    registry, diags = default_registry()
    assert diags == ()
    assert registry.llm_backends["llamacpp"] is BACKEND
    assert isinstance(BACKEND, LLMBackend)
    assert isinstance(BACKEND, LlamaCppBackend) and BACKEND.name == "llamacpp"


@pytest.mark.usefixtures("real_host")
def test_charter_plugins_lists_it(charter: RunCharter) -> None:
    run = charter("plugins", "--format", "json")
    assert run.code == 0, run
    (entry,) = [p for p in json.loads(run.out) if p["name"] == "llamacpp"]
    assert entry == {
        "name": "llamacpp",
        "distribution": "charter-llamacpp",
        "version": "0.1.0",
        "status": "ok",
        "hooks": {"charter_register_llm_backends": ["llamacpp"]},
        "problems": [],
    }
    rows = [line.split() for line in charter("plugins").out.splitlines()]
    # column widths depend on every installed plugin: compare the cells
    assert [
        "llamacpp",
        "charter-llamacpp",
        "0.1.0",
        "ok",
        "charter_register_llm_backends",
        "llamacpp",
    ] in rows


def test_registration_is_cheap() -> None:
    code = (
        "import sys; from charter.plugins.host import default_registry; r, _ = default_registry(); "
        "assert 'llamacpp' in r.llm_backends; "
        "print(sorted(m for m in ('llama_cpp', 'numpy', 'charter_llamacpp.llm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.replace("'", '"'))
    assert "llama_cpp" not in loaded and "charter_llamacpp.llm" not in loaded
