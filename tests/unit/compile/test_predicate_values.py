"""Predicate arguments of kind ``value``: a path read from the turn each time, passed as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.plugins.hookspecs import hookimpl
from charter.plugins.host import registry_from
from charter.reflect.engine import Engine


class MentionsAny:
    name = "mentions_any"
    params = ("value",)

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, text: str, words: Any) -> bool:
        self.seen.append(words)
        return isinstance(words, list) and any(str(w) in text for w in words)


PRED = MentionsAny()


class Plugin:
    @hookimpl
    def charter_register_predicates(self) -> list[Any]:
        return [PRED]


@pytest.fixture(scope="module")
def registry() -> Registry:
    return registry_from({"p": Plugin()})


def compile_rule(tmp_path: Path, registry: Registry, check: str) -> tuple[Any, list[str]]:
    (tmp_path / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (tmp_path / "rules.yaml").write_text(
        f"rules:\n  - id: r\n    describe: d\n    check: {check}\n    on_fail: retry\n",
        encoding="utf-8",
    )
    pack, diags = compile_path(tmp_path, registry, cache_dir=None)
    return pack, [f"{d.code} {d.message}" for d in diags]


def test_a_value_is_read_from_the_turn(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_rule(tmp_path, registry, "mentions_any(output, memory.words)")
    assert diags == []
    engine = Engine(pack, registry)
    PRED.seen.clear()
    assert engine.evaluate("买了黄金", context={"memory": {"words": ["黄金"]}}) == {"r": "pass"}
    assert engine.evaluate("买了黄金", context={"memory": {"words": ["白银"]}}) == {"r": "fail"}
    assert engine.evaluate("买了黄金") == {"r": "fail"}
    assert PRED.seen == [["黄金"], ["白银"], None]  # the list itself; nothing when missing


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ('mentions_any(output, "黄金")', "CH107 argument of 'mentions_any' must be a value"),
        ("mentions_any(output, nowhere.words)", "CH101 unknown subject 'nowhere'"),
    ],
)
def test_a_value_must_be_a_known_path(
    tmp_path: Path, registry: Registry, check: str, message: str
) -> None:
    _, diags = compile_rule(tmp_path, registry, check)
    assert diags == [message]
