"""Syntax errors of the DSL: :class:`DSLSyntaxError`, and the message and hint for what Lark
reports, in the words of the DSL (its keywords and tokens, not the grammar's terminal names).

Only the parser and what the compiler reports import this module (it imports lark).
"""

from __future__ import annotations

import re

import lark

from charter.diagnostics import did_you_mean


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
        # the errors of later clauses of the same expression (charter.dsl.recover)
        self.more: tuple[DSLSyntaxError, ...] = ()

    def every(self) -> tuple[DSLSyntaxError, ...]:
        """This error and those of the later clauses, in order."""
        return (self, *self.more)

    @property
    def kind(self) -> str:
        """What the message calls the problem."""
        return "syntax error" if self.code == "CH100" else "limit exceeded"


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


def syntax_error(text: str, exc: lark.exceptions.UnexpectedInput) -> DSLSyntaxError:
    """The :class:`DSLSyntaxError` for what Lark could not parse in ``text``."""
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


def too_deep(text: str) -> DSLSyntaxError:
    """CH114: the parser or the transformer ran out of stack."""
    return DSLSyntaxError(
        "expression is nested too deeply",
        0,
        len(text),
        "split it into several rules or simplify it",
        "CH114",
    )
