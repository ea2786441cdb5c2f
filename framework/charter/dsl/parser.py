"""Parse DSL text into the frozen AST. Only the compiler imports this module.

Lark parses with the prebuilt LALR tables (``charter.dsl.tables``); ``charter.dsl.transform``
turns the tree into the AST and ``charter.dsl.errors`` words what goes wrong.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

import lark

from charter.dsl import ast as A
from charter.dsl import tables
from charter.dsl.errors import DSLSyntaxError, syntax_error, too_deep
from charter.dsl.limits import over_limits
from charter.dsl.recover import later_errors
from charter.dsl.transform import ToAST

__all__ = ["DSLSyntaxError", "parse_action", "parse_expr"]


@cache
def _parser() -> lark.Lark:
    # The LALR tables are shipped prebuilt next to the grammar (see charter.dsl.tables).
    return tables.load_parser()


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
        first = syntax_error(text, exc)
        if start == "start":
            first.more = tuple(later_errors(text, first, _clause))
        raise first from None
    except RecursionError:
        raise too_deep(text) from None
    try:
        return ToAST().transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, DSLSyntaxError):
            raise exc.orig_exc from None
        if isinstance(exc.orig_exc, RecursionError):
            raise too_deep(text) from None
        raise
    except RecursionError:
        raise too_deep(text) from None


def _clause(text: str) -> None:
    """Parse ``text`` as an expression, only for its syntax errors."""
    try:
        _parser().parse(text, start="start")
    except lark.exceptions.UnexpectedInput as exc:
        raise syntax_error(text, exc) from None
    except RecursionError:
        raise too_deep(text) from None


def parse_expr(text: str) -> A.Expr:
    """Parse a ``check`` / ``when`` expression. Raises :class:`DSLSyntaxError`."""
    return cast(A.Expr, _parse(text, "start"))


def parse_action(text: str) -> A.Action:
    """Parse an ``on_fail`` action such as ``fix append "（请遵医嘱）"``."""
    return cast(A.Action, _parse(text, "action_start"))
