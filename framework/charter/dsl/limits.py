"""Limits on one DSL expression, checked before it is parsed, so that compiling a pack costs
time and memory in proportion to what a rule can reasonably be.

A fuzzed pack showed what happens without them: an ``or`` chain of 100,000 terms took more than
10 s to parse, 100,000 nested parentheses 7 s, a literal of ten million characters 2 GB. The
limits are far above what a rule needs (the shipped packs' longest expression has some 300
characters, 30 terms and two levels of parentheses); one scan of the text checks them all.

========================  =========  =====
limit                     value      code
========================  =========  =====
characters                20,000     CH113
nesting (``(`` ``[``)     50         CH114
terms                     1,000      CH115
one string or /regex/     2,000      CH116
========================  =========  =====

*Terms* are the operands of ``and`` / ``or``, the ``not``\\ s and the items of lists: each
``and``, ``or``, ``not`` and ``,`` counts one.
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "MAX_LITERAL", "MAX_SOURCE", "MAX_TERMS", "Beyond", "over_limits"]

MAX_SOURCE = 20_000
MAX_DEPTH = 50
MAX_TERMS = 1_000
MAX_LITERAL = 2_000

# (message, start, end, hint, code), the arguments of a DSLSyntaxError
Beyond = tuple[str, int, int, str, str]

# what the scan stops at: a quote or slash (a literal starts), a bracket, a comma, a word
_STOP = re.compile(r"[\"'/()\[\],]|\b(?:and|or|not)\b")
_SPLIT = "split it into several rules"


def _literal_end(text: str, i: int) -> int:
    """The index after the string or /regex/ opening at ``i`` (the end of the line when it is
    not closed: the parser reports that)."""
    quote = text[i]
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n" and quote != "/":
            return j
        j += 1
    return n


def over_limits(text: str) -> Beyond | None:
    """The first limit ``text`` goes beyond, or None."""
    if len(text) > MAX_SOURCE:
        return (
            f"expression has {len(text):,} characters, more than {MAX_SOURCE:,}",
            MAX_SOURCE,
            MAX_SOURCE + 1,
            _SPLIT,
            "CH113",
        )
    depth = terms = 0
    pos = 0
    while (m := _STOP.search(text, pos)) is not None:
        c, at = m.group(), m.start()
        pos = m.end()
        if c in "\"'/":
            pos = _literal_end(text, at)
            if pos - at - 2 > MAX_LITERAL:
                what = "regular expression" if c == "/" else "string"
                return (
                    f"{what} of {pos - at - 2:,} characters, more than {MAX_LITERAL:,}",
                    at,
                    at + 1,
                    "a rule checks words and short patterns; keep long texts out of rules",
                    "CH116",
                )
        elif c in "([":
            depth += 1
            if depth > MAX_DEPTH:
                return (
                    f"expression is nested more than {MAX_DEPTH} levels deep",
                    at,
                    at + 1,
                    "split it into several rules or simplify it",
                    "CH114",
                )
        elif c in ")]":
            depth -= 1
        else:  # and, or, not, a comma
            terms += 1
            if terms > MAX_TERMS:
                return (
                    f"expression has more than {MAX_TERMS:,} terms",
                    at,
                    at + len(c),
                    _SPLIT,
                    "CH115",
                )
    return None
