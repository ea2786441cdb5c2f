"""docs/memory.md: every ``python example`` block runs (its asserts are the documentation's
claims), with ``workdir`` a fresh directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "memory.md"
BLOCKS = re.findall(r"```python example\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) == 3  # §3 the ladder, §6 the lifecycle, §8 shared memory


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, tmp_path: Path) -> None:
    exec(compile(code, str(DOC), "exec"), {"workdir": tmp_path})
