"""Read one pack file as plain data that still knows where every node came from.

PyYAML composes the node graph (with libyaml where it agrees, see ``_compose``); the data is
built from it by ``_builder`` rather than by a constructor so that a JSON pointer can be walked
back to its node (``located.LocatedDoc``), and so that pack-hostile features (duplicate keys,
unknown tags, multiple documents, alias bombs) become diagnostics instead of surprises
(``_yamlerrors`` words PyYAML's own errors).
Scalars resolve with the YAML 1.2 core schema: ``no``, ``on`` and ``2024-01-01`` stay strings.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from charter.diagnostics import Diagnostic, Location, error, sort_diagnostics
from charter.pack._builder import Builder
from charter.pack._compose import compose
from charter.pack._yamlerrors import syntax_error, tab_diagnostics
from charter.pack.located import MAX_ALIGNED, LocatedDoc, Pointer, _Source

__all__ = ["MAX_ALIGNED", "LocatedDoc", "Pointer", "load_yaml"]

# Far beyond any real pack; stops alias bombs before jsonschema walks them exponentially.
_MAX_NODES = 1_000_000


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
    tabs = tab_diagnostics(src)
    try:
        root = compose(text)
    except yaml.YAMLError as exc:
        problem = syntax_error(exc, src)
        # The tab is the cause; PyYAML's "cannot start any token" there would only confuse.
        if any(d.location.line == problem.location.line for d in tabs):
            return None, tabs
        return None, [*tabs, problem]
    except RecursionError:
        return None, [*tabs, error("CH001", "the document is nested too deeply", src.loc(0))]
    builder = Builder(src)
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
