"""No module of charter grows past about 400 lines (issue 19): a module holds one idea, and a
file that outgrows that is split along its seams before it lands."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "framework" / "charter"
LIMIT = 400


def test_no_module_is_over_the_limit() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 200
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
