"""The disk cache: hits when nothing changed, misses on any change of sources or plugins."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from charter.compile import api
from charter.compile import cache as cache_module
from charter.compile.api import compile_path
from charter.contracts.registry import Registry

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the finance pack with its rulesets, so tests can edit files."""
    rulesets = ("zh-customer-service", "uncertainty", "memory-grounding")
    for rel in ("domains/finance", *(f"rulesets/{r}" for r in rulesets)):
        shutil.copytree(ROOT / rel, tmp_path / rel)
    return tmp_path


def _count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = api.compile_pack

    def spy(source, registry, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(source.name)
        return real(source, registry, **kwargs)

    monkeypatch.setattr(api, "compile_pack", spy)
    return calls


def test_second_compile_comes_from_the_cache(
    tree: Path, tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_compiles(monkeypatch)
    cache = tmp_path / "cache"
    first, diags = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert first is not None and diags == []
    second, diags = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert calls == ["finance"]
    assert second == first and second is not first
    assert [r.id for r in second.rules] == [r.id for r in first.rules]


@pytest.mark.parametrize(
    "edit",
    [
        "domains/finance/rules.yaml",
        "rulesets/zh-customer-service/rules.yaml",  # a file reached through extends
        "domains/finance/pack.yaml",
    ],
)
def test_editing_any_source_recompiles(
    tree: Path, tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    calls = _count_compiles(monkeypatch)
    cache = tmp_path / "cache"
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    path = tree / edit
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert calls == ["finance", "finance"]


def test_a_new_file_in_the_pack_recompiles(
    tree: Path, tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_compiles(monkeypatch)
    cache = tmp_path / "cache"
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    (tree / "domains/finance/goals.yaml").write_text("intents: []\n", encoding="utf-8")
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert len(calls) == 2


def test_other_plugins_mean_another_cache_entry(
    tree: Path, tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_compiles(monkeypatch)
    cache = tmp_path / "cache"
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    other = dataclasses.replace(registry, plugins={**registry.plugins, "acme": "1.0"})
    pack, _ = compile_path(tree / "domains/finance", other, cache_dir=cache)
    assert len(calls) == 2
    assert pack is not None


def test_other_charter_code_means_another_cache_entry(
    tree: Path, tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a checkout edited since the pack was cached compiles afresh (the code stamp changed)
    calls = _count_compiles(monkeypatch)
    cache = tmp_path / "cache"
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    monkeypatch.setattr(cache_module, "code_stamp", lambda: "edited")
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert calls == ["finance", "finance"]


def test_the_code_stamp_follows_the_compiling_modules() -> None:
    stamp = cache_module.code_stamp()
    assert len(stamp) == 64 and stamp == cache_module.code_stamp()
    assert cache_module._COMPILING == ("compile", "dsl", "pack", "contracts", "text")


def test_warnings_survive_the_cache(tree: Path, tmp_path: Path, registry: Registry) -> None:
    pack_yaml = tree / "domains/finance/pack.yaml"
    pack_yaml.write_text(pack_yaml.read_text(encoding="utf-8") + "colour: blue\n", "utf-8")
    cache = tmp_path / "cache"
    _, first = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    _, second = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert [d.code for d in first] == [d.code for d in second] == ["CH012"]


def test_packs_with_errors_are_not_cached(tree: Path, tmp_path: Path, registry: Registry) -> None:
    rules = tree / "domains/finance/rules.yaml"
    rules.write_text(
        rules.read_text(encoding="utf-8").replace("mentions tax_doc", "mentions tax_dok"), "utf-8"
    )
    cache = tmp_path / "cache"
    compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert not (cache / "packs").exists()


def test_a_corrupt_cache_entry_is_ignored(tree: Path, tmp_path: Path, registry: Registry) -> None:
    cache = tmp_path / "cache"
    pack, _ = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert pack is not None
    for blob in (cache / "packs").iterdir():
        blob.write_bytes(b"not a pickle")
    again, diags = compile_path(tree / "domains/finance", registry, cache_dir=cache)
    assert again == pack and diags == []


def test_an_unwritable_cache_only_costs_speed(
    tree: Path, tmp_path: Path, registry: Registry
) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x", encoding="utf-8")
    pack, diags = compile_path(tree / "domains/finance", registry, cache_dir=blocker / "c")
    assert pack is not None and diags == []
