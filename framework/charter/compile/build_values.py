"""Subjects and values of the DSL as closures: the base the ``Builder`` of
``charter.compile.build`` stands on.

What a path reads (the output, the input, a ``context``/``goal``/``memory`` field, a pack
constant) and what a value expression computes (``len``, ``count``, arithmetic) are the leaves
both the expression closures and the item predicates (``charter.compile.build_items``) read;
they hold no polarity and record no evidence, so they live apart from both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from charter.compile.env import Env, lookup
from charter.compile.primitives import normalise
from charter.contracts.rules import Predicate, as_decimal
from charter.dsl import ast as A

ValueFn = Callable[[Env], Any]
TextFn = Callable[[Env], str]


class ValueBuilder:
    """The literal ids, pack constants and predicates a build reads, and the closures of
    subjects and values."""

    def __init__(
        self,
        literal_ids: Mapping[str, int],
        constants: Mapping[str, Any],
        predicates: Mapping[str, Predicate],
    ) -> None:
        self.ids = literal_ids
        self.constants = constants
        self.predicates = predicates

    # ---- subjects and values ----------------------------------------------------------------

    def subject(self, path: A.Path) -> tuple[str, TextFn]:
        root = path.root.text
        if root == "output":
            return "output", lambda env: env.output
        if root == "input":
            return "input", lambda env: env.input
        parts = path.parts if root == "context" else (root, *path.parts)

        def text(env: Env) -> str:
            v = lookup(env.context, parts)
            return v if isinstance(v, str) else ("" if v is None else str(v))

        return path.dotted(), text

    def value(self, node: A.Value) -> ValueFn:
        if isinstance(node, A.Num | A.Str | A.Bool):
            const = node.value
            return lambda env: const
        if isinstance(node, A.Path):
            root = node.root.text
            if root == "pack":
                const = normalise(lookup(self.constants, node.parts))
                return lambda env: const
            if root in ("output", "input"):
                return self.subject(node)[1]
            parts = node.parts if root == "context" else (root, *node.parts)
            return lambda env: normalise(lookup(env.context, parts))
        if isinstance(node, A.Len):
            _, text = self.subject(node.subject)
            return lambda env: Decimal(len(text(env)))
        if isinstance(node, A.Count):
            key, text = self.subject(node.subject)
            name = node.extractor.text
            return lambda env: Decimal(len(env.items(name, key, text(env))))
        if isinstance(node, A.Neg):
            inner = self.value(node.operand)

            def neg(env: Env) -> Any:
                v = as_decimal(inner(env))
                try:
                    return None if v is None else -v
                except ArithmeticError:
                    return None

            return neg
        if isinstance(node, A.Arith):
            left, right = self.value(node.left), self.value(node.right)
            sign = 1 if node.op == "+" else -1

            def arith(env: Env) -> Any:
                a, b = as_decimal(left(env)), as_decimal(right(env))
                if a is None or b is None:
                    return None
                try:
                    return a + sign * b
                except ArithmeticError:  # overflow or NaN: no value, like a missing one
                    return None

            return arith
        raise TypeError(f"not a value: {node!r}")

    def raw(self, path: A.Path) -> ValueFn:
        """A path's value as the turn gives it (lists and mappings included), for predicates."""
        root = path.root.text
        if root in ("output", "input"):
            return self.subject(path)[1]
        parts = path.parts if root == "context" else (root, *path.parts)
        return lambda env: lookup(env.context, parts)
