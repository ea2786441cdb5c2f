"""The engine's fast path: each rule's ``when`` and ``check`` as one generated Python function.

The closures of ``charter.compile.build`` stay what explains a failure (they record evidence);
this module turns a rule into straight-line code for the common case, where only the outcome is
wanted: the loops over items, the item predicates and the literal tests inline, each extractor's
items fetched from the per-text cache once. On the finance pack it halves the rules' own time.

Generated from the checked AST, never from the rule text, and every name the code uses is bound
in its namespace (no builtins beyond ``type`` and ``None``), so nothing of the pack's text
reaches the generated source except through ``repr`` of constants. Nodes without an inline
form call the closure the Builder made for them: the two paths agree by construction, and
``tests/unit/compile/test_codegen.py`` checks that they do on random texts.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any, Literal

from charter.compile.build import Builder
from charter.compile.env import Env
from charter.compile.primitives import compile_regex
from charter.contracts.rules import as_decimal
from charter.dsl import ast as A

Outcome = Literal["pass", "fail", "skip"]
RuleFn = Callable[[Env], Outcome]
# columns of indentation the generated code may reach; Python allows 100 levels (400 columns)
_MAX_INDENT = 240
_PY_CMP = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Gen:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.ns: dict[str, Any] = {"Decimal": Decimal, "as_decimal": as_decimal}
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def bind(self, value: Any, prefix: str = "_k") -> str:
        name = self.fresh(prefix)
        self.ns[name] = value
        return name

    # ---- subjects ----------------------------------------------------------------------------

    def text(self, path: A.Path, out: list[str], ind: str) -> tuple[str, str]:
        """(key, name of a local holding the subject's text), emitting the assignment."""
        key, text_of = self.b.subject(path)
        var = self.fresh("tx")
        root = path.root.text
        if root == "output":
            out.append(f"{ind}{var} = env.output")
        elif root == "input":
            out.append(f"{ind}{var} = env.input")
        else:
            out.append(f"{ind}{var} = {self.bind(text_of, '_s')}(env)")
        return key, var

    def items(self, name: str, key: str, tx: str, out: list[str], ind: str) -> str:
        var = self.fresh("its")
        k = self.bind((name, key))
        out.append(f"{ind}{var} = env.cached_items.get({k})")
        out.append(f"{ind}if {var} is None:")
        out.append(f"{ind}    {var} = env.items({name!r}, {key!r}, {tx})")
        return var

    # ---- expressions: statements that leave a bool in ``t`` -----------------------------------

    def emit(self, node: A.Expr, t: str, out: list[str], ind: str, neg: bool = False) -> None:
        """``neg``: the node is under an odd number of ``not`` (a pattern that runs out of time
        takes the value that makes the whole expression not hold, as in the closures)."""
        wide = len(node.items) if isinstance(node, A.And | A.Or) else 1
        if len(ind) + 4 * wide > _MAX_INDENT:
            # Python refuses deeper blocks: a long junction or deep nesting runs as the closure
            out.append(f"{ind}{t} = {self.bind(self.b.expr(node, neg), '_c')}(env)")
        elif isinstance(node, A.And | A.Or):
            self._junction(node, t, out, ind, neg)
        elif isinstance(node, A.Not):
            self.emit(node.item, t, out, ind, not neg)
            out.append(f"{ind}{t} = not {t}")
        elif isinstance(node, A.Contains) and not node.unless:
            key, tx = self.text(node.subject, out, ind)
            hits = self.fresh("h")
            out.append(f"{ind}{hits} = env.hits({key!r}, {tx})")
            ids = [str(self.b.ids[term]) for term in node.terms.values]
            joiner = " and " if node.mode == "all" else " or "
            out.append(f"{ind}{t} = " + joiner.join(f"{i} in {hits}" for i in ids))
        elif isinstance(node, A.Matches):
            key, tx = self.text(node.subject, out, ind)
            pattern = self.bind(compile_regex(node.regex), "_re")
            out.append(f"{ind}{t} = {pattern}.found({tx}, {neg})")
        elif isinstance(node, A.Mentions):
            self._mentions(node, t, out, ind)
        elif isinstance(node, A.Quantified):
            self._quantified(node, t, out, ind)
        else:  # comparisons, membership, plugin predicates, excused literals: the closure
            out.append(f"{ind}{t} = {self.bind(self.b.expr(node, neg), '_c')}(env)")

    def _junction(
        self, node: A.And | A.Or, t: str, out: list[str], ind: str, neg: bool = False
    ) -> None:
        """Short-circuit: each next operand only runs while the result is still undecided."""
        go_on = "if {t}:" if isinstance(node, A.And) else "if not {t}:"
        for depth, item in enumerate(node.items):
            here = ind + "    " * depth
            if depth:
                out.append(ind + "    " * (depth - 1) + go_on.format(t=t))
            self.emit(item, t, out, here, neg)

    def _mentions(self, node: A.Mentions, t: str, out: list[str], ind: str) -> None:
        key, tx = self.text(node.subject, out, ind)
        its = self.items(node.extractor.text, key, tx, out, ind)
        if node.near is None:
            out.append(f"{ind}{t} = bool({its})")
            return
        near = self.bind(self.b.adjacent("near", node.near.target, node.near.within, key), "_n")
        it = self.fresh("it")
        out.append(f"{ind}{t} = False")
        out.append(f"{ind}for {it} in {its}:")
        out.append(f"{ind}    if {near}(env, {it}, {tx}, {key!r}):")
        out.append(f"{ind}        {t} = True")
        out.append(f"{ind}        break")

    def _quantified(self, node: A.Quantified, t: str, out: list[str], ind: str) -> None:
        key, tx = self.text(node.subject, out, ind)
        its = self.items(node.extractor.text, key, tx, out, ind)
        it = self.fresh("it")
        prelude: list[str] = []
        name = node.extractor.text
        cond = self.item(node.pred, it, key, tx, name, prelude, ind + "    ")
        # every / no: true unless an item decides otherwise; some: false unless one does
        empty = node.quant != "some"
        out.append(f"{ind}{t} = {empty}")
        out.append(f"{ind}if {its}:")
        out.extend(prelude)
        out.append(f"{ind}    for {it} in {its}:")
        test = f"not ({cond})" if node.quant == "every" else cond
        out.append(f"{ind}        if {test}:")
        out.append(f"{ind}            {t} = {not empty}")
        out.append(f"{ind}            break")

    # ---- item predicates: one expression over the item ------------------------------------------

    def item(
        self,
        node: A.ItemPred,
        it: str,
        key: str,
        tx: str,
        ext: str,
        prelude: list[str],
        ind: str,
    ) -> str:
        """An expression over the item ``it`` of extractor ``ext``; what it needs computed once
        per evaluation (a twin's values, a ground's items) goes into ``prelude``."""
        if isinstance(node, A.IAnd | A.IOr):
            op = " and " if isinstance(node, A.IAnd) else " or "
            parts = (self.item(i, it, key, tx, ext, prelude, ind) for i in node.items)
            return "(" + op.join(parts) + ")"
        if isinstance(node, A.INot):
            return f"(not {self.item(node.item, it, key, tx, ext, prelude, ind)})"
        if isinstance(node, A.IFound):
            grounds = self.fresh("g")
            where = node.ground.dotted()
            k = self.bind((ext, where))
            value = self.bind(self.b.raw(node.ground), "_s")
            prelude.append(f"{ind}{grounds} = env.cached_grounds.get({k})")
            prelude.append(f"{ind}if {grounds} is None:")
            prelude.append(f"{ind}    {grounds} = env.grounds({ext!r}, {where!r}, {value}(env))")
            return f"{grounds}.has({it})"
        if isinstance(node, A.ITwin):
            values = self.fresh("vals")
            k = self.bind((node.extractor.text, key))
            prelude.append(f"{ind}{values} = env.cached_values.get({k})")
            prelude.append(f"{ind}if {values} is None:")
            name = node.extractor.text
            prelude.append(f"{ind}    {values} = env.values({name!r}, {key!r}, {tx})")
            v, d = self.fresh("_v"), self.fresh("_d")
            return (
                f"({v} in {values} if type({v} := {it}.value) is Decimal else "
                f"(({d} := as_decimal({v})) is not None and {d} in {values}))"
            )
        if isinstance(node, A.IUnit):
            if node.units is None:
                return f"({it}.unit is not None)"
            return f"({it}.unit in {self.bind(frozenset(node.units.values))})"
        if isinstance(node, A.IDecimals):
            op = _PY_CMP[node.op]
            return f"({it}.decimals is not None and {it}.decimals {op} {int(node.count)})"
        if isinstance(node, A.IMatches):
            pattern = self.bind(compile_regex(node.regex), "_re")
            return f"{pattern}.found({it}.text, False)"
        fn = self.bind(self.b.item(node, key, ext), "_i")  # value comparisons, adjacency
        return f"{fn}(env, {it}, {tx}, {key!r})"


def rule_function(rule_id: str, when: A.Expr | None, check: A.Expr, builder: Builder) -> RuleFn:
    """``env -> "skip" | "pass" | "fail"`` for one rule, as generated code."""
    gen = _Gen(builder)
    body: list[str] = []
    if when is not None:
        gen.emit(when, "w", body, "    ")
        body.append("    if not w:")
        body.append("        return 'skip'")
    gen.emit(check, "t", body, "    ")
    body.append("    return 'pass' if t else 'fail'")
    source = "def rule(env):\n" + "\n".join(body) + "\n"
    code = compile(source, f"<rule {rule_id}>", "exec")
    namespace: dict[str, Any] = {"__builtins__": {"type": type, "bool": bool}, **gen.ns}
    exec(code, namespace)  # the source is generated from the AST: see the module docstring
    fn: RuleFn = namespace["rule"]
    fn.__doc__ = source  # what ran, for debugging a rule: print(fn.__doc__)
    return fn
