"""Find regular expressions that can backtrack catastrophically (CH112).

A backtracking engine tries every way a pattern can match before it gives up; when one text
can be split among the iterations of a repetition in exponentially many ways, a failing search
takes seconds on a thousand characters. The two shapes that do this in practice:

* a repetition inside a repetition, where one iteration of the outer can be nothing but the
  inner one: ``(a+)+``, ``(a*)*``, ``(\\w+\\s?)+$``, ``(?:\\d+,?)*`` (the rest of the outer
  body can match nothing, or the same characters as the inner);
* a repetition of alternatives that can match the same characters: ``(a|a)*``, ``(a|aa)+``,
  ``(\\w|\\d)*``, ``(.|\\s)*``.

The pattern is read by a small parser of the ``regex`` module's syntax (groups, classes,
escapes, quantifiers; possessive quantifiers and atomic groups are safe and skipped), and
whether two pieces can match a common character is decided by the ``regex`` module itself on a
fixed sample of characters (ASCII, CJK, full-width, an emoji). It is a heuristic: it finds the
common shapes, not every slow pattern; at run time every pack pattern is bounded in time
anyway (``charter.text.patterns``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import regex

from charter.diagnostics import Location
from charter.text.patterns import PATTERN_TIMEOUT_S

__all__ = ["HINT", "Finding", "catastrophe", "catastrophic"]

# a bounded repetition this long already multiplies the ways to split a text
_LARGE = 10
_SAMPLE = tuple(chr(c) for c in range(0x20, 0x7F)) + tuple("\t\n\réß中文。，０１Ａａ\u3000あ한٣😀")


@dataclass(frozen=True)
class Finding:
    """A repetition at ``offset`` (in the pattern) that can backtrack catastrophically."""

    offset: int
    message: str


@dataclass
class _Node:
    kind: str  # "atom", "zero", "seq", "alt", "group", "repeat"
    offset: int
    src: str = ""  # an atom's source: one character's worth of pattern
    items: list[_Node] = field(default_factory=list)
    low: int = 1
    high: int | None = 1
    safe: bool = False  # possessive repetition, atomic group or lookaround: no backtracking in


class _Parser:
    def __init__(self, pattern: str, verbose: bool) -> None:
        self.p = pattern
        self.i = 0
        self.verbose = verbose

    def parse(self) -> _Node:
        return self.alt()

    def alt(self) -> _Node:
        start = self.i
        branches = [self.seq()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.seq())
        return _Node("alt", start, items=branches)

    def seq(self) -> _Node:
        node = _Node("seq", self.i)
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            atom = self.atom()
            if atom is not None:
                node.items.append(self.quantified(atom))
        return node

    def quantified(self, atom: _Node) -> _Node:
        while self.i < len(self.p):
            c = self.p[self.i]
            if c in "*+?":
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                self.i += 1
            elif c == "{" and (m := regex.match(r"\{(\d*)(?:(,)(\d*))?\}", self.p[self.i :])):
                if not (m[1] or m[3]):
                    return atom  # `{}` or `{,}`: a literal brace, read as an atom next
                low = int(m[1] or 0)
                high = low if m[2] is None else (int(m[3]) if m[3] else None)
                self.i += m.end()
            else:
                return atom
            safe = False
            if self.i < len(self.p) and self.p[self.i] in "?+":
                safe = self.p[self.i] == "+"  # possessive: gives nothing back
                self.i += 1
            atom = _Node("repeat", atom.offset, items=[atom], low=low, high=high, safe=safe)
        return atom

    def atom(self) -> _Node | None:
        p, i = self.p, self.i
        c = p[i]
        if self.verbose and c.isspace():
            self.i += 1
            return None
        if self.verbose and c == "#":
            end = p.find("\n", i)
            self.i = len(p) if end < 0 else end + 1
            return None
        if c == "(":
            return self.group()
        if c == "[":
            self.i = _class_end(p, i)
            return _Node("atom", i, src=p[i : self.i])
        if c == "\\":
            return self.escape()
        self.i += 1
        if c in "^$":
            return _Node("zero", i)
        return _Node("atom", i, src="." if c == "." else regex.escape(c))

    def escape(self) -> _Node:
        p, i = self.p, self.i
        m = regex.match(
            r"\\(?:[pPNx]\{[^}]*\}|[pP][A-Za-z]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}"
            r"|U[0-9a-fA-F]{8}|0[0-7]{0,2}|[1-9][0-9]?|g<[^>]*>|.)",
            p[i:],
            regex.S,
        )
        end = i + (m.end() if m else 1)
        self.i = end
        src = p[i:end]
        if src[1:2] in tuple("bBAZzGKmM"):
            return _Node("zero", i)
        if (src[1:2].isdigit() and src[1] != "0") or src.startswith("\\g<"):
            return _Node("atom", i, src="(?s:.)")  # a back-reference: anything
        return _Node("atom", i, src=src)

    def group(self) -> _Node | None:
        p, start = self.p, self.i
        self.i += 1
        safe = False
        if p.startswith("?#", self.i):  # a comment
            end = p.find(")", self.i)
            self.i = len(p) if end < 0 else end + 1
            return None
        if p.startswith("?", self.i):
            m = regex.match(
                r"\?(?:P?<[A-Za-z_]\w*>|'[A-Za-z_]\w*'|:|\||>|<?[=!]|[a-zA-Z^-]*:"
                r"|[a-zA-Z^-]*\)|P=\w+\)|&?\w*\)|R\)|[-+]?\d+\)|\([^)]*\))?",
                p[self.i :],
            )
            head = m[0] if m else "?"
            self.i += len(head)
            if head.endswith(")") and not head.startswith("?("):
                # inline flags, a named back-reference or a recursion: no group body
                return None if head[1:2].isalpha() and "=" not in head else _any(start)
            safe = head == "?>"  # atomic: gives nothing back
        look = p.startswith(("?=", "?!", "?<=", "?<!"), start + 1)
        body = self.alt()
        if self.i < len(p) and p[self.i] == ")":
            self.i += 1
        if look:  # a lookaround matches no characters and is tried once per position
            return _Node("zero", start)
        return _Node("group", start, items=[body], safe=safe)


def _any(offset: int) -> _Node:
    return _Node("atom", offset, src="(?s:.)")


def _class_end(p: str, i: int) -> int:
    """The index after the character class starting at ``p[i] == "["`` (nested sets too)."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1  # a leading ] is a literal
    depth = 1
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            if p.startswith("[:", j) and (k := p.find(":]", j + 2)) >= 0:
                j = k + 2
                continue
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(p)


@lru_cache(maxsize=4096)
def _chars(src: str, flags: int) -> frozenset[str]:
    """The sample characters an atom matches (all of them when it does not compile alone)."""
    try:
        compiled = regex.compile(src, flags)
    except (regex.error, ValueError, OverflowError):
        return frozenset(_SAMPLE)
    return frozenset(c for c in _SAMPLE if compiled.fullmatch(c))


class _Analysis:
    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.findings: list[Finding] = []

    def chars(self, node: _Node) -> frozenset[str]:
        """Every sample character the node can consume."""
        if node.kind == "atom":
            return _chars(node.src, self.flags)
        out: frozenset[str] = frozenset()
        for item in node.items:
            out |= self.chars(item)
        return out

    def nullable(self, node: _Node) -> bool:
        if node.kind == "zero":
            return True
        if node.kind == "atom":
            return False
        if node.kind == "repeat":
            return node.low == 0 or self.nullable(node.items[0])
        if node.kind == "alt":
            return any(self.nullable(b) for b in node.items)
        return all(self.nullable(i) for i in node.items)

    def only(self, node: _Node) -> list[_Node]:
        """Repetitions inside ``node`` whose iterations alone can make up a match of it."""
        if node.kind == "repeat" and not node.safe:
            inner = node.items[0]
            if node.high is None or node.high >= _LARGE:
                return [node]
            return self.only(inner)
        if node.kind == "group" and not node.safe:
            return self.only(node.items[0])
        if node.kind == "alt":
            return [r for b in node.items for r in self.only(b)]
        if node.kind == "seq":
            out = []
            for k, item in enumerate(node.items):
                for rep in self.only(item):
                    mine = self.chars(rep)
                    others = node.items[:k] + node.items[k + 1 :]
                    if all(self.nullable(o) or self.chars(o) & mine for o in others):
                        out.append(rep)
            return out
        return []

    def same_branches(self, node: _Node) -> bool:
        """Two alternatives of the body made of single characters that all overlap."""
        while node.kind == "group" and not node.safe:
            node = node.items[0]
        if node.kind != "alt" or len(node.items) < 2:
            return False
        sets = [self.atom_sets(b) for b in node.items]
        for a in range(len(sets)):
            for b in range(a + 1, len(sets)):
                x, y = sets[a], sets[b]
                if x and y and all(p & q for p in x for q in y):
                    return True
        return False

    def atom_sets(self, branch: _Node) -> list[frozenset[str]] | None:
        out: list[frozenset[str]] = []
        for item in branch.items:
            while item.kind == "repeat" and not item.safe:
                item = item.items[0]
            if item.kind != "atom":
                return None
            out.append(self.chars(item))
        return out or None

    def walk(self, node: _Node) -> None:
        if node.kind == "repeat" and not node.safe and (node.high is None or node.high >= _LARGE):
            body = node.items[0]
            inner = self.only(body)
            if inner:
                self.findings.append(
                    Finding(
                        node.offset,
                        "a repetition inside a repetition can split one text in exponentially "
                        "many ways",
                    )
                )
                return
            if self.same_branches(body):
                self.findings.append(
                    Finding(
                        node.offset,
                        "a repetition of alternatives that match the same characters",
                    )
                )
                return
        for item in node.items:
            self.walk(item)


HINT = (
    "let each character be matched one way only (a+ for (a+)+), or make the inner repetition "
    f"possessive (a++) or atomic ((?>a+)); at run time a search stops after "
    f"{round(PATTERN_TIMEOUT_S * 1000)} ms"
)


def catastrophe(found: Finding, at: Location) -> tuple[str, Location, str]:
    """The message, location and hint of CH112 for ``found``, at ``at``."""
    return f"pattern can backtrack catastrophically: {found.message}", at, HINT


def catastrophic(pattern: str, flags: int = 0) -> list[Finding]:
    """The repetitions of ``pattern`` that can backtrack catastrophically, outermost first."""
    verbose = bool(flags & regex.VERBOSE) or regex.match(r"\(\?[a-zA-Z]*x", pattern) is not None
    try:
        tree = _Parser(pattern, verbose).parse()
    except (IndexError, ValueError):  # a pattern this parser cannot read: nothing to say
        return []
    analysis = _Analysis(flags & (regex.IGNORECASE | regex.DOTALL | regex.ASCII))
    analysis.walk(tree)
    return analysis.findings
