"""Load and compile a pack directory, through the disk cache."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from charter.compile.cache import PackCache, default_cache_dir
from charter.compile.compiled import CompiledPack
from charter.compile.stages import compile_pack
from charter.diagnostics import Diagnostic
from charter.pack.loader import load_pack
from charter.registry import Registry

_UNSET = Path("\0unset")


def compile_path(
    path: str | Path,
    registry: Registry,
    *,
    cache_dir: Path | None = _UNSET,
    named_packs: Mapping[str, Path] | None = None,
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    """Load and compile the pack at ``path``; every problem comes back as a Diagnostic.

    A cached compilation is used when no source file changed (``cache_dir=None`` disables
    the cache; by default it is ``default_cache_dir()``).
    """
    root = Path(path).resolve()
    directory = default_cache_dir() if cache_dir is _UNSET else cache_dir
    cache = PackCache(directory, registry) if directory is not None else None
    if cache is not None and (hit := cache.get(root)) is not None:
        return hit
    # packs that plugins install are addressable by name in `extends:`
    named = {**registry.packs, **(named_packs or {})}
    source, diagnostics = load_pack(root, installed_plugins=registry.plugins, named_packs=named)
    if source is None:
        return None, diagnostics
    pack, more = compile_pack(source, registry)
    diagnostics = diagnostics + more
    if pack is not None and any(d.is_error for d in diagnostics):
        pack = None
    if pack is not None and cache is not None:
        cache.put(root, pack, diagnostics, [Path(p) for p, _ in source.files])
    return pack, diagnostics
