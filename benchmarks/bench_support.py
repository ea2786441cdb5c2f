"""Shared set-up for the benchmarks: repository paths, the registry, the first-party packs,
and the ``Section`` a benchmark hands to another's report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack

REPO = Path(__file__).resolve().parent.parent
FINANCE = REPO / "domains" / "finance"


@dataclass(frozen=True)
class Section:
    """A part of the report someone else measures: lines to print, targets, JSON figures."""

    lines: list[str]
    targets: list[tuple[str, bool]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


def compile_path(
    path: Path, registry: Registry, cache_dir: Path | None
) -> tuple[CompiledPack | None, list[Diagnostic]]:
    """``charter.compile.api.compile_path``, imported on first use (the cold-compile timing
    starts before that import)."""
    from charter.compile.api import compile_path as compile_

    return compile_(path, registry, cache_dir=cache_dir)


def first_party_packs() -> list[Path]:
    """Every pack directory under ``domains/`` and ``rulesets/``, in a stable order."""
    return sorted(
        p.parent for top in ("domains", "rulesets") for p in (REPO / top).glob("*/pack.yaml")
    )


def load_registry() -> Registry:
    """The installed plugins' registry (built-ins and ``charter-zh``); any plugin problem stops
    the benchmark rather than timing a partial registry."""
    from charter.diagnostics import DiagnosticError
    from charter.plugins.host import default_registry

    registry, diagnostics = default_registry()
    if diagnostics:
        raise DiagnosticError(list(diagnostics))
    return registry
