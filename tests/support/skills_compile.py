"""Packs of skill contracts written in a test, compiled, and their diagnostics compared as
plain values (``Diag``: code, severity, message, file:line:col relative to the pack, hint)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, sort_diagnostics

# an executing skill with a constraint: the actions and stages tests' contract
CONTRACT = """\
name: pay
description: 转账
effect: execute
input_schema:
  type: object
  required: [payee]
  additionalProperties: false
  properties:
    payee: {type: string}
    half: {enum: [上午, 下午]}
output_schema:
  type: object
  required: [status, summary]
  properties:
    status: {enum: [done, rejected]}
    summary: {type: string}
constraints:
  - check: args.payee != "黑名单" or args.half != "下午"
    message: 不能办理
    asks: [half]
"""

PACK = "name: sk\nversion: 0.1.0\nthresholds:\n  uncertainty: 0.65\n"


class Impl:
    def __init__(self, name: str) -> None:
        self.name = name
        self.description = name

    def __call__(self, args: Mapping[str, object]) -> object:
        return {"results": []}


def with_skills(registry: Registry, *names: str) -> Registry:
    return replace(registry, skills={n: Impl(n) for n in names})


def write_pack(root: Path, files: Mapping[str, str]) -> Path:
    files = {"pack.yaml": PACK, **files}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@dataclass(frozen=True)
class Diag:
    code: str
    severity: str
    message: str
    where: str  # file:line:col, relative to the pack
    hint: str


def diags_of(root: Path, diags: list[Diagnostic]) -> list[Diag]:
    prefix = str(root.resolve()) + "/"
    return [
        Diag(
            d.code,
            d.severity.value,
            d.message,
            f"{d.location.path.removeprefix(prefix)}:{d.location.line}:{d.location.col}",
            d.hint,
        )
        for d in sort_diagnostics(diags)
    ]


def compile_files(
    tmp_path: Path, registry: Registry, files: Mapping[str, str]
) -> tuple[CompiledPack | None, list[Diag]]:
    root = write_pack(tmp_path / "pack", files)
    pack, diags = compile_path(root, registry, cache_dir=None)
    return pack, diags_of(root, diags)
