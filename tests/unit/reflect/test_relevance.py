"""The relevance index never changes an outcome: skipping rules is only an optimisation.

For every first-party pack and a generated pack of 200 rules, on texts built from the packs'
own literals, amounts, dates, percents and links, ``Engine.evaluate`` (which runs only the
rules some evidence can affect) must equal running every rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.compile.api import compile_path
from charter.compile.relevance import info, rule_sources
from charter.contracts.registry import Registry
from charter.dsl.parser import parse_expr
from charter.reflect.engine import Engine
from tests.support.hypo import examples

ROOT = Path(__file__).resolve().parents[3]
PACKS = ["domains/finance", "domains/ecommerce", "domains/medical"]
PIECES = [
    "¥12,345.60",
    "（壹万贰仟叁佰肆拾伍元陆角）",
    "壹万贰仟元整",
    "299元",
    "1.2万元",
    "3.5%",
    "2024-05-01",
    "2025年3月8日",
    "5月1日",
    "https://www.example.com/a",
    "（请自行核实）",
    "财税〔2023〕1号",
    "布洛芬",
    "请遵医嘱",
    "不能",
    "值",
    "金",
    "你得了",
    "吗",
    "，",
    "。",
    " ",
]


def _engines(registry: Registry, tmp: Path) -> list[Engine]:
    engines = []
    for rel in PACKS:
        pack, diags = compile_path(ROOT / rel, registry, cache_dir=None)
        assert pack is not None, diags
        engines.append(Engine(pack, registry))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_samples import SAMPLES  # type: ignore[import-not-found]
        from gen_pack import generate, write_pack  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    root = write_pack(generate(200, [s.output for s in SAMPLES]), tmp / "generated")
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None, diags
    engines.append(Engine(pack, registry))
    return engines


@pytest.fixture(scope="module")
def engines(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> list[Engine]:
    return _engines(registry, tmp_path_factory.mktemp("relevance"))


@st.composite
def texts(draw: st.DrawFn, literals: list[str]) -> str:
    parts = draw(st.lists(st.sampled_from(PIECES + literals) | st.text(max_size=4), max_size=14))
    return "".join(parts)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(data=st.data())
def test_indexed_evaluation_equals_running_every_rule(
    engines: list[Engine], data: st.DataObject
) -> None:
    engine = data.draw(st.sampled_from(engines))
    text = data.draw(texts(list(engine.pack.literals)))
    context = data.draw(
        st.sampled_from([{}, {"low_confidence": True}, {"memory": {"min_confidence": 0.5}}])
    )
    env = engine._env(text, "", context)
    everything = {b.rule.id: engine._outcome(b, env) for b in engine._rules}
    assert engine.evaluate(text, "", context) == everything


@pytest.mark.parametrize(
    ("expr", "empty", "literals", "extractors"),
    [
        ('output contains "a"', False, {"a"}, set()),
        ('not output contains any ["a", "b"]', True, {"a", "b"}, set()),
        ("every money in output has twin money_upper", True, set(), {"money"}),
        ("some money in output has unit", False, set(), {"money"}),
        ('output mentions percent near "收益"', False, {"收益"}, set()),
        ("output mentions percent", False, set(), {"percent"}),
        ("count(date in output) >= 1", False, set(), {"date"}),
        ("count(date in output) == 0", True, set(), {"date"}),
        ('output contains "a" and context.x == 1', False, {"a"}, set()),
        ('output contains "a" or output contains "b"', False, {"a", "b"}, set()),
        ('not output contains "a" or context.x == 1', True, {"a"}, set()),
    ],
)
def test_sources_of_expressions(
    expr: str, empty: bool, literals: set[str], extractors: set[str]
) -> None:
    found = info(parse_expr(expr))
    assert found is not None
    assert (found[0], set(found[1].literals), set(found[1].extractors)) == (
        empty,
        literals,
        extractors,
    )


@pytest.mark.parametrize(
    "expr",
    [
        "output matches /a/",
        "len(output) > 3",
        'input contains "a"',
        "context.x == 1",
        'output contains "a" or context.x == 1',
        "count(date in output) > len(output)",
    ],
)
def test_expressions_that_must_always_run(expr: str) -> None:
    assert info(parse_expr(expr)) is None


def test_a_false_guard_is_enough_to_skip() -> None:
    when = parse_expr('output contains "收益"')
    check = parse_expr("len(output) > 3")
    sources = rule_sources(when, check)
    assert sources is not None and set(sources.literals) == {"收益"}
