"""Plain data from a composed YAML node graph, as PyYAML's safe constructor would build it.

Built here rather than by a constructor so that each mapping node keeps its key index (for
``LocatedDoc``) and so that what a pack may not use (unknown tags, duplicate or non-scalar
keys, recursive aliases, deep nesting) becomes a diagnostic. Scalars resolve with the YAML 1.2
core schema.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from charter.diagnostics import Diagnostic, Location, error
from charter.pack._compose import CORE_RE
from charter.pack.located import Pairs, _Source

_TAG = "tag:yaml.org,2002:"
_MAX_DEPTH = 100


_SCALARS = {"str", "int", "float", "bool", "null", "merge"}


class Builder:
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
