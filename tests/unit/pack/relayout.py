"""A pack file in another layout than ``charter fmt``'s, for the tests that format it back."""

from __future__ import annotations

import io

from ruamel.yaml import YAML


def relayout(text: str) -> str:
    """The same document four spaces a level, list items flush with their key."""
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 30
    rt.indent(mapping=4, sequence=4, offset=0)
    out = io.StringIO()
    rt.dump(rt.load(text), out)
    return out.getvalue()
