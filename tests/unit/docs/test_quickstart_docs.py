"""docs/quickstart.md: every ``python example`` block runs in a fresh directory ``workdir``
that sees the repository's domains/ (as the repository root does): one talks to the finance
pack, one scaffolds a pack there and talks to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "quickstart.md"
BLOCKS = re.findall(r"```python example\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the example changes directory: undone after the test
    (tmp_path / "domains").symlink_to(DOC.parents[1] / "domains")  # "finance" resolves
    exec(compile(code, str(DOC), "exec"), {"workdir": tmp_path})
