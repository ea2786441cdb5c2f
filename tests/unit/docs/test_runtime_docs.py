"""docs/runtime.md: every ``python example`` block runs, in a fresh working directory that
sees the repository's domains/, with the memory key set (the ecommerce pack encrypts card
and ID numbers)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "runtime.md"
BLOCKS = re.findall(r"```python example\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) == 1


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_MEMORY_KEY", base64.b64encode(bytes(range(32))).decode())
    (tmp_path / "domains").symlink_to(DOC.parents[1] / "domains")  # "ecommerce" resolves
    exec(compile(code, str(DOC), "exec"), {})
    assert capsys.readouterr().out == (
        "pass 您的订单DD202405010001已发货，正在运输中。 ('【目标对齐】Y', '【约束合规】Y', '【不确定性】低')\n"
    )
