"""One layout for pack YAML: what ``charter fmt`` writes.

The layout is the one the shipped packs are written in: two spaces per level, list items
indented under their key (``- `` two spaces in), block style where the author wrote block
style and flow style (``[a, b]``) where the author wrote flow style, ``null`` for an empty
value, one line per plain string however long (nothing is folded at a width), Chinese text
as characters, never as ``\\u`` escapes.

What an author chose is kept: comments and blank lines, key order, quoting (a quoted string
stays quoted, in its quotes; a plain one stays plain — unquoting the shipped packs' quoted
messages would rewrite some two hundred lines for no reader's benefit), block scalars with
their indicators and, for ``>``, their line breaks; anchors, aliases and merge keys.

ruamel.yaml (round-trip mode) does the layout, but the loader reads packs with PyYAML and the
YAML 1.2 core schema, and the two readers do not agree on everything (a ``%YAML 1.1``
directive makes ruamel.yaml read ``yes`` as a boolean and write it back as ``true``). So a
file is formatted only when the loader reads it without a YAML error, and the result is read
again by the loader: when it would read anything differently, the file is left as it was and
the first value that would change is reported.
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from charter.diagnostics import Diagnostic, Location, error
from charter.pack.layout import CONVERSATIONS_DIR, PACK_FILES, SKILLS_DIR, TESTS_DIR
from charter.pack.model import patches_dir
from charter.pack.yamlsrc import Pointer, load_yaml

# ``key:`` at two spaces a level, ``- item`` two spaces in from its key
MAPPING_INDENT, SEQUENCE_INDENT, SEQUENCE_OFFSET = 2, 4, 2
# a line is never folded: a DSL expression or a reply template reads best on one line
_NO_WRAP = 1 << 30
# a document start marker alone on the first content line (with a comment, perhaps)
_DOC_START = re.compile(r"^---[ \t]*(#.*)?$")
_DOC_END = re.compile(r"^\.\.\.[ \t]*(#.*)?$")


class FormatError(ValueError):
    """The text cannot be formatted without changing what the loader reads from it."""

    def __init__(self, message: str, line: int = 0, col: int = 0, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.line, self.col, self.hint = message, line, col, hint


@functools.cache
def _classes() -> tuple[type, type]:
    """ruamel.yaml's round-trip constructor and representer with the pack layout's changes
    (subclasses: ``add_representer`` on ruamel.yaml's own classes would change them for every
    user in the process)."""
    # Imported here: only ``charter fmt`` needs ruamel.yaml, and it is slow to import.
    from ruamel.yaml.constructor import RoundTripConstructor
    from ruamel.yaml.representer import RoundTripRepresenter
    from ruamel.yaml.scalarstring import ScalarString

    class Verbatim(ScalarString):
        """A number as written. ruamel.yaml renders its numbers anew, and not always to the
        same value (3.433431430909133e+16 came back as ...132e+16), and fails on some that it
        resolves as numbers (-_)."""

        tag = ""

    class Constructor(RoundTripConstructor):
        pass

    class Representer(RoundTripRepresenter):
        pass

    def construct(tag: str) -> Any:
        def number(_: Any, node: Any) -> Verbatim:
            out: Verbatim = Verbatim(node.value, anchor=node.anchor)
            out.tag = tag
            return out

        return number

    def represent(rep: Any, data: Verbatim) -> Any:
        return rep.represent_scalar(data.tag, str(data), anchor=data.yaml_anchor(any=True))

    for tag in (_INT, _FLOAT):
        Constructor.add_constructor(tag, construct(tag))
    Representer.add_representer(Verbatim, represent)
    # an empty value is written null, as the shipped packs write it ("parent: null")
    Representer.add_representer(type(None), lambda rep, _: rep.represent_scalar(_NULL, "null"))
    return Constructor, Representer


_INT, _FLOAT, _NULL = (f"tag:yaml.org,2002:{kind}" for kind in ("int", "float", "null"))


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.Constructor, yaml.Representer = _classes()
    yaml.preserve_quotes = True
    yaml.width = _NO_WRAP
    yaml.indent(mapping=MAPPING_INDENT, sequence=SEQUENCE_INDENT, offset=SEQUENCE_OFFSET)
    yaml.allow_unicode = True
    # [{required: [a]}] stays as written; ruamel.yaml would drop the braces: [required: [a]]
    yaml.brace_single_entry_mapping_in_flow_sequence = True
    return yaml


def _without_markers(text: str) -> str:
    """The text without a leading ``---`` and a trailing ``...`` line (a comment on it stays):
    a pack file is one document, and ruamel.yaml would move a comment on the ``---`` line to
    an odd column. (ruamel.yaml writes ``...`` back after a ``|+`` scalar that ends the file.)"""
    lines = text.split("\n")
    content = [i for i, line in enumerate(lines) if line.strip() and not _is_comment(line)]
    drop: dict[int, str | None] = {}
    for i, marker in ((content[:1], _DOC_START), (content[1:][-1:], _DOC_END)):
        if i and (m := marker.match(lines[i[0]])):
            drop[i[0]] = m[1]
    kept = (drop.get(i, line) for i, line in enumerate(lines))
    return "\n".join(line for line in kept if line is not None)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _tidy(text: str) -> str:
    """A document without content (empty, or comments only): lines without trailing blanks,
    no blank lines at the end, one final newline (none when nothing is left)."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def _finish(text: str) -> str:
    """ruamel.yaml's output with each comment line at the indentation of the line it
    precedes, so that it stays with that key or item after the levels were re-indented
    (ruamel.yaml keeps its old column; comments after the last value keep theirs), and
    without blank lines at the end. Lines inside multi-line scalars are content."""
    lines = text.removesuffix("\n").split("\n")
    inside: set[int] = set()
    last = 0  # the last line a scalar reaches: a |+ scalar's blank lines are its own
    for first, final in _scalar_lines(text):
        inside.update(range(first + 1, final + 1))
        last = max(last, final)
    while len(lines) > last + 1 and not lines[-1].strip():
        lines.pop()
    indent: int | None = None
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if i in inside or not line.strip():
            continue
        if _is_comment(line):
            if indent is not None:
                lines[i] = " " * indent + line.lstrip()
        else:
            indent = len(line) - len(line.lstrip(" "))
    return "\n".join(lines) + "\n"


def _scalar_lines(text: str) -> list[tuple[int, int]]:
    """The first and last line (0-based) of every scalar, read with libyaml when PyYAML has
    it (ten times faster than PyYAML's own parser, which reads the same lines)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[tuple[int, int]] = []
    try:
        for event in yaml.parse(text, Loader=loader):
            start, end = event.start_mark, event.end_mark
            if isinstance(event, yaml.ScalarEvent) and start is not None and end is not None:
                # a block scalar ends at the start of the line after it
                final = end.line - 1 if end.column == 0 and end.line > start.line else end.line
                out.append((start.line, final))
    except yaml.YAMLError:
        return out  # the loader's check that follows reports it
    return out


def format_yaml(text: str) -> str:
    """``text`` in the pack layout; the same text when it already is.

    Raises ``FormatError`` when ruamel.yaml cannot read it, or when the loader would read the
    result differently. The caller has made sure the loader reads ``text`` without error."""
    body = _without_markers(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    yaml = _yaml()
    try:
        data = yaml.load(body)
    except Exception as exc:  # ruamel.yaml's errors share no base class with a mark
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise FormatError(
            f"ruamel.yaml cannot read this file: {problem}",
            line,
            col,
            "charter fmt leaves it as it is",
        ) from exc
    if data is None:
        return _tidy(body)
    out = io.StringIO()
    yaml.dump(data, out)
    result = _finish(out.getvalue())
    _check_same(text, result)
    return result


def _check_same(before: str, after: str) -> None:
    old, _ = load_yaml("<before>", before)
    new, diags = load_yaml("<after>", after)
    errors = [d for d in diags if d.is_error]
    if old is None:
        raise FormatError("the loader cannot read this file")
    if new is None or errors:
        problem = errors[0].message if errors else "it cannot be read"
        raise FormatError(f"the formatted file would not load: {problem}", 1, 1, _REPORT)
    ptr = _first_difference(old.data, new.data, ())
    if ptr is not None:
        at = old.loc(ptr)
        shown = "/".join(str(p) for p in ptr) or "the document"
        raise FormatError(
            f"formatting would change what the loader reads at {shown}",
            at.line,
            at.col,
            _REPORT,
        )


_REPORT = (
    "charter fmt leaves the file as it is; a %YAML directive is the usual cause (remove it), "
    "otherwise please report the file"
)


def _first_difference(a: Any, b: Any, ptr: Pointer) -> Pointer | None:
    """Where two loaded documents first differ (None: nowhere); NaN equals NaN here."""
    if type(a) is not type(b):
        return ptr
    if isinstance(a, dict):
        if list(a) != list(b):
            return ptr
        for key in a:
            found = _first_difference(a[key], b[key], (*ptr, key))
            if found is not None:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return ptr
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, (*ptr, i))
            if found is not None:
                return found
        return None
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if a == b else ptr


# ---- files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One file: its text as read and as formatted, or why it was left alone."""

    path: Path
    shown: str  # as messages show it
    before: str
    after: str
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def changed(self) -> bool:
        return not self.diagnostics and self.after != self.before


def format_file(path: Path, shown: str) -> Outcome:
    """Read and format one file (nothing is written). A file the loader cannot read, or
    reads with a YAML error, is left alone with the loader's diagnostics (CH001-CH004)."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        _, diags = load_yaml(shown)  # says why, where, in the loader's words
        return Outcome(path, shown, "", "", tuple(d for d in diags if d.is_error))
    _, diags = load_yaml(shown, raw)
    problems = tuple(d for d in diags if d.is_error)
    if problems:
        return Outcome(path, shown, raw, raw, problems)
    try:
        return Outcome(path, shown, raw, format_yaml(raw))
    except FormatError as exc:
        where = Location(shown, exc.line, exc.col) if exc.line else Location(shown)
        return Outcome(path, shown, raw, raw, (error("CH001", exc.message, where, exc.hint),))


def pack_files(root: Path) -> list[Path]:
    """The YAML files the loader reads from the pack at ``root``, in the order it reads them."""
    files = [root / name for name in PACK_FILES if (root / name).is_file()]
    where = patches_dir(_patches_setting(root / "learning.yaml"))
    for directory in (
        root / SKILLS_DIR,
        *([root / where] if where else []),
        root / TESTS_DIR / CONVERSATIONS_DIR,
    ):
        files += sorted(p for p in directory.glob("*.yaml") if p.is_file())
    return list(dict.fromkeys(files))


def _patches_setting(learning: Path) -> Any:
    if not learning.is_file():
        return None
    doc, _ = load_yaml(learning)
    data = doc.data if doc is not None else None
    return data.get("patches_dir") if isinstance(data, dict) else None


def find_files(paths: Sequence[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files ``charter fmt`` formats for ``paths``: a YAML file as given; a pack's files;
    the files of every pack below a directory (hidden directories and build outputs skipped).
    Also each path that names nothing to format, with the reason."""
    found: list[Path] = []
    nothing: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_file():
            if path.suffix in (".yaml", ".yml"):
                found.append(path)
            else:
                nothing.append((path, "not a YAML file"))
            continue
        roots = _pack_roots(path) if path.is_dir() else []
        if not roots:
            why = "no pack.yaml at or below" if path.is_dir() else "no such file or directory"
            nothing.append((path, why))
        for root in roots:
            found += pack_files(root)
    return list(dict.fromkeys(found)), nothing


def _pack_roots(directory: Path) -> Iterable[Path]:
    # the packs a directory stands for wherever a command takes several (charter.pack.resolve)
    from charter.pack.resolve import packs_below

    return packs_below(directory)
