"""The public API: every name in ``charter.__all__`` resolves, and a pack checks end to end."""

from __future__ import annotations

from pathlib import Path

import charter

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_resolves() -> None:
    for name in charter.__all__:
        assert getattr(charter, name) is not None, name


def test_check_a_text_through_the_public_api() -> None:
    registry, problems = charter.default_registry()
    assert problems == ()
    pack, diagnostics = charter.compile_path(ROOT / "domains" / "finance", registry, cache_dir=None)
    assert pack is not None and diagnostics == []
    result = charter.Engine(pack, registry).check("该基金近一年收益率为5.2%。")
    assert isinstance(result, charter.CheckResult)
    assert result.verdict == "fixed"
    assert result.fixed_text == "该基金近一年收益率为5.2%。（历史业绩不预示未来表现）"
    assert [f.rule_id for f in result.findings] == ["yield-disclaimer"]
