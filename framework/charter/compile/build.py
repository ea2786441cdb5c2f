"""The last compile stage: a checked AST becomes plain Python closures.

Closures are built from the AST (not from text), so a compiled pack loaded from the disk cache
rebuilds them without the parser. Each leaf knows its polarity (under an odd number of ``not``)
so that, when a rule fails and the engine asks for evidence, only what made it fail is recorded:
the banned term found, the amount without a twin.

This module holds the expressions (``and``/``or``/``not``, ``contains``, ``matches``,
``mentions``, quantifiers, comparisons, predicate calls); the ``Builder`` inherits what they
read from ``charter.compile.build_items`` (the test of one found item, adjacency) and
``charter.compile.build_values`` (subjects and values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from charter.compile.build_items import ItemBuilder
from charter.compile.env import Env, lookup
from charter.compile.primitives import _excuser, compare, compile_regex
from charter.dsl import ast as A
from charter.text.patterns import PatternTimeout

Test = Callable[[Env], bool]

CONTEXT_ROOTS = ("context", "goal", "skill", "memory", "args")


class Builder(ItemBuilder):
    """A checked AST's expressions as closures over an ``Env``."""

    # ---- expressions ------------------------------------------------------------------------

    def expr(self, node: A.Expr, negated: bool = False) -> Test:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node, negated)  # type: ignore[no-any-return]

    # explicit loops and two-operand lambdas: a generator inside all()/any() costs more than
    # the tests it runs on the hot path

    def _and(self, node: A.And, negated: bool) -> Test:
        parts = tuple(self.expr(i, negated) for i in node.items)
        if len(parts) == 2:
            a, b = parts
            return lambda env: a(env) and b(env)

        def test(env: Env) -> bool:
            for p in parts:
                if not p(env):
                    return False
            return True

        return test

    def _or(self, node: A.Or, negated: bool) -> Test:
        parts = tuple(self.expr(i, negated) for i in node.items)
        if len(parts) == 2:
            a, b = parts
            return lambda env: a(env) or b(env)

        def test(env: Env) -> bool:
            for p in parts:
                if p(env):
                    return True
            return False

        return test

    def _not(self, node: A.Not, negated: bool) -> Test:
        inner = self.expr(node.item, not negated)
        return lambda env: not inner(env)

    def _contains(self, node: A.Contains, negated: bool) -> Test:
        key, text_of = self.subject(node.subject)
        ids = tuple(self.ids[t] for t in node.terms.values)
        excuse = _excuser(node.unless)
        mode = node.mode

        def occurrences(env: Env, text: str, lid: int) -> list[tuple[int, int]]:
            occ = env.hits(key, text).get(lid)
            if not occ or excuse is None:
                return occ or []
            return [o for o in occ if not excuse(text, o)]

        def fast(env: Env) -> bool:
            text = text_of(env)
            hits = env.hits(key, text)
            for lid in ids:
                occ = hits.get(lid)
                if occ:
                    if excuse is None:
                        return True
                    for o in occ:
                        if not excuse(text, o):
                            return True
            return False

        def test(env: Env) -> bool:
            if mode != "all" and not env.collect:
                return fast(env)
            text = text_of(env)
            if mode == "all":
                found = [occurrences(env, text, lid) for lid in ids]
                result = all(found)
            else:
                found = []
                result = False
                for lid in ids:
                    occ = occurrences(env, text, lid)
                    if occ:
                        found.append(occ)
                        result = True
                        if not env.collect:
                            break
            # a failed `contains all` is about the missing strings, which have no position
            if env.collect and result == negated and key == "output" and (negated or mode != "all"):
                for occ in found:
                    env.spans.extend(occ)
            return result

        return test

    def _matches(self, node: A.Matches, negated: bool) -> Test:
        key, text_of = self.subject(node.subject)
        pattern = compile_regex(node.regex)

        def test(env: Env) -> bool:
            try:
                m = pattern.search(text_of(env))
            except PatternTimeout:
                # out of time: the value that makes the enclosing expression not hold (a
                # check fails, a when or a trigger does not apply), whatever the `not`s above
                return negated
            if env.collect and m is not None and negated and key == "output":
                env.spans.append(m.span())
            return m is not None

        return test

    def _mentions(self, node: A.Mentions, negated: bool) -> Test:
        key, text_of = self.subject(node.subject)
        name = node.extractor.text
        near = self.adjacent("near", node.near.target, node.near.within, key) if node.near else None

        cache_key = (name, key)

        def test(env: Env) -> bool:
            text = text_of(env)
            items = env.cached_items.get(cache_key)
            if items is None:
                items = env.items(name, key, text)
            if near is not None:
                items = tuple(i for i in items if near(env, i, text, key))
            if env.collect and items and negated and key == "output":
                env.witnesses.extend(items)
                env.spans.extend((i.start, i.end) for i in items)
            return bool(items)

        return test

    def _quantified(self, node: A.Quantified, negated: bool) -> Test:
        key, text_of = self.subject(node.subject)
        name = node.extractor.text
        pred = self.item(node.pred, key, name)
        quant = node.quant

        cache_key = (name, key)

        def test(env: Env) -> bool:
            text = text_of(env)
            items = env.cached_items.get(cache_key)
            if items is None:
                items = env.items(name, key, text)
            if not env.collect:
                if quant == "every":
                    for i in items:
                        if not pred(env, i, text, key):
                            return False
                    return True
                for i in items:
                    if pred(env, i, text, key):
                        return quant == "some"
                return quant == "no"
            sat = [i for i in items if pred(env, i, text, key)]
            unsat = [i for i in items if not pred(env, i, text, key)]
            result = (not unsat) if quant == "every" else bool(sat) if quant == "some" else not sat
            if result == negated and key == "output":
                blame = {
                    "every": unsat if not negated else items,
                    "some": sat,
                    "no": sat if not negated else [],
                }[quant]
                env.witnesses.extend(blame)
                env.spans.extend((i.start, i.end) for i in blame)
            return result

        return test

    def _compare(self, node: A.Compare, negated: bool) -> Test:
        left, right, op = self.value(node.left), self.value(node.right), node.op
        if isinstance(node.right, A.Bool) and op in ("==", "!="):
            # `context.flag == true`: only the boolean itself is equal to it
            const, equal = node.right.value, op == "=="
            return lambda env: (left(env) is const) is equal
        return lambda env: compare(op, left(env), right(env))

    def _member(self, node: A.Member, negated: bool) -> Test:
        value, terms = self.value(node.value), frozenset(node.terms.values)

        def test(env: Env) -> bool:
            v = value(env)
            return isinstance(v, str) and v in terms

        return test

    def _call(self, node: A.Call, negated: bool) -> Test:
        pred = self.predicates[node.name.text]
        subject = node.args[0]
        assert isinstance(subject, A.Path)
        _, text_of = self.subject(subject)
        args: list[Any] = []
        live: list[int] = []  # positions of `value` arguments, read from the turn each time
        for i, (a, kind) in enumerate(zip(node.args[1:], pred.params, strict=False)):
            if isinstance(a, A.Terms):
                args.append(a.values)
            elif isinstance(a, A.Regex):
                args.append(compile_regex(a))
            elif isinstance(a, A.Path) and a.root.text == "pack":
                args.append(lookup(self.constants, a.parts))
            elif isinstance(a, A.Path) and kind == "value":
                args.append(self.raw(a))
                live.append(i)
            elif isinstance(a, A.Path):
                args.append(a)  # a `name` argument: the word as written
            else:
                args.append(a.value)
        frozen = tuple(args)
        if not live:

            def fixed(env: Env) -> bool:
                try:
                    return bool(pred(text_of(env), *frozen))
                except PatternTimeout:  # a /pattern/ argument ran out of time: as `matches`
                    return negated

            return fixed

        def test(env: Env) -> bool:
            values = list(frozen)
            for i in live:
                values[i] = frozen[i](env)
            try:
                return bool(pred(text_of(env), *values))
            except PatternTimeout:
                return negated

        return test
