"""docs/runtime.md: every ``python example`` block runs, in a fresh working directory that
sees the repository's domains/, with the memory key set (the packs encrypt card and ID
numbers), and prints exactly the ``text`` block that follows it on the page."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "runtime.md"
EXAMPLES = re.findall(
    r"```python example\n(.*?)```\n+```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S
)


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) == 3
    assert DOC.read_text(encoding="utf-8").count("```python example") == len(EXAMPLES)


@pytest.mark.parametrize(
    ("code", "printed"), EXAMPLES, ids=[f"block{i}" for i in range(len(EXAMPLES))]
)
def test_example_runs(
    code: str,
    printed: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_MEMORY_KEY", base64.b64encode(bytes(range(32))).decode())
    (tmp_path / "domains").symlink_to(DOC.parents[1] / "domains")  # "ecommerce" resolves
    exec(compile(code, str(DOC), "exec"), {})
    assert capsys.readouterr().out == printed
