"""Compiled packs cached on disk, keyed by the hash of every source file they were built from.

An index entry per (pack directory, registry, Charter version and code) lists the files a
compilation read with their content hashes and the YAML files present in each pack directory; a
lookup re-hashes those files (cheap) and loads the pickled ``CompiledPack`` only when nothing
changed, so an edited, added or removed file always means a fresh compilation; so does edited
Charter code (``code_stamp``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path

from charter._version import __version__
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic


def default_cache_dir() -> Path | None:
    """``CHARTER_CACHE_DIR``, else the XDG cache; ``CHARTER_NO_CACHE=1`` turns caching off."""
    if os.environ.get("CHARTER_NO_CACHE"):
        return None
    env = os.environ.get("CHARTER_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "charter"


_COMPILING = ("compile", "dsl", "pack", "contracts", "text")


@functools.cache
def code_stamp() -> str:
    """The Charter code a compilation runs: each module's path, size and modification time
    (read once per process). An edited checkout compiles afresh instead of reading a pack
    compiled by the code before the edit; an installed wheel's stamp never changes."""
    package = Path(__file__).resolve().parents[1]
    rows = []
    # the layers a compilation runs (docs/architecture.md): what a pack compiles to
    paths = [p for layer in _COMPILING for p in (package / layer).rglob("*.py")]
    for path in sorted(paths):
        try:
            st = path.stat()
        except OSError:
            continue
        rows.append(f"{path.relative_to(package)} {st.st_size} {st.st_mtime_ns}")
    return _sha("\n".join(rows).encode())


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _listing(directory: Path) -> list[str]:
    try:
        return sorted(
            str(p.relative_to(directory)) for p in directory.rglob("*.yaml") if p.is_file()
        )
    except OSError:
        return []


class PackCache:
    def __init__(self, directory: Path, registry: Registry) -> None:
        self.directory = directory
        self.registry = registry

    def _index(self, root: Path) -> Path:
        key = _sha(
            f"{root.resolve()}\n{self.registry.fingerprint()}\n{__version__}\n{code_stamp()}".encode()
        )
        return self.directory / "index" / f"{key[:32]}.json"

    def get(self, root: Path) -> tuple[CompiledPack, list[Diagnostic]] | None:
        index = self._index(root)
        try:
            entry = json.loads(index.read_text(encoding="utf-8"))
            for path, digest in entry["files"].items():
                if _sha(Path(path).read_bytes()) != digest:
                    return None
            for directory, listing in entry["dirs"].items():
                if _listing(Path(directory)) != listing:
                    return None
            blob = (self.directory / "packs" / f"{entry['digest']}.pickle").read_bytes()
            pack, warnings = pickle.loads(blob)
        except (
            OSError,
            ValueError,
            KeyError,
            TypeError,
            pickle.UnpicklingError,
            EOFError,
            AttributeError,
            ImportError,
        ):
            return None
        if not isinstance(pack, CompiledPack):
            return None
        return pack, list(warnings)

    def put(
        self,
        root: Path,
        pack: CompiledPack,
        warnings: list[Diagnostic],
        files: list[Path],
    ) -> None:
        """Best effort: a cache that cannot be written only costs speed."""
        try:
            entry = {
                "digest": pack.digest,
                "files": {str(f.resolve()): _sha(f.read_bytes()) for f in files},
                "dirs": {str(f.resolve().parent): _listing(f.resolve().parent) for f in files},
            }
            self._atomic_write(
                self.directory / "packs" / f"{pack.digest}.pickle",
                pickle.dumps((pack, tuple(warnings)), protocol=pickle.HIGHEST_PROTOCOL),
            )
            self._atomic_write(self._index(root), json.dumps(entry).encode())
        except OSError:
            return

    @staticmethod
    def _atomic_write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
