"""The Lark transformer from the parse tree to the frozen AST (``charter.dsl.ast``): string
unquoting, spans, whole-number arguments, and one method per grammar rule.

Only the parser imports this module (it imports lark).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Literal, cast

from lark import Token, Transformer, v_args

from charter.dsl import ast as A
from charter.dsl.errors import DSLSyntaxError

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def _unquote(tok: Token) -> str:
    body = str(tok)[1:-1]

    def sub(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] == "u" and len(e) == 5:
            return chr(int(e[1:], 16))
        return {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}.get(e, "\\" + e)

    return _ESCAPE.sub(sub, body)


def _span_of(x: Any) -> A.Span:
    if isinstance(x, Token):
        return (x.start_pos or 0, x.end_pos or 0)
    return cast(A.Span, x.span)


_MAX_INT = 100_000


def _int(tok: Token, what: str) -> int:
    if "." in tok:
        raise DSLSyntaxError(f"{what} must be a whole number, not {tok}", *_span_of(tok))
    if len(tok) > 6 or int(tok) > _MAX_INT:
        raise DSLSyntaxError(
            f"{what} must be at most {_MAX_INT}, not {tok[:12]}{'...' if len(tok) > 12 else ''}",
            *_span_of(tok),
        )
    return int(tok)


@v_args(meta=True)
class ToAST(Transformer[Token, Any]):
    # -- helpers
    @staticmethod
    def _sp(meta: Any) -> A.Span:
        return (meta.start_pos, meta.end_pos) if not meta.empty else (0, 0)

    def start(self, meta: Any, c: list[Any]) -> Any:
        return c[0]

    def action_start(self, meta: Any, c: list[Any]) -> Any:
        return c[0]

    # -- boolean structure (binary trees from the grammar, flattened here)
    def or_(self, meta: Any, c: list[Any]) -> A.Or:
        items = (c[0].items if isinstance(c[0], A.Or) else (c[0],)) + (c[1],)
        return A.Or(items, span=self._sp(meta))

    def and_(self, meta: Any, c: list[Any]) -> A.And:
        items = (c[0].items if isinstance(c[0], A.And) else (c[0],)) + (c[1],)
        return A.And(items, span=self._sp(meta))

    def not_(self, meta: Any, c: list[Any]) -> A.Not:
        return A.Not(c[0], span=self._sp(meta))

    # -- predicates
    def contains(self, meta: Any, c: list[Any]) -> A.Contains:
        s = _span_of(c[1])
        return A.Contains(
            c[0], "one", A.Terms((_unquote(c[1]),), span=s), tuple(c[2:]), span=self._sp(meta)
        )

    def contains_any(self, meta: Any, c: list[Any]) -> A.Contains:
        return A.Contains(c[0], "any", c[1], tuple(c[2:]), span=self._sp(meta))

    def contains_all(self, meta: Any, c: list[Any]) -> A.Contains:
        return A.Contains(c[0], "all", c[1], tuple(c[2:]), span=self._sp(meta))

    def matches(self, meta: Any, c: list[Any]) -> A.Matches:
        return A.Matches(c[0], self._regex(c[1]), span=self._sp(meta))

    def mentions(self, meta: Any, c: list[Any]) -> A.Mentions:
        return A.Mentions(c[0], self._name(c[1]), c[2], span=self._sp(meta))

    def quantified(self, meta: Any, c: list[Any]) -> A.Quantified:
        return A.Quantified(
            cast(Literal["every", "some", "no"], str(c[0])),
            self._name(c[1]),
            c[2],
            c[3],
            span=self._sp(meta),
        )

    def compare(self, meta: Any, c: list[Any]) -> A.Compare:
        return A.Compare(str(c[1]), c[0], c[2], span=self._sp(meta))

    def member(self, meta: Any, c: list[Any]) -> A.Member:
        return A.Member(c[0], c[1], span=self._sp(meta))

    def call(self, meta: Any, c: list[Any]) -> A.Call:
        args = tuple(c[1]) if c[1] is not None else ()
        return A.Call(self._name(c[0]), args, span=self._sp(meta))

    def call_args(self, meta: Any, c: list[Any]) -> list[Any]:
        out: list[Any] = []
        for a in c:
            if isinstance(a, Token) and a.type == "STRING":
                out.append(A.Str(_unquote(a), span=_span_of(a)))
            elif isinstance(a, Token) and a.type == "REGEX":
                out.append(self._regex(a))
            else:
                out.append(a)
        return out

    def unless(self, meta: Any, c: list[Any]) -> A.Unless:
        within = c[2] if c[2] is not None else 0
        return A.Unless(str(c[0]), c[1], within, span=self._sp(meta))  # type: ignore[arg-type]

    def near(self, meta: Any, c: list[Any]) -> A.Near:
        return A.Near(c[0], c[1], span=self._sp(meta))

    def within(self, meta: Any, c: list[Any]) -> int:
        return _int(c[0], "'within'")

    # -- item predicates
    def item_matches(self, meta: Any, c: list[Any]) -> A.IMatches:
        return A.IMatches(self._regex(c[0]), span=self._sp(meta))

    def item_twin(self, meta: Any, c: list[Any]) -> A.ITwin:
        return A.ITwin(self._name(c[0]), span=self._sp(meta))

    def item_unit(self, meta: Any, c: list[Any]) -> A.IUnit:
        return A.IUnit(c[0], span=self._sp(meta))

    def item_decimals(self, meta: Any, c: list[Any]) -> A.IDecimals:
        return A.IDecimals(str(c[0]), _int(c[1], "decimals"), span=self._sp(meta))

    def item_value(self, meta: Any, c: list[Any]) -> A.IValue:
        return A.IValue(str(c[0]), c[1], span=self._sp(meta))

    def item_adjacent(self, meta: Any, c: list[Any]) -> A.IAdjacent:
        return A.IAdjacent(str(c[0]), c[1], c[2], span=self._sp(meta))  # type: ignore[arg-type]

    def item_near(self, meta: Any, c: list[Any]) -> A.IAdjacent:
        return A.IAdjacent("near", c[0], c[1], span=self._sp(meta))

    def item_found(self, meta: Any, c: list[Any]) -> A.IFound:
        return A.IFound(c[0], span=self._sp(meta))

    def item_and(self, meta: Any, c: list[Any]) -> A.IAnd:
        items = (c[0].items if isinstance(c[0], A.IAnd) else (c[0],)) + (c[1],)
        return A.IAnd(items, span=self._sp(meta))

    def item_or(self, meta: Any, c: list[Any]) -> A.IOr:
        items = (c[0].items if isinstance(c[0], A.IOr) else (c[0],)) + (c[1],)
        return A.IOr(items, span=self._sp(meta))

    def item_not(self, meta: Any, c: list[Any]) -> A.INot:
        return A.INot(c[0], span=self._sp(meta))

    def target_extractor(self, meta: Any, c: list[Any]) -> A.Name:
        return self._name(c[0])

    def terms(self, meta: Any, c: list[Any]) -> A.Terms:
        return A.Terms((_unquote(c[0]),), span=_span_of(c[0]))

    def strlist(self, meta: Any, c: list[Any]) -> A.Terms:
        values = tuple(_unquote(t) for t in c if t is not None)
        return A.Terms(values, span=self._sp(meta))

    # -- values
    def arith(self, meta: Any, c: list[Any]) -> A.Arith:
        return A.Arith(str(c[1]), c[0], c[2], span=self._sp(meta))  # type: ignore[arg-type]

    def neg(self, meta: Any, c: list[Any]) -> Any:
        if str(c[0]) == "+":
            return c[1]
        if isinstance(c[1], A.Num):
            return A.Num(-c[1].value, span=self._sp(meta))
        return A.Neg(c[1], span=self._sp(meta))

    def number(self, meta: Any, c: list[Any]) -> A.Num:
        return A.Num(Decimal(str(c[0])), span=self._sp(meta))

    def string(self, meta: Any, c: list[Any]) -> A.Str:
        return A.Str(_unquote(c[0]), span=self._sp(meta))

    def true(self, meta: Any, c: list[Any]) -> A.Bool:
        return A.Bool(True, span=self._sp(meta))

    def false(self, meta: Any, c: list[Any]) -> A.Bool:
        return A.Bool(False, span=self._sp(meta))

    def len_(self, meta: Any, c: list[Any]) -> A.Len:
        return A.Len(c[0], span=self._sp(meta))

    def count(self, meta: Any, c: list[Any]) -> A.Count:
        return A.Count(self._name(c[0]), c[1], span=self._sp(meta))

    def path(self, meta: Any, c: list[Any]) -> A.Path:
        return A.Path(self._name(c[0]), tuple(c[1:]), span=self._sp(meta))

    def field(self, meta: Any, c: list[Any]) -> str:
        return str(c[0])

    def index(self, meta: Any, c: list[Any]) -> int:
        return _int(c[0], "an index")

    # -- actions
    def simple_action(self, meta: Any, c: list[Any]) -> A.Action:
        return A.Action(str(c[0]), span=self._sp(meta))  # type: ignore[arg-type]

    def fix_action(self, meta: Any, c: list[Any]) -> A.Action:
        return A.Action("fix", self._name(c[0]), tuple(c[1:]), span=self._sp(meta))

    def repair_string(self, meta: Any, c: list[Any]) -> A.RepairArgNode:
        return A.RepairArgNode("string", _unquote(c[0]), span=_span_of(c[0]))

    def repair_strings(self, meta: Any, c: list[Any]) -> A.RepairArgNode:
        return A.RepairArgNode("strings", c[0].values, span=c[0].span)

    def repair_name(self, meta: Any, c: list[Any]) -> A.RepairArgNode:
        return A.RepairArgNode("name", str(c[0]), span=_span_of(c[0]))

    # -- tokens
    @staticmethod
    def _name(tok: Token) -> A.Name:
        return A.Name(str(tok), span=_span_of(tok))

    @staticmethod
    def _regex(tok: Token) -> A.Regex:
        raw = str(tok)
        end = raw.rindex("/")
        return A.Regex(raw[1:end].replace("\\/", "/"), raw[end + 1 :], span=_span_of(tok))
