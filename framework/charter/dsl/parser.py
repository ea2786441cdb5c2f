"""Parse DSL text into the frozen AST. Only the compiler imports this module."""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache
from typing import Any, Literal, cast

import lark
from lark import Token, Transformer, v_args

from charter.diagnostics import did_you_mean
from charter.dsl import ast as A
from charter.dsl import tables
from charter.dsl.limits import over_limits


class DSLSyntaxError(Exception):
    """A syntax error at character offsets ``start:end`` of the expression."""

    def __init__(
        self, message: str, start: int, end: int | None = None, hint: str = "", code: str = "CH100"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end if end is not None else start + 1
        self.hint = hint
        self.code = code  # CH100, or CH113-CH116 for an expression beyond the limits

    @property
    def kind(self) -> str:
        """What the message calls the problem."""
        return "syntax error" if self.code == "CH100" else "limit exceeded"


@cache
def _parser() -> lark.Lark:
    # The LALR tables are shipped prebuilt next to the grammar (see charter.dsl.tables).
    return tables.load_parser()


_KEYWORDS = {
    "_OR": "or",
    "_AND": "and",
    "_NOT": "not",
    "_CONTAINS": "contains",
    "_ANY": "any",
    "_ALL": "all",
    "_MATCHES": "matches",
    "_MENTIONS": "mentions",
    "_IN": "in",
    "_UNLESS": "unless",
    "_BY": "by",
    "_NEAR": "near",
    "_WITHIN": "within",
    "_HAS": "has",
    "_TWIN": "twin",
    "_UNIT": "unit",
    "_DECIMALS": "decimals",
    "_VALUE": "value",
    "_FOUND": "found",
    "_LEN": "len",
    "_COUNT": "count",
    "_TRUE": "true",
    "_FALSE": "false",
    "_FIX": "fix",
}
_TERMINALS = {
    "NAME": "a name",
    "STRING": "a string",
    "REGEX": "a /regex/",
    "NUMBER": "a number",
    "CMP": "a comparison (== != < <= > >=)",
    "ADDOP": "+ or -",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "DOT": "'.'",
    "$END": "the end",
    "QUANT": "every / some / no",
    "SIDE": "preceded / followed",
    "SIMPLE_ACTION": "block / escalate / retry / flag",
}


def _describe_expected(expected: set[str]) -> list[str]:
    names = {_KEYWORDS.get(t, _TERMINALS.get(t, t.lower())) for t in expected}
    keywords = sorted(n for n in names if n in _KEYWORDS.values())
    others = sorted(n for n in names if n not in _KEYWORDS.values())
    return [f"'{k}'" for k in keywords] + others


# `found in` just before the bad token; with `and` / `or` in front, it was meant as an item check
_FOUND_IN = re.compile(r"(?<![\w.])(?:(and|or)\s+)?found\s+in\s*$")


def _found_in_hint(before: str) -> str:
    m = _FOUND_IN.search(before)
    if m is None:
        return ""
    if m.group(1):
        return (
            "a compound item check needs parentheses: "
            'every money in output (has unit "元" and found in context.prices)'
        )
    return "'found in' takes a path to the texts to look in: found in context.prices"


def _syntax_error(text: str, exc: lark.exceptions.UnexpectedInput) -> DSLSyntaxError:
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        tok = exc.token
        expected = set(exc.expected)
        hint = ""
        if tok.type == "$END":
            pos = len(text.rstrip())
            return DSLSyntaxError(
                "unexpected end of expression",
                pos,
                pos + 1,
                _found_in_hint(text[:pos]) or "expected " + ", ".join(_describe_expected(expected)),
            )
        start = tok.start_pos if tok.start_pos is not None else 0
        end = tok.end_pos if tok.end_pos is not None else start + 1
        if tok.type in ("NAME",) or tok.type in _KEYWORDS:
            kw = [_KEYWORDS[t] for t in expected if t in _KEYWORDS]
            kw += [
                w
                for t in expected
                for w in {
                    "QUANT": ["every", "some", "no"],
                    "SIDE": ["preceded", "followed"],
                    "SIMPLE_ACTION": ["block", "escalate", "retry", "flag"],
                }.get(t, [])
            ]
            hint = did_you_mean(str(tok.value), kw) if kw else ""
        if not hint or not hint.startswith("did you mean"):
            hint = "expected " + ", ".join(_describe_expected(expected))
        hint = _found_in_hint(text[:start]) or hint
        return DSLSyntaxError(f"unexpected '{tok.value}'", start, end, hint)
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        hint = ""
        if ch in "“”‘’":
            hint = 'use ASCII quotes "..." around strings'
        elif ch == '"' or ch == "'":
            hint = "this string is not closed"
        elif ch == "/":
            hint = "a regular expression is written /.../ and must be closed"
        elif exc.allowed:
            hint = "expected " + ", ".join(_describe_expected(set(exc.allowed)))
        return DSLSyntaxError(f"unexpected character '{ch}'", pos, pos + 1, hint)
    pos = getattr(exc, "pos_in_stream", 0) or 0
    return DSLSyntaxError(str(exc).splitlines()[0], pos, pos + 1)


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
class _ToAST(Transformer[Token, Any]):
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


def _parse(text: str, start: str) -> Any:
    if not text.strip():
        raise DSLSyntaxError(
            "empty expression", 0, 1, 'write a condition such as output contains "请遵医嘱"'
        )
    beyond = over_limits(text)
    if beyond is not None:
        raise DSLSyntaxError(*beyond)
    try:
        tree = _parser().parse(text, start=start)
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except RecursionError:
        raise _too_deep(text) from None
    try:
        return _ToAST().transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DSLSyntaxError):
            raise exc.orig_exc from None
        if isinstance(exc.orig_exc, RecursionError):
            raise _too_deep(text) from None
        raise
    except RecursionError:
        raise _too_deep(text) from None


def _too_deep(text: str) -> DSLSyntaxError:
    return DSLSyntaxError(
        "expression is nested too deeply",
        0,
        len(text),
        "split it into several rules or simplify it",
        "CH114",
    )


def parse_expr(text: str) -> A.Expr:
    """Parse a ``check`` / ``when`` expression. Raises :class:`DSLSyntaxError`."""
    return cast(A.Expr, _parse(text, "start"))


def parse_action(text: str) -> A.Action:
    """Parse an ``on_fail`` action such as ``fix append "（请遵医嘱）"``."""
    return cast(A.Action, _parse(text, "action_start"))
