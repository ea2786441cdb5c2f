"""The runtime never imports the parser (ARCHITECTURE §1): checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
    """In a subprocess: import-linter configures logging for the process (it disables every
    logger that exists), and its cache would be a file in the checkout shared by workers."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 3 kept, 0 broken." in out.stdout


def test_the_cli_contract_names_every_other_module() -> None:
    """A module added to charter is covered by "Nothing imports the command line" only when the
    contract lists it: this keeps the list whole."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c.get("forbidden_modules") == ["charter.cli"]
    ]
    package = root / "framework" / "charter"
    names = {p.stem for p in package.glob("*.py")} | {
        p.parent.name for p in package.glob("*/__init__.py")
    }
    expected = {f"charter.{n}" for n in names - {"__init__", "__main__", "cli"}}
    assert set(contract["source_modules"]) == expected
