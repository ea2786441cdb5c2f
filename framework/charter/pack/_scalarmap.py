"""Map each character of a YAML string scalar to its place in the source text.

A DSL error found at character 17 of a ``check:`` value must be shown at its line and column
in the file, whatever the scalar's style: plain, quoted with escapes, or a ``|`` / ``>`` block
whose lines were folded and stripped of indentation.
"""

from __future__ import annotations

import re

import yaml
from yaml.nodes import Node

_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")  # what PyYAML counts as a line break
_WS = " \t\r\n\x85\u2028\u2029"


def _content_start(text: str, node: Node) -> int:
    """Skip a node's tag and anchor, which PyYAML includes in its start mark."""
    i, end = node.start_mark.index, node.end_mark.index
    while i < end and text[i] in "!&":
        while i < end and text[i] not in _WS:
            i += 1
        while i < end and (text[i] in _WS or text[i] == "#"):
            comment = _BREAK.search(text, i, end) if text[i] == "#" else None
            i = comment.end() if comment else i + 1
    return i


def _escape(text: str, i: int, end: int, out: list[tuple[str, int, int]]) -> int:
    nxt = text[i + 1 : i + 2]
    scanner = yaml.scanner.Scanner
    if nxt in scanner.ESCAPE_CODES:
        stop = i + 2 + scanner.ESCAPE_CODES[nxt]
        try:
            out.append((chr(int(text[i + 2 : stop], 16)), i, stop))
        except ValueError:
            out.append(("\ufffd", i, stop))
        return stop
    if nxt and nxt in scanner.ESCAPE_REPLACEMENTS:
        out.append((scanner.ESCAPE_REPLACEMENTS[nxt], i, i + 2))
        return i + 2
    if nxt and nxt in _WS[2:]:
        # An escaped line break joins the lines: the break and the next indentation vanish.
        j = i + (3 if text[i + 1 : i + 3] == "\r\n" else 2)
        while j < end and text[j] in " \t":
            j += 1
        return j
    out.append(("\\", i, i + 1))
    return i + 1


def _block_stream(text: str, start: int, end: int, value: str) -> list[tuple[str, int, int]]:
    header = _BREAK.search(text, start, end)
    if header is None:
        return []
    # The block's indentation is not kept by PyYAML; recover it from the first non-blank line,
    # whose extra indentation the value preserves for both literal and folded scalars.
    lines = [m.end() for m in _BREAK.finditer(text, header.end(), end)]
    bounds = list(zip([header.end(), *lines], [*lines, end], strict=True))
    indent = 0
    first_value = next((ln for ln in value.split("\n") if ln.strip(" ")), None)
    if first_value is not None:
        for s, e in bounds:
            body = text[s:e].rstrip("\r\n\x85\u2028\u2029")
            if body.strip(" "):
                lead = len(body) - len(body.lstrip(" "))
                indent = max(lead - (len(first_value) - len(first_value.lstrip(" "))), 0)
                break
    out: list[tuple[str, int, int]] = []
    for s, e in bounds:
        i = s
        while i < min(s + indent, e) and text[i] == " ":
            i += 1
        while i < e:
            step = 2 if text[i : i + 2] == "\r\n" else 1
            out.append(("\n" if step == 2 else text[i], i, i + step))
            i += step
    return out


def _align(value: str, stream: list[tuple[str, int, int]], first: int) -> list[tuple[int, int]]:
    """Source span of each value character.

    Equal characters pair up one to one; a folded line break pairs with the source whitespace
    it came from; extra source whitespace (indentation, trailing spaces) is skipped.
    """
    out: list[tuple[int, int]] = []
    j, n = 0, len(stream)
    for c in value:
        if j < n and stream[j][0] == c:
            out.append(stream[j][1:])
            j += 1
            continue
        k = j
        if c not in _WS:
            while k < n and stream[k][0] in _WS:
                k += 1
        if k < n and (stream[k][0] == c or (c in _WS and stream[k][0] in _WS)):
            out.append(stream[k][1:])
            j = k + 1
        elif j < n and c not in _WS:
            out.append(stream[j][1:])  # no counterpart: assume a substitution and keep going
            j += 1
        else:
            p = stream[j][1] if j < n else (stream[-1][2] if stream else first)
            out.append((p, p))
    return out
