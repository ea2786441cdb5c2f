"""The syntax errors after the first one of an expression, so that one run reports every
clause the author must fix, not one per run.

LALR cannot resume inside a clause without guessing what was meant, and a guess invents errors
that are not there. A clause after a top-level ``or`` / ``and`` stands on its own, though: the
text after each such connective (outside strings, regular expressions, parentheses and
brackets) past the first error is parsed alone, and its error, if any, is the author's too. An
error at the end of such a rest is dropped: it may come from where the rest was cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from charter.dsl.errors import DSLSyntaxError

_CONNECTIVE = re.compile(r"(?<![\w.])(?:or|and)\b")
_CLOSE = {"(": ")", "[": "]"}


def _connectives(text: str, after: int) -> Iterator[int]:
    """The offset just past each top-level ``or`` / ``and`` that starts at ``after`` or later."""
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'/":
            end = text.find(ch, i + 1)
            while end > 0 and text[end - 1] == "\\":
                end = text.find(ch, end + 1)
            if end < 0:
                return  # an unclosed string: nothing after it can be told apart
            i = end + 1
            continue
        if ch in _CLOSE:
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif depth == 0 and i >= after and (m := _CONNECTIVE.match(text, i)):
            yield m.end()
            i = m.end()
            continue
        i += 1


def later_errors(
    text: str, first: DSLSyntaxError, parse: Callable[[str], object]
) -> list[DSLSyntaxError]:
    """The syntax errors of the top-level clauses after ``first``; ``parse`` raises a
    :class:`DSLSyntaxError` with offsets into the text it is given."""
    found: list[DSLSyntaxError] = []
    after = first.end
    for cut in _connectives(text, after):
        if cut < after:
            continue
        try:
            parse(text[cut:])
        except DSLSyntaxError as exc:
            if exc.message == "unexpected end of expression" or exc.code != "CH100":
                return found
            found.append(
                DSLSyntaxError(exc.message, cut + exc.start, cut + exc.end, exc.hint, exc.code)
            )
            after = cut + exc.end
            continue
        return found  # the rest parses: no further error
    return found
