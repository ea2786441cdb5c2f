"""A set of DSL expressions compiled once into one program, evaluated many times.

cel-python's idea: the runtime does not bind expressions itself. A ``Program`` holds the
closures of a set of expressions (a skill's constraints, a fallback protocol's conditions, the
deliverable checks of a goals file, the ``done:`` conditions of skill bindings), keyed as its
user wants, and the one literal table they share, so that a text is scanned once for all of
them; ``env`` builds the per-evaluation state the closures read.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from charter.compile.build import Builder, Test
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.compile.primitives import literals_of
from charter.contracts.registry import Registry
from charter.dsl import ast as A

K = TypeVar("K", bound=Hashable)


class Program(Generic[K]):
    """The compiled expressions of one set, by key, and their literal table."""

    __slots__ = ("extractors", "table", "tests")

    def __init__(
        self,
        exprs: Iterable[tuple[K, A.Expr]],
        registry: Registry,
        constants: Mapping[str, Any] | None = None,
        literals: Iterable[str] | None = None,
    ) -> None:
        """``literals``: the literal set when the compiler already collected it (a goals spec's
        ``literals``); by default the literals the expressions name."""
        pairs = list(exprs)
        if literals is None:
            literals = set().union(set(), *(literals_of(e) for _, e in pairs))
        self.table = LiteralTable(sorted(literals))
        builder = Builder(self.table.ids, constants or {}, registry.predicates)
        self.tests: dict[K, Test] = {key: builder.expr(expr) for key, expr in pairs}
        self.extractors = registry.extractors

    def __contains__(self, key: object) -> bool:
        return key in self.tests

    def __getitem__(self, key: K) -> Test:
        return self.tests[key]

    def get(self, key: K) -> Test | None:
        return self.tests.get(key)

    def env(
        self, output: str = "", input: str = "", context: Mapping[str, Any] | None = None
    ) -> Env:
        """The state one evaluation reads: the texts, the context, the extractors."""
        return Env(output, input, context or {}, self.table, self.extractors)
