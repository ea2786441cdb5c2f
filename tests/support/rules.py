"""Rules written in a test: a one-rule rules.yaml, and the type of the ``compile_rules``
fixture (``tests/unit/conftest.py``) that compiles such a text into a pack."""

from __future__ import annotations

import json
from collections.abc import Callable

from charter.compile.compiled import CompiledPack
from charter.diagnostics import Diagnostic

PACK_YAML = "name: unit\nversion: 0.1.0\n"

CompileText = Callable[[str], tuple[CompiledPack | None, list[Diagnostic]]]


def one_rule(check: str, *, when: str | None = None, on_fail: str = "retry") -> str:
    """A rules.yaml with a single rule ``r``; the expression is YAML-quoted safely."""
    lines = ["rules:", "  - id: r", "    describe: r", f"    check: {json.dumps(check)}"]
    if when is not None:
        lines.append(f"    when: {json.dumps(when)}")
    lines.append(f"    on_fail: {json.dumps(on_fail)}")
    return "\n".join(lines) + "\n"
