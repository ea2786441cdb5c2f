"""What goes wrong reading YAML, in the author's terms: tabs in indentation (CH002), and
PyYAML's syntax errors (CH001) reworded with a hint and placed where the mistake is.
"""

from __future__ import annotations

import re

import yaml

from charter.diagnostics import Diagnostic, error
from charter.pack._compose import scalar_spans
from charter.pack.located import _Source

_LEAD_TAB = re.compile(r" *\t")


def tab_diagnostics(src: _Source) -> list[Diagnostic]:
    text = src.text
    tabs = [m.end() - 1 for s in src.starts if (m := _LEAD_TAB.match(text, s))]
    if not tabs:
        return []
    # A tab inside a block or quoted scalar is content, which YAML allows.
    spans = scalar_spans(text)
    hint = "indent with spaces; YAML does not allow tabs for indentation"
    return [
        error("CH002", "tab character in indentation", src.loc(t, t + 1), hint)
        for t in tabs
        if not any(a < t < b for a, b in spans)
    ]


# Hints for PyYAML's messages, searched in "problem | context"; {at} is the context mark.
_HINTS = [
    (
        r"unexpected .*quoted scalar",
        "the quoted string that starts here is never closed: the file ends inside it",
    ),
    (r"unknown escape", "inside double quotes write a backslash as \\\\, or use single quotes"),
    (
        r"^mapping values are not",
        "put the value in quotes if it contains ': ', or check this line's indentation",
    ),
    (
        r"^expected <block end>",
        "check the indentation: this line does not line up with the block at {at}",
    ),
    (
        r"^could not find expected ':'",
        "write 'key: value', or indent this line to continue the value above it",
    ),
    (r"^found character '\\t'", "replace the tab with spaces; YAML does not allow tabs here"),
    (r"cannot start any token", "put the value in quotes"),
    (r"^found undefined alias '(.*)'", "define the anchor '&{0}' before using '*{0}'"),
    (r"flow (sequence|mapping)", "separate items with ',' and close the collection at {at}"),
    (r"<stream end>.*flow node", "a '[' or '{{' is never closed"),
]


def syntax_error(exc: yaml.YAMLError, src: _Source) -> Diagnostic:
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character if isinstance(exc.character, int) else 0
        hint = f'remove it, or write it as "\\u{char:04x}" inside a double-quoted string'
        where = src.loc(int(exc.position))
        return error("CH001", f"character U+{char:04X} is not allowed in YAML", where, hint)
    if not isinstance(exc, yaml.MarkedYAMLError):
        return error("CH001", str(exc), src.loc(0))
    problem, context, cmark = exc.problem or "", exc.context or "", exc.context_mark
    mark = exc.problem_mark or cmark
    where = src.loc(mark.index if mark else 0)
    at = "line {}, column {}".format(*src.pos(cmark.index)) if cmark else ""
    message = f"{problem} {context}" if context and not context.endswith("next token") else problem
    hint = ""
    if context.startswith("expected a single document"):
        message = "expected a single YAML document"
        hint = "a pack file holds one document: remove the '---' or move the rest to another file"
    elif context.startswith("found duplicate anchor"):
        message = f"duplicate anchor {context.split()[3].rstrip(';')} (first defined at {at})"
        hint = "give each anchor its own name"
    else:
        found = ((m, t) for p, t in _HINTS if (m := re.search(p, f"{problem} | {context}")))
        match, template = next(found, (None, ""))
        hint = template.format(*match.groups(), at=at) if match else ""
        if problem == "could not find expected ':'" and cmark:
            where = src.loc(cmark.index)  # the line with the key, not the line after it
        if "quoted scalar" in context and "end of stream" in problem and cmark:
            where = src.loc(cmark.index)  # the quote never closed, not the end of the file
        if problem.startswith("expected <block end>, but found '<scalar>'") and mark:
            hint = _text_after_value(src, mark.index) or hint
        if problem.startswith("expected <block end>") and mark and cmark:
            cut = _cut_short(src, cmark.index, mark.index)
            if cut is not None:
                return cut
    return error("CH001", message.strip() or "invalid YAML", where, hint)


def _indents(src: _Source, first: int, last: int) -> list[tuple[int, int]]:
    """(line, indentation) of the lines ``first`` to ``last`` (1-based) that hold a value."""
    out = []
    for n in range(first, last + 1):
        end = src.starts[n] if n < len(src.starts) else len(src.text)
        text = src.text[src.starts[n - 1] : end]
        body = text.lstrip(" ")
        if body.strip() and not body.startswith("#"):
            out.append((n, len(text) - len(body)))
    return out


def _cut_short(src: _Source, block: int, found: int) -> Diagnostic | None:
    """The line that ended a block too early, when the line PyYAML stops at fits the block.

    PyYAML reports where it noticed (``expected <block end>``: a line indented as no open
    block is), which after a key moved left is many lines below the mistake: the key ends its
    block, its own children follow, and only the next line at the block's old indentation
    breaks. That line lines up with the lines before the moved key, so the moved key is the
    line to change: the last line above it indented less, when a line above that one has the
    indentation the parser found wrong."""
    line, col = src.pos(found)
    lines = _indents(src, src.pos(block)[0], line - 1)
    cut = next(((n, i) for n, i in reversed(lines) if i < col - 1), None)
    if cut is None:
        return None
    if not any(n < cut[0] and i == col - 1 for n, i in lines):
        return None
    start = src.starts[cut[0] - 1] + cut[1]
    return error(
        "CH001",
        f"this line ends the block above it, but line {line} is indented to continue it",
        src.loc(start),
        f"indent this line to column {col} (YAML noticed the problem at line {line}, column "
        f"{col}); or, if this line is right, line {line} and the lines after it like it",
    )


# The start of a line up to its value.
_LEAD = re.compile(
    r"[ ]*(?:-[ ]+)*"  # list dashes
    r"(?:(?:\"[^\"]*\"|'[^']*'|[^\s\[\]{}#'\"-][^#]*?)[ ]*:[ ]+)?"  # a key, quoted or plain
)
_OPENERS = {
    "[": "starts with '[' is read as a list, which ends at its ']'",
    "{": "starts with '{' is read as a mapping, which ends at its '}'",
    '"': "starts with a quote ends at the closing quote",
    "'": "starts with a quote ends at the closing quote",
}


def _text_after_value(src: _Source, index: int) -> str:
    """The hint when text follows a list, mapping or quoted string on its line
    (``output: [需人工确认]您好``): the author meant one string, so quote all of it.
    PyYAML calls it a misplaced block end, which reads like an indentation problem."""
    line, col = src.pos(index)
    start = src.starts[line - 1]
    end = src.starts[line] if line < len(src.starts) else len(src.text)
    text = src.text[start:end].rstrip("\r\n\x85\u2028\u2029")
    lead = _LEAD.match(text)
    cut = lead.end() if lead else 0
    value = text[cut:]
    if not value or value[0] not in _OPENERS or col - 1 <= cut:
        return ""
    value = re.split(r"[ ]+#", value, maxsplit=1)[0].rstrip()
    if '"' not in value and "\\" not in value:
        quoted = f'"{value}"'
    else:
        quoted = "'" + value.replace("'", "''") + "'"
    return (
        f"a value that {_OPENERS[value[0]]}; quote the whole value: {text[:cut].strip()} {quoted}"
    )
