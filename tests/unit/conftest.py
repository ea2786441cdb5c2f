"""Helpers shared by unit tests: compile a rules.yaml text into an Engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from charter.plugins.host import default_registry
from charter.reflect.engine import Engine
from tests.cli_run import RunCharter, runner

PACK_YAML = "name: unit\nversion: 0.1.0\n"


@pytest.fixture
def charter(capsys: pytest.CaptureFixture[str]) -> RunCharter:
    """``charter("memory", "list", ...)`` → ``Run(code, out, err)``."""
    return runner(capsys)


@pytest.fixture(scope="session")
def registry() -> Registry:
    reg, diags = default_registry()
    assert not diags, diags
    return reg


CompileText = Callable[[str], tuple[CompiledPack | None, list[Diagnostic]]]


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


def one_rule(check: str, *, when: str | None = None, on_fail: str = "retry") -> str:
    """A rules.yaml with a single rule ``r``; the expression is YAML-quoted safely."""
    import json

    lines = ["rules:", "  - id: r", "    describe: r", f"    check: {json.dumps(check)}"]
    if when is not None:
        lines.append(f"    when: {json.dumps(when)}")
    lines.append(f"    on_fail: {json.dumps(on_fail)}")
    return "\n".join(lines) + "\n"
