"""Fixtures of the unit tests: compile a rules.yaml text into a pack or an Engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from charter.reflect.engine import Engine
from tests.support.rules import PACK_YAML, CompileText


@pytest.fixture
def compile_rules(tmp_path: Path, registry: Registry) -> CompileText:
    def compile_(
        rules_yaml: str, pack_yaml: str = PACK_YAML
    ) -> tuple[CompiledPack | None, list[Diagnostic]]:
        pack = tmp_path / "pack"
        pack.mkdir(exist_ok=True)
        (pack / "pack.yaml").write_text(pack_yaml, encoding="utf-8")
        (pack / "rules.yaml").write_text(rules_yaml, encoding="utf-8")
        return compile_path(pack, registry, cache_dir=None)

    return compile_


@pytest.fixture
def engine_for(compile_rules: CompileText, registry: Registry) -> Callable[[str], Engine]:
    def make(rules_yaml: str) -> Engine:
        pack, diags = compile_rules(rules_yaml)
        assert pack is not None, [d.headline() for d in diags]
        return Engine(pack, registry)

    return make
