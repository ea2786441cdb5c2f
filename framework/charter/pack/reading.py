"""Reading one pack file for the loader: ``load_yaml`` then the schema, once per content.

Also how a path is shown in diagnostics (``display_path``), which the command line uses too.
"""

from __future__ import annotations

import os
from pathlib import Path

from charter.diagnostics import Diagnostic
from charter.pack.schema import validate
from charter.pack.yamlsrc import LocatedDoc, load_yaml


def display_path(path: Path) -> str:
    """Paths in diagnostics are relative to the working directory when they are below it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(absolute)


_Read = tuple[LocatedDoc | None, tuple[Diagnostic, ...]]
# Process-wide: a ruleset extended by several packs is parsed and validated once. Keyed by the
# shown path and the kind, holding the bytes it was read from, so an edited file is read again
# (however quickly it was edited) and each file keeps one entry.
_READS: dict[tuple[str, str], tuple[bytes, _Read]] = {}
_MAX_READS = 1024


def read_file(name: str, kind: str) -> _Read:
    """``load_yaml`` and ``validate`` of one file, remembered while its bytes stay the same."""
    try:
        raw = Path(name).read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raw, text = b"", None  # load_yaml reports it
    hit = _READS.get((name, kind))
    if text is not None and hit is not None and hit[0] == raw:
        return hit[1]
    doc, diags = load_yaml(name, text)
    if doc is not None:
        diags = [*diags, *validate(doc, kind)]
    result = doc, tuple(diags)
    if text is not None:
        if len(_READS) >= _MAX_READS:
            del _READS[next(iter(_READS))]
        _READS[(name, kind)] = raw, result
    return result
