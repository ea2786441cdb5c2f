"""Fixtures for the llama.cpp backend's tests: the real default model, assembled once per
session into a temporary cache, and the backend's LLMs over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SKIP_REASON = "llama-cpp-python is not installed (pip install llama-cpp-python): no model to run"


@pytest.fixture(scope="session")
def llama_cpp() -> Any:
    return pytest.importorskip("llama_cpp", reason=SKIP_REASON)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory, llama_cpp: Any) -> Iterator[Path]:
    """CHARTER_MODEL_CACHE for the session, holding the assembled default model."""
    from charter_llamacpp.model_cache import ensure_default_model

    cache = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHARTER_MODEL_CACHE", str(cache))
        ensure_default_model()
        yield cache


@pytest.fixture(scope="session")
def model_path(model_cache: Path) -> Path:
    return model_cache / "gemma-3-270m-q4_k_m.gguf"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "model_cache" in getattr(item, "fixturenames", ()):
            # slow: the bundled model assembled (about 250 MB) and loaded into llama.cpp
            item.add_marker(pytest.mark.slow)
