"""The shipped domain packs compiled once per test process.

Compiling a domain pack takes a few hundred milliseconds; dozens of test modules need the same
three. A ``CompiledPack`` is immutable, so one compiled copy serves every test of a process
(each xdist worker compiles its own). Compiled without the disk cache, so a test sees what
the compiler makes of the files on disk now.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from charter.plugins.host import default_registry
from tests.support.paths import DOMAINS, SHIPPED_PACKS


@functools.cache
def installed_registry() -> Registry:
    """The registry of the installed plugins; fails the test when a plugin has a problem."""
    reg, problems = default_registry()
    assert not problems, [d.headline() for d in problems]
    return reg


@functools.cache
def _compiled(name: str) -> tuple[CompiledPack, tuple[Diagnostic, ...]]:
    pack, diags = compile_path(DOMAINS / name, installed_registry(), cache_dir=None)
    assert pack is not None, [d.headline() for d in diags]
    return pack, tuple(diags)


def compiled_with_diagnostics(name: str) -> tuple[CompiledPack, list[Diagnostic]]:
    """``domains/<name>`` compiled with the installed plugins (once per process), and what
    the compiler said (a new list each time: the caller may keep it)."""
    pack, diags = _compiled(name)
    return pack, list(diags)


def shipped(name: str) -> CompiledPack:
    """``domains/<name>`` compiled (finance, ecommerce or medical)."""
    return _compiled(name)[0]


class ShippedPacks(Mapping[str, CompiledPack]):
    """finance, ecommerce and medical by name, each compiled when first asked for."""

    def __getitem__(self, name: str) -> CompiledPack:
        if name not in SHIPPED_PACKS:
            raise KeyError(name)
        return shipped(name)

    def __iter__(self) -> Iterator[str]:
        return iter(SHIPPED_PACKS)

    def __len__(self) -> int:
        return len(SHIPPED_PACKS)
