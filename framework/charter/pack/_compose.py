"""Compose a YAML node graph: with libyaml when it is present and agrees, else with PyYAML.

PyYAML's pure-Python scanner is most of the time spent loading a pack. libyaml (PyYAML's C
extension) composes the same graph, with the same marks (``index`` counts characters, as
Python does, CJK and astral ones included), about fifteen times faster. It is used only where
it is known to agree with the pure-Python loader, which stays the reference:

* a document libyaml rejects is composed again by PyYAML, whose messages the diagnostics
  and their hints are written against;
* a document with a tab or a byte-order mark is left to PyYAML: libyaml accepts tabs in
  places PyYAML does not, and strips a BOM without counting it;
* the graph is checked for the few constructs the two read differently (a ``?`` inside a
  flow collection, an empty value inside one, an explicit tag, a block scalar header with a
  comment but no space, nesting deeper than PyYAML's recursion goes); if any is present,
  PyYAML composes the document again.

The graph is the same either way, except that libyaml gives a plain scalar the style ``''``
(PyYAML: ``None``) and a block sequence the flow style ``False`` (PyYAML sometimes ``None``);
callers test both with ``in`` / ``not``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from charter.pack._scalarmap import _BREAK, _content_start

_TAG = "tag:yaml.org,2002:"
_CORE = {
    "bool": r"true|True|TRUE|false|False|FALSE",
    "int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "float": r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
    "null": r"~|null|Null|NULL|",
    "merge": r"<<",
}
CORE_RE = {name: re.compile(rf"(?:{pattern})\Z") for name, pattern in _CORE.items()}


class _Loader(yaml.SafeLoader):
    """PyYAML's pure-Python loader, resolving scalars with the YAML 1.2 core schema."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 - PyYAML's own class registry


_FIRST = (("bool", "tTfF"), ("int", "-+0123456789"), ("float", "-+.0123456789"))
for _name, _first in (*_FIRST, ("null", "~nN"), ("merge", "<")):
    _Loader.add_implicit_resolver(_TAG + _name, CORE_RE[_name], list(_first))
_Loader.add_implicit_resolver(_TAG + "null", CORE_RE["null"], [""])  # the empty scalar


def _libyaml_loader() -> type[yaml.CSafeLoader] | None:
    if not getattr(yaml, "__with_libyaml__", False):
        return None

    class CLoader(yaml.CSafeLoader):
        """libyaml's parser with the same resolvers."""

        yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers

    return CLoader


_CLoader = _libyaml_loader()  # None without libyaml: then PyYAML composes everything


# What PyYAML accepts after '|' or '>': indicators, then spaces, then maybe a comment.
_BLOCK_HEADER = re.compile(r"[|>](?:[1-9][-+]?|[-+][1-9]?)?(?: +(?:#.*)?)?")
_END = re.compile(rf"{_BREAK.pattern}|\Z")
# Deeper than any pack; the caller reports it. PyYAML recurses per level and, deeper still,
# raises RecursionError where libyaml would not: such documents are left to PyYAML.
_DEEP = 100


def compose(text: str, fast: bool = True) -> Node | None:
    """The node graph of the single document in ``text`` (None if empty).

    Raises what ``yaml.compose`` raises with the pure-Python loader, for the same documents.
    ``fast=False`` always uses the pure-Python loader.
    """
    if fast and _CLoader is not None and "\t" not in text and "\ufeff" not in text:
        try:
            root = yaml.compose(text, Loader=_CLoader)
        except Exception:  # any complaint: let PyYAML have its say
            root = None
        else:
            if root is None or _agrees(text, root):
                return root
    return yaml.compose(text, Loader=_Loader)


def _agrees(text: str, root: Node) -> bool:
    """False if ``root`` holds a construct libyaml may read differently from PyYAML."""
    stack: list[tuple[Node, bool, int]] = [(root, False, 0)]
    seen: set[int] = set()
    while stack:
        node, in_flow, depth = stack.pop()
        if id(node) in seen:
            continue  # an alias
        seen.add(id(node))
        if depth > _DEEP:
            return False  # PyYAML may run out of stack where libyaml does not
        start = _content_start(text, node)
        if "!" in text[node.start_mark.index : start]:
            return False  # an explicit tag ('!' alone resolves differently)
        if isinstance(node, ScalarNode):
            if in_flow and not node.value and not node.style:
                return False  # an empty value in a flow collection: marks differ
            if node.style in ("|", ">"):
                end = _END.search(text, start)
                if end is None or not _BLOCK_HEADER.fullmatch(text, start, end.start()):
                    return False
            continue
        flow = bool(getattr(node, "flow_style", False))
        if flow and not in_flow and _unquoted_question(text, node):
            return False  # PyYAML ends a plain scalar at '?' in flow context
        flow = flow or in_flow
        if isinstance(node, MappingNode):
            stack.extend((n, flow, depth + 1) for pair in node.value for n in pair)
        else:
            stack.extend((n, flow, depth + 1) for n in node.value)
    return True


def _unquoted_question(text: str, flow: Node) -> bool:
    """Whether a '?' of the flow collection ``flow`` is outside its quoted scalars: a
    ``pattern: "^[0-9]{4}?$"`` inside ``{...}`` reads the same either way, and is common."""
    start, end = flow.start_mark.index, flow.end_mark.index
    if "?" not in text[start:end]:
        return False
    quoted: list[tuple[int, int]] = []
    stack = [flow]
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            if node.style in ("'", '"'):
                quoted.append((node.start_mark.index, node.end_mark.index))
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        else:
            stack.extend(node.value)
    at = text.find("?", start, end)
    while at >= 0:
        if not any(s <= at < e for s, e in quoted):
            return True
        at = text.find("?", at + 1, end)
    return False


def scalar_spans(text: str) -> list[tuple[int, int]]:
    """Start and end index of every scalar PyYAML reads before any error."""
    spans: list[tuple[int, int]] = []
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.ScalarEvent) and event.start_mark and event.end_mark:
                spans.append((event.start_mark.index, event.end_mark.index))
    except (yaml.YAMLError, RecursionError):
        pass
    return spans
