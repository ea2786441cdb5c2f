"""The DSL's LALR parser, built once and shipped as ``charter.lark.tables`` next to the grammar.

Building the parser from ``charter.lark`` (grammar analysis, LALR tables) takes about a
hundred milliseconds, most of a cold ``charter validate``; loading the saved tables takes a few.
The tables file starts with one JSON line, the fingerprint of what it was built from (the
grammar text, the Lark options and the Lark version), followed by ``Lark.save`` output. When
the file is missing, was built from anything else, or fails to load, the parser is built from
the grammar as before, so a stale file costs time, never correctness.

Regenerate it after editing the grammar or upgrading Lark::

    python -m charter.dsl.tables
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import lark

GRAMMAR = "charter.lark"
TABLES = "charter.lark.tables"
REGENERATE = "python -m charter.dsl.tables"
OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "start": ["start", "action_start"],
    "propagate_positions": True,
    "maybe_placeholders": True,
}
_FORMAT = 1


def grammar_text() -> str:
    return resources.files("charter.dsl").joinpath(GRAMMAR).read_text(encoding="utf-8")


def fingerprint(grammar: str) -> dict[str, Any]:
    """What the tables depend on: the grammar, the options and the Lark version."""
    options = json.dumps(OPTIONS, sort_keys=True)
    digest = hashlib.sha256(f"{grammar}\0{options}".encode()).hexdigest()
    return {"format": _FORMAT, "grammar_sha256": digest, "lark": lark.__version__}


def build(grammar: str) -> lark.Lark:
    """The parser built from the grammar text: the slow way, always correct."""
    return lark.Lark(grammar, **OPTIONS)


def dumps(parser: lark.Lark, grammar: str) -> bytes:
    """The tables file for ``parser``, which must have been built from ``grammar``."""
    out = io.BytesIO()
    out.write(json.dumps(fingerprint(grammar), sort_keys=True).encode() + b"\n")
    parser.save(out)
    return out.getvalue()


def header(data: bytes) -> dict[str, Any] | None:
    """The fingerprint a tables file was built from, or None if it has none."""
    line, newline, _ = data.partition(b"\n")
    try:
        found = json.loads(line) if newline else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def loads(data: bytes, grammar: str) -> lark.Lark | None:
    """The parser saved in ``data`` if it was built from ``grammar`` by this Lark, else None."""
    if header(data) != fingerprint(grammar):
        return None
    try:
        return lark.Lark.load(io.BytesIO(data.partition(b"\n")[2]))
    except Exception:  # a damaged file: build from the grammar instead
        return None


def shipped() -> bytes | None:
    """The tables file in the installed package, if there is one."""
    try:
        return resources.files("charter.dsl").joinpath(TABLES).read_bytes()
    except OSError:
        return None


def load_parser() -> lark.Lark:
    """The DSL parser: from the shipped tables when they are current, else from the grammar."""
    grammar = grammar_text()
    data = shipped()
    parser = loads(data, grammar) if data is not None else None
    return parser if parser is not None else build(grammar)


def write(path: Path | None = None) -> Path:
    """Build the parser from the grammar and save its tables (by default, into the package)."""
    target = path or Path(str(resources.files("charter.dsl").joinpath(TABLES)))
    grammar = grammar_text()
    target.write_bytes(dumps(build(grammar), grammar))
    return target


if __name__ == "__main__":
    print(f"wrote {write(Path(sys.argv[1]) if len(sys.argv) > 1 else None)}")
