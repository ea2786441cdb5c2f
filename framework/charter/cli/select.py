"""Which cases ``charter test -k EXPR`` runs: pytest's keyword expressions.

``EXPR`` is made of names joined by ``and``, ``or``, ``not`` and parentheses. A name matches a
case when it is a substring, ignoring case, of one of the case's keywords: its name, its kind
(rules, planner, skill, conversation), its pack and the file it is written in (``rules.yaml``,
``refund.yaml``, and the file's stem). So ``-k 'refund and not conversation'`` runs the cases
about refunds that are not conversations, as in pytest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from lark import Lark, Token, Transformer, UnexpectedInput

# the characters of pytest's identifiers (\w takes CJK, so -k 退款 works), but not the keywords
# alone: as in pytest, 'and' is never a name
_GRAMMAR = r"""
?start: disj
?disj: conj ("or" conj)*
?conj: neg ("and" neg)*
?neg: "not" neg -> not_
    | "(" disj ")"
    | NAME -> name
NAME: /(?!(?:and|or|not)(?![\w:+\-.\[\]\\\/]))(?:\w|:|\+|-|\.|\[|\]|\\|\/)+/
%import common.WS
%ignore WS
"""

_WANTED = {
    "NAME": "a name",
    "NOT": "'not'",
    "LPAR": "'('",
    "RPAR": "')'",
    "AND": "'and'",
    "OR": "'or'",
    "$END": "the end",
}
_ORDER = ["a name", "'not'", "'('", "'and'", "'or'", "')'", "the end"]

Match = Callable[[frozenset[str]], bool]


class SelectError(ValueError):
    """``EXPR`` is not an expression; ``column`` (1-based) is where reading it stopped."""

    def __init__(self, expression: str, column: int, reason: str) -> None:
        self.expression = expression
        self.column = column
        self.reason = reason
        super().__init__(f"at column {column}: {reason}")

    def render(self) -> str:
        """The expression with a caret under the column, as diagnostics are shown."""
        return f"    {self.expression}\n    {' ' * (self.column - 1)}^"


class _Build(Transformer[Token, Match]):
    def name(self, items: list[object]) -> Match:
        needle = str(items[0]).lower()
        return lambda words: any(needle in w for w in words)

    def not_(self, items: list[Match]) -> Match:
        inner = items[0]
        return lambda words: not inner(words)

    def conj(self, items: list[Match]) -> Match:
        return lambda words: all(p(words) for p in items)

    def disj(self, items: list[Match]) -> Match:
        return lambda words: any(p(words) for p in items)


@cache
def _parser() -> Lark:
    return Lark(_GRAMMAR, parser="lalr")


@dataclass(frozen=True)
class Selection:
    """A compiled ``-k`` expression: ``selects(keywords)`` says whether a case runs."""

    expression: str
    _match: Match

    def selects(self, keywords: Iterable[str]) -> bool:
        return self._match(frozenset(k.lower() for k in keywords))


def compile_selection(expression: str) -> Selection:
    """The expression compiled once; :class:`SelectError` when it does not parse."""
    if not expression.strip():
        raise SelectError(expression, 1, "expected a name, 'not' or '('; got end of input")
    try:
        tree = _parser().parse(expression)
    except UnexpectedInput as exc:
        column = getattr(exc, "column", 0)
        column = column if isinstance(column, int) and column > 0 else len(expression) + 1
        token = getattr(exc, "token", None)
        if token is None:  # a character no name is made of
            got = repr(expression[column - 1]) if column <= len(expression) else "end of input"
        elif token.type == "$END":
            got, column = "end of input", len(expression.rstrip()) + 1
        else:
            got = repr(str(token))
        wanted = set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
        if "AND" in wanted or "OR" in wanted:
            # after a name: the parser's table also offers ')' where no '(' is open
            opened = expression[: column - 1].count("(") - expression[: column - 1].count(")")
            wanted = {"AND", "OR"} | ({"RPAR"} if opened > 0 else {"$END"})
        words = sorted({_WANTED.get(t, "") for t in wanted} - {""}, key=_ORDER.index)
        raise SelectError(expression, column, f"expected {_either(words)}; got {got}") from None
    return Selection(expression, _Build().transform(tree))


def _either(words: list[str]) -> str:
    if not words:
        return "a name"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def case_keywords(pack: str, kind: str, name: str, path: str) -> tuple[str, ...]:
    """The words a ``-k`` name is matched against, for one case."""
    file = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = file.rsplit(".", 1)[0]
    return (pack, kind, name, file, stem)
