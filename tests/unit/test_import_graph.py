"""The import graph has one direction and no cycles (docs/architecture.md).

import-linter's layers contract (pyproject.toml) forbids upward imports; these tests add what a
contract cannot say: that every package of charter is placed in a layer (a new package must be
given its place), and that no two modules import each other through any chain, including imports
made inside functions (a cycle hidden behind a function-level import is still a cycle; only
``if TYPE_CHECKING:`` imports are left out, as they never run).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("charter", exclude_type_checking_imports=True, cache_dir=None)


def _top(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _edges(graph: grimp.ImportGraph) -> Iterator[tuple[str, str]]:
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            yield module, imported


def test_every_package_has_a_layer(graph: grimp.ImportGraph) -> None:
    placed = set().union(*_layers())
    tops = {_top(m) for m in graph.modules} - {"charter"}
    assert sorted(tops - placed) == []
    assert sorted(placed - tops) == []


def test_no_import_points_upward_or_sideways(graph: grimp.ImportGraph) -> None:
    rank = {name: i for i, layer in enumerate(_layers()) for name in layer}
    wrong = [
        f"{module} -> {imported}"
        for module, imported in _edges(graph)
        if module != "charter"  # the package's facade re-exports names from every layer
        and _top(module) != _top(imported)
        and rank[_top(module)] >= rank[_top(imported)]
    ]
    assert wrong == []


def _cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(edges) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(edges) == []
