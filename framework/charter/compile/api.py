"""Load and compile a pack directory, through the disk cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from charter.compile.cache import PackCache, default_cache_dir
from charter.compile.compiled import CompiledPack
from charter.compile.consequences import fold_unparsed
from charter.compile.stages import STAGES, Parsed, Pipeline
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location
from charter.pack.loader import load_pack
from charter.pack.model import PackSource

_UNSET = Path("\0unset")


def _inside(where: Location, span: Location) -> bool:
    if where.path != span.path or not where.line:
        return False
    return (span.line, span.col) <= (where.line, where.col) <= (span.end_line, span.end_col)


def _sound(parsed: Sequence[Parsed], diagnostics: Sequence[Diagnostic]) -> list[Parsed]:
    """The rules no error was reported inside."""
    errors = [d.location for d in diagnostics if d.is_error]
    return [p for p in parsed if not any(_inside(e, p.src.at.loc()) for e in errors)]


class _Pipeline(Pipeline):
    """The compile stages, with the whole-rule analysis (CH110, CH111) over sound rules only:
    what it would conclude from a rule with an error (an empty string, which lies inside every
    text, "clashes" with every literal) follows from that error and is not another problem."""

    def analyze(self) -> None:
        everything = self.parsed
        self.parsed = _sound(everything, self.diagnostics)
        try:
            super().analyze()
        finally:
            self.parsed = everything


def compile_pack(
    source: PackSource, registry: Registry, *, vectors_dir: Path | None = None
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    """``stages.compile_pack`` through ``_Pipeline``: every stage, and the pack built only
    when no stage reported an error; the examples' vectors kept in ``vectors_dir``."""
    pipe = _Pipeline(source, registry, vectors_dir=vectors_dir)
    for stage in STAGES[:-1]:
        getattr(pipe, stage)()
    if any(d.is_error for d in pipe.diagnostics):
        return None, pipe.diagnostics
    return pipe.build(), pipe.diagnostics


def compile_path(
    path: str | Path,
    registry: Registry,
    *,
    cache_dir: Path | None = _UNSET,
    named_packs: Mapping[str, Path] | None = None,
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    """Load and compile the pack at ``path``; every problem comes back as a Diagnostic.

    A cached compilation is used when no source file changed (``cache_dir=None`` disables
    the cache; by default it is ``default_cache_dir()``). The intents' examples are embedded
    once per text and model, and kept in the same directory (``charter.compile.vectors``).
    """
    root = Path(path).resolve()
    directory = default_cache_dir() if cache_dir is _UNSET else cache_dir
    cache = PackCache(directory, registry) if directory is not None else None
    if cache is not None and (hit := cache.get(root)) is not None:
        return hit
    # packs that plugins install are addressable by name in `extends:`
    named = {**registry.packs, **(named_packs or {})}
    source, diagnostics = load_pack(
        root,
        installed_plugins=registry.plugins,
        named_packs=named,
        unloaded_plugins=registry.unloaded,
    )
    if source is None:
        return None, diagnostics
    pack, more = compile_pack(source, registry, vectors_dir=directory)
    diagnostics = fold_unparsed(source.unparsed, diagnostics + more)
    if pack is not None and any(d.is_error for d in diagnostics):
        pack = None
    if pack is not None and cache is not None:
        cache.put(root, pack, diagnostics, [Path(p) for p, _ in source.files])
    return pack, diagnostics
