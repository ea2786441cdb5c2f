"""The last compile stage: a checked AST becomes plain Python closures.

Closures are built from the AST (not from text), so a compiled pack loaded from the disk cache
rebuilds them without the parser. Each leaf knows its polarity (under an odd number of ``not``)
so that, when a rule fails and the engine asks for evidence, only what made it fail is recorded:
the banned term found, the amount without a twin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from charter.compile.env import Env, lookup
from charter.compile.literals import is_ascii_alnum
from charter.compile.primitives import _CMP, _excuser, compare, compile_regex, normalise
from charter.dsl import ast as A
from charter.patterns import PatternTimeout
from charter.protocols import Item, Predicate, as_decimal

Test = Callable[[Env], bool]
ValueFn = Callable[[Env], Any]
TextFn = Callable[[Env], str]
ItemTest = Callable[[Env, Item, str, str], bool]

CONTEXT_ROOTS = ("context", "goal", "skill", "memory", "args")
DEFAULT_NEAR = 20


class Builder:
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

    def raw(self, path: A.Path) -> ValueFn:
        """A path's value as the turn gives it (lists and mappings included), for predicates."""
        root = path.root.text
        if root in ("output", "input"):
            return self.subject(path)[1]
        parts = path.parts if root == "context" else (root, *path.parts)
        return lambda env: lookup(env.context, parts)

    # ---- item predicates --------------------------------------------------------------------

    def item(self, node: A.ItemPred, key: str, extractor: str) -> ItemTest:
        """The test of one item of ``extractor`` found in the subject ``key``."""
        if isinstance(node, A.IAnd):
            parts = tuple(self.item(i, key, extractor) for i in node.items)
            if len(parts) == 2:
                a, b = parts
                return lambda env, it, text, k: a(env, it, text, k) and b(env, it, text, k)
            return lambda env, it, text, k: all(p(env, it, text, k) for p in parts)
        if isinstance(node, A.IOr):
            parts = tuple(self.item(i, key, extractor) for i in node.items)
            if len(parts) == 2:
                a, b = parts
                return lambda env, it, text, k: a(env, it, text, k) or b(env, it, text, k)
            return lambda env, it, text, k: any(p(env, it, text, k) for p in parts)
        if isinstance(node, A.INot):
            inner = self.item(node.item, key, extractor)
            return lambda env, it, text, k: not inner(env, it, text, k)
        if isinstance(node, A.IMatches):
            pattern = compile_regex(node.regex)
            # an item's pattern that runs out of time does not match the item
            return lambda env, it, text, k: pattern.found(it.text, False)
        if isinstance(node, A.ITwin):
            twin = node.extractor.text

            def has_twin(env: Env, it: Item, text: str, k: str) -> bool:
                values = env.cached_values.get((twin, k))
                if values is None:
                    values = env.values(twin, k, text)
                v = it.value
                return (
                    v in values
                    if type(v) is Decimal
                    else ((d := as_decimal(v)) is not None and d in values)
                )

            return has_twin
        if isinstance(node, A.IUnit):
            units = frozenset(node.units.values) if node.units else None
            if units is None:
                return lambda env, it, text, k: it.unit is not None
            return lambda env, it, text, k: it.unit in units
        if isinstance(node, A.IDecimals):
            cmp, n = _CMP[node.op], node.count
            return lambda env, it, text, k: it.decimals is not None and cmp(it.decimals, n)
        if isinstance(node, A.IValue):
            cmp_op, operand = node.op, self.value(node.operand)
            return lambda env, it, text, k: compare(cmp_op, as_decimal(it.value), operand(env))
        if isinstance(node, A.IAdjacent):
            return self.adjacent(node.side, node.target, node.within, key)
        if isinstance(node, A.IFound):
            return self.found(node.ground, extractor)
        raise TypeError(f"not an item predicate: {node!r}")

    def found(self, ground: A.Path, extractor: str) -> ItemTest:
        """``found in P``: the extractor finds an item of equal value in P's texts (run once
        per evaluation and text, see ``Env.grounds``)."""
        where, value = ground.dotted(), self.raw(ground)
        cache_key = (extractor, where)

        def found(env: Env, it: Item, text: str, k: str) -> bool:
            grounds = env.cached_grounds.get(cache_key)
            if grounds is None:
                grounds = env.grounds(extractor, where, value(env))
            return grounds.has(it)

        return found

    def adjacent(self, side: str, target: A.Target, within: int | None, key: str) -> ItemTest:
        """Is the target found right after / right before / around the item?

        ``followed by`` and ``preceded by`` skip white space next to the item, then allow
        ``within`` more characters (default 0); ``near`` looks ``within`` characters (default
        20) on both sides.
        """
        n = within if within is not None else (DEFAULT_NEAR if side == "near" else 0)

        def window(text: str, it: Item) -> tuple[int, int]:
            if side == "followed":
                lo = it.end
                while lo < len(text) and text[lo].isspace():
                    lo += 1
                return lo, lo + n
            if side == "preceded":
                hi = it.start
                while hi > 0 and text[hi - 1].isspace():
                    hi -= 1
                return hi - n, hi
            return it.start - n, it.end + n

        if isinstance(target, A.Name):
            other = target.text

            def near_items(env: Env, it: Item, text: str, k: str) -> bool:
                lo, hi = window(text, it)
                for o in env.items(other, k, text):
                    if o is it:
                        continue
                    if side == "followed" and lo <= o.start <= hi:
                        return True
                    if side == "preceded" and lo <= o.end <= hi:
                        return True
                    if side == "near" and o.start >= lo and o.end <= hi:
                        return True
                return False

            return near_items
        ids = tuple(self.ids[t] for t in target.values)
        plain = tuple(
            t for t in target.values if not (is_ascii_alnum(t[0]) or is_ascii_alnum(t[-1]))
        )
        if len(plain) == len(target.values):
            # CJK-edged terms need no boundary check, so a substring test of the window is
            # exact and much cheaper than walking the hit lists
            terms = plain

            def near_plain(env: Env, it: Item, text: str, k: str) -> bool:
                lo, hi = window(text, it)
                lo = max(lo, 0)
                if side == "near":
                    w = text[lo:hi]
                    for t in terms:
                        if t in w:
                            return True
                    return False
                # str.startswith / endswith take a tuple of candidates
                if side == "followed":
                    for i in range(lo, hi + 1):
                        if text.startswith(terms, i):
                            return True
                    return False
                for i in range(lo, hi + 1):
                    if text.endswith(terms, 0, i):
                        return True
                return False

            return near_plain

        def near_terms(env: Env, it: Item, text: str, k: str) -> bool:
            lo, hi = window(text, it)
            hits = env.hits(k, text)
            for lid in ids:
                for s, e in hits.get(lid, ()):
                    if side == "followed" and lo <= s <= hi:
                        return True
                    if side == "preceded" and lo <= e <= hi:
                        return True
                    if side == "near" and s >= lo and e <= hi:
                        return True
            return False

        return near_terms
