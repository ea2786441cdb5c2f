"""Pack YAML loaded as plain data that still knows where every node came from.

PyYAML composes the node graph (with libyaml where it agrees, see ``_compose``); the data is
built here rather than by a constructor so that a JSON pointer can be walked back to its node,
and so that pack-hostile features (duplicate keys, unknown tags, multiple documents, alias
bombs) become diagnostics instead of surprises.
Scalars resolve with the YAML 1.2 core schema: ``no``, ``on`` and ``2024-01-01`` stay strings.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from charter.diagnostics import Diagnostic, Location, error, sort_diagnostics
from charter.pack._compose import CORE_RE, compose, scalar_spans
from charter.pack._scalarmap import _BREAK, _WS, _align, _block_stream, _content_start, _escape

Pointer = tuple[str | int, ...]
Pairs = dict[str, tuple[Node, Node]]

_TAG = "tag:yaml.org,2002:"
_LEAD_TAB = re.compile(r" *\t")
# Far beyond any real pack; stops alias bombs before jsonschema walks them exponentially.
_MAX_NODES = 1_000_000
_MAX_DEPTH = 100


class _Source:
    """Line table, plus the key index of each mapping node and cached scalar offset maps."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self.starts = [0, *(m.end() for m in _BREAK.finditer(text))]
        self.pairs: dict[int, Pairs] = {}
        self.spans: dict[int, list[tuple[int, int]]] = {}

    def pos(self, index: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, index) - 1
        return line + 1, index - self.starts[line] + 1

    def loc(self, index: int, end: int | None = None) -> Location:
        if end is None:
            return Location(self.path, *self.pos(index))
        return Location(self.path, *self.pos(index), *self.pos(end))


# A scalar longer than this is located as a whole, not character by character: mapping each
# character to the file costs some 200 bytes a character (2 GB for a 10-million-character
# literal), and no DSL expression is this long (CH113 stops at 20,000 characters).
MAX_ALIGNED = 100_000


@dataclass(frozen=True)
class LocatedDoc:
    """One loaded YAML file: its plain ``data`` and a way back from a pointer to the source."""

    path: str
    text: str
    data: Any
    root: Node | None = field(default=None, repr=False, compare=False)
    source: _Source | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.source is None:
            object.__setattr__(self, "source", _Source(self.path, self.text))

    @property
    def _src(self) -> _Source:
        assert self.source is not None  # set in __post_init__
        return self.source

    def _resolve(self, ptr: Pointer) -> tuple[Node | None, Node | None, bool]:
        """Node at ``ptr`` (or the deepest ancestor that exists), its key node, whether exact."""
        node, key = self.root, None
        for part in ptr:
            child: Node | None = None
            knode: Node | None = None
            if isinstance(node, MappingNode):
                knode, child = self._src.pairs.get(id(node), {}).get(str(part), (None, None))
            elif isinstance(node, SequenceNode) and str(part).isdigit():
                index = int(part)
                child = node.value[index] if index < len(node.value) else None
            if child is None:
                return node, None, False
            node, key = child, knode
        return node, key, True

    def _span(self, node: Node | None) -> Location:
        if node is None:
            return Location(self.path, 1, 1)
        return self._src.loc(node.start_mark.index, self._end(node))

    def _end(self, node: Node) -> int:
        start, end = node.start_mark.index, node.end_mark.index
        if isinstance(node, ScalarNode) and node.style not in ("|", ">"):
            return end
        if isinstance(node, CollectionNode) and not node.flow_style and node.value:
            last = node.value[-1]
            last = last[1] if isinstance(node, MappingNode) else last
            # An alias as last child points elsewhere; fall back to trimming the end mark.
            if last.start_mark.index >= start:
                return self._end(last)
        while end > start and self.text[end - 1] in _WS:
            end -= 1
        return end

    def loc(self, ptr: Pointer) -> Location:
        """Span of the value node at ``ptr``, or of its nearest existing ancestor."""
        return self._span(self._resolve(ptr)[0])

    def key_loc(self, ptr: Pointer) -> Location:
        """Span of the mapping key whose value is at ``ptr``; ``loc(ptr)`` for list items."""
        node, key, exact = self._resolve(ptr)
        return self._span(key) if exact and key is not None else self._span(node)

    def end_loc(self, ptr: Pointer) -> Location:
        """The point just after the value node at ``ptr`` (line and col only)."""
        node = self._resolve(ptr)[0]
        return self._src.loc(self._end(node)) if node else Location(self.path, 1, 1)

    def offset_loc(self, ptr: Pointer, offset: int, end_offset: int | None = None) -> Location:
        """Where character ``offset`` of the scalar at ``ptr`` sits in the file.

        ``end_offset`` is exclusive, like a slice, and gives an exclusive ``end_col``.
        """
        node, _, exact = self._resolve(ptr)
        if not exact or not isinstance(node, ScalarNode) or len(node.value) > MAX_ALIGNED:
            return self.loc(ptr)
        spans = self._src.spans.get(id(node))
        first = _content_start(self.text, node) + (1 if node.style in ("'", '"') else 0)
        if spans is None:
            spans = self._src.spans[id(node)] = _align(node.value, self._stream(node), first)

        def at(i: int) -> tuple[int, int]:
            if not spans:
                return first, first
            if i >= len(spans):
                return spans[-1][1], spans[-1][1]
            return spans[max(i, 0)]

        start = at(offset)[0]
        if end_offset is None:
            return self._src.loc(start)
        return self._src.loc(start, at(end_offset - 1)[1] if end_offset > offset else start)

    def _stream(self, node: ScalarNode) -> list[tuple[str, int, int]]:
        """The scalar's source as (char, start, end) with quoting undone but folding kept."""
        text, style = self.text, node.style
        start, end = _content_start(text, node), node.end_mark.index
        if style in ("|", ">"):
            return _block_stream(text, start, end, node.value)
        if style in ("'", '"'):
            start, end = start + 1, end - 1
        out: list[tuple[str, int, int]] = []
        i = start
        while i < end:
            ch, nxt = text[i], text[i + 1 : i + 2]
            if ch == "\r" and nxt == "\n":
                out.append(("\n", i, i + 2))
                i += 2
            elif style == "'" and ch == "'" and nxt == "'":
                out.append(("'", i, i + 2))
                i += 2
            elif style == '"' and ch == "\\":
                i = _escape(text, i, end, out)
            else:
                out.append((ch, i, i + 1))
                i += 1
        return out


def load_yaml(
    path: str | Path, text: str | None = None
) -> tuple[LocatedDoc | None, list[Diagnostic]]:
    """Read and parse one pack file; ``text`` skips the read (editors, tests)."""
    name = str(path)
    if text is None:
        text, unreadable = _read(name)
        if text is None:
            return None, [unreadable] if unreadable else []
    text = text.removeprefix("\ufeff")  # editors do not count a BOM as a column
    src = _Source(name, text)
    tabs = _tab_diagnostics(src)
    try:
        root = compose(text)
    except yaml.YAMLError as exc:
        problem = _syntax_error(exc, src)
        # The tab is the cause; PyYAML's "cannot start any token" there would only confuse.
        if any(d.location.line == problem.location.line for d in tabs):
            return None, tabs
        return None, [*tabs, problem]
    except RecursionError:
        return None, [*tabs, error("CH001", "the document is nested too deeply", src.loc(0))]
    builder = _Builder(src)
    data = builder.build(root, 0) if root is not None else None
    diags = sort_diagnostics(tabs + builder.diags)
    if root is not None and builder.sizes.get(id(root), 0) > _MAX_NODES:
        msg = f"the document expands to more than {_MAX_NODES} values through aliases"
        return None, [*diags, error("CH001", msg, src.loc(0), "use fewer aliases")]
    return LocatedDoc(name, text, data, root, src), diags


def _read(path: str) -> tuple[str | None, Diagnostic | None]:
    where = Location(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None, error("CH004", "file not found", where)
    except IsADirectoryError:
        return None, error("CH004", "expected a file, found a directory", where)
    except OSError as exc:
        return None, error("CH004", f"cannot read the file: {exc.strerror or exc}", where)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        before = _Source(path, raw[: exc.start].decode("utf-8", errors="replace"))
        where = before.loc(len(before.text))
        msg = f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02X})"
        return None, error("CH004", msg, where, "save the file with UTF-8 encoding")


def _tab_diagnostics(src: _Source) -> list[Diagnostic]:
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
    (r"unexpected .*quoted scalar", "the quoted string that starts at {at} is never closed"),
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


def _syntax_error(exc: yaml.YAMLError, src: _Source) -> Diagnostic:
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
        if problem.startswith("expected <block end>, but found '<scalar>'") and mark:
            hint = _text_after_value(src, mark.index) or hint
    return error("CH001", message.strip() or "invalid YAML", where, hint)


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


_SCALARS = {"str", "int", "float", "bool", "null", "merge"}


class _Builder:
    """Plain data from the node graph; aliases share one object, like PyYAML's constructor."""

    def __init__(self, src: _Source) -> None:
        self.src, self.pairs = src, src.pairs
        self.diags: list[Diagnostic] = []
        self.memo: dict[int, Any] = {}
        self.sizes: dict[int, int] = {}
        self.active: set[int] = set()

    def at(self, node: Node) -> Location:
        return self.src.loc(node.start_mark.index, node.end_mark.index)

    def problem(self, node: Node, message: str, hint: str = "") -> None:
        self.diags.append(error("CH001", message, self.at(node), hint))

    def build(self, node: Node, depth: int) -> Any:
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            self.problem(node, "recursive alias: this node contains an alias to itself")
            return None
        if depth > _MAX_DEPTH:
            self.problem(node, f"the document is nested more than {_MAX_DEPTH} levels deep")
            return None
        self.active.add(key)
        value: Any
        if isinstance(node, MappingNode):
            self.check_tag(node, {"map"})
            pairs = self.pairs[key] = self.flatten(node, depth)
            value = {k: self.build(v, depth + 1) for k, (_, v) in pairs.items()}
            children = [v for _, v in pairs.values()]
        elif isinstance(node, SequenceNode):
            self.check_tag(node, {"seq"})
            value = [self.build(item, depth + 1) for item in node.value]
            children = list(node.value)
        else:
            value, children = self.scalar(node), []
        self.active.discard(key)
        self.memo[key] = value
        self.sizes[key] = 1 + sum(self.sizes.get(id(c), 1) for c in children)
        return value

    def check_tag(self, node: Node, allowed: set[str]) -> bool:
        if node.tag.removeprefix(_TAG) in allowed:
            return True
        shown = "!!" + node.tag.removeprefix(_TAG) if node.tag.startswith(_TAG) else node.tag
        self.problem(
            node, f"unsupported YAML tag '{shown}'", "remove the tag; packs use plain YAML"
        )
        return False

    def scalar(self, node: Node) -> Any:
        value: str = node.value
        if not self.check_tag(node, _SCALARS):
            return value
        kind = node.tag.removeprefix(_TAG)
        if kind in ("str", "merge"):
            return value
        if not CORE_RE[kind].match(value):
            self.problem(node, f"{value!r} is not a valid !!{kind}")
            return value
        if kind == "null":
            return None
        if kind == "bool":
            return value.lower() == "true"
        if kind == "int":
            base = {"0o": 8, "0x": 16}.get(value[:2], 10)
            try:
                return int(value[2:] if base != 10 else value, base)
            except ValueError:  # Python refuses decimal strings of more than 4300 digits
                self.problem(
                    node,
                    f"the number {value[:12]}... has too many digits",
                    "quote it if it is meant as text",
                )
                return value
        return float(value.lower().replace(".inf", "inf").replace(".nan", "nan"))

    def flatten(self, node: MappingNode, depth: int) -> Pairs:
        """Effective key -> (key node, value node): merged keys first, explicit keys win."""
        explicit: Pairs = {}
        merged: Pairs = {}
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode):
                kind = "mapping" if isinstance(knode, MappingNode) else "list"
                self.problem(knode, f"a mapping key must be a plain value, not a {kind}")
            elif knode.tag == _TAG + "merge":
                for k, pair in self.merge_sources(vnode, depth).items():
                    merged.setdefault(k, pair)  # earlier sources take precedence
            else:
                first = explicit.get(knode.value)
                if first is not None:
                    line = self.src.pos(first[0].start_mark.index)[0]
                    hint = "remove one of them; the later value is the one used"
                    msg = f"duplicate key '{knode.value}' (first defined at line {line})"
                    self.diags.append(error("CH003", msg, self.at(knode), hint))
                explicit[knode.value] = (knode, vnode)
        return {**merged, **explicit}

    def merge_sources(self, node: Node, depth: int) -> Pairs:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        out: Pairs = {}
        for source in sources:
            if not isinstance(source, MappingNode):
                self.problem(source, "'<<' merges a mapping or a list of mappings only")
                continue
            self.build(source, depth + 1)
            for k, pair in self.pairs.get(id(source), {}).items():
                out.setdefault(k, pair)
        return out
