"""A loaded pack file that still knows where every node came from: :class:`LocatedDoc`.

Its plain ``data`` is what the stages read; a JSON pointer into it is walked back through the
node graph to a span of the file, down to the character inside a scalar (``offset_loc``), so
that a diagnostic points at the text the author wrote. ``charter.pack.yamlsrc`` builds it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from charter.diagnostics import Location
from charter.pack._scalarmap import _BREAK, _WS, _align, _block_stream, _content_start, _escape

Pointer = tuple[str | int, ...]
Pairs = dict[str, tuple[Node, Node]]


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
