"""docs/architecture.md moves with the code: its layer diagram is the layers contract, its table
names every package, and every file it points to exists."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "framework" / "charter"


def _text() -> str:
    return PAGE.read_text(encoding="utf-8")


def _contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [
        [name.strip().removeprefix("charter.") for name in layer.split("|")]
        for layer in contract["layers"]
    ]


def test_the_diagram_is_the_layers_contract() -> None:
    block = _text().split("```\n", 2)[1]
    rows = [line.split("  ")[0].strip() for line in block.splitlines() if line.strip()]
    assert [[n.strip() for n in row.split("|")] for row in rows] == _contract_layers()


def test_the_table_names_every_package() -> None:
    table = {
        name
        for cell in re.findall(r"^\| ([^|]+) \|", _text(), re.M)
        for name in re.findall(r"`(\w+)`", cell)
    }
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")} | {"diagnostics"}
    assert sorted(packages - table) == []


def test_every_file_it_points_to_exists() -> None:
    paths = set(re.findall(r"`((?:charter/)?[a-z_/]+\.py)`", _text()))
    assert paths, "the page names files"
    missing = []
    for path in sorted(paths):
        relative = path.removeprefix("charter/")
        found = (PACKAGE / relative).exists() or any(PACKAGE.glob(f"*/{relative}"))
        if not found and not (ROOT / path).exists():
            missing.append(path)
    assert missing == []
