"""The runtime never imports the parser (ARCHITECTURE §1): checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def test_engine_import_does_not_load_the_parser_or_yaml() -> None:
    code = (
        "import sys, charter.reflect.engine, charter.compile.compiled\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('lark', 'yaml', 'jsonschema')"
        " or m in ('charter.dsl.parser', 'charter.compile.stages', 'charter.pack.loader'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_import_linter_contracts_hold() -> None:
    from importlinter.cli import lint_imports

    assert lint_imports() == 0
