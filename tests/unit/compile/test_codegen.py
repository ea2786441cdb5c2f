"""The generated fast path agrees with the closures that explain failures, rule by rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.compile.api import compile_path
from charter.compile.build import Builder
from charter.compile.codegen import rule_function
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
    "¥12,000.00",
    "299元",
    "1.2万元",
    "3.5%",
    "2024-05-01",
    "2025年3月8日",
    "https://www.example.com/a",
    "（请自行核实）",
    "财税〔2023〕1号",
    "布洛芬",
    "请遵医嘱",
    "不能",
    "，",
    "。",
]
CONTEXTS: list[dict[str, Any]] = [
    {},
    {"low_confidence": True},
    {"memory": {"min_confidence": 0.5}},
    {"memory": {"min_confidence": "x"}},
]


@pytest.fixture(scope="module")
def engines(registry: Registry) -> list[Engine]:
    out = []
    for rel in PACKS:
        pack, diags = compile_path(ROOT / rel, registry, cache_dir=None)
        assert pack is not None, diags
        out.append(Engine(pack, registry))
    return out


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(data=st.data())
def test_generated_rules_equal_the_closures(engines: list[Engine], data: st.DataObject) -> None:
    engine = data.draw(st.sampled_from(engines))
    words = PIECES + list(engine.pack.literals)
    text = "".join(data.draw(st.lists(st.sampled_from(words) | st.text(max_size=3), max_size=12)))
    env = engine._env(text, "", data.draw(st.sampled_from(CONTEXTS)))
    for (rid, generated), bound in zip(engine._plan, engine._rules, strict=True):
        assert generated(env) == engine._outcome(bound, env), rid


def _function(registry: Registry, check: str, when: str | None = None) -> Any:
    literals = {"收益": 0, "历史业绩": 1}
    builder = Builder(literals, {}, registry.predicates)
    return rule_function("r", parse_expr(when) if when else None, parse_expr(check), builder)


def test_the_generated_source_reads_like_the_rule(registry: Registry) -> None:
    fn = _function(
        registry,
        'output contains "历史业绩"',
        when='output mentions percent near ["收益"]',
    )
    assert fn.__doc__ == (
        "def rule(env):\n"
        "    tx1 = env.output\n"
        "    its2 = env.cached_items.get(_k3)\n"
        "    if its2 is None:\n"
        "        its2 = env.items('percent', 'output', tx1)\n"
        "    w = False\n"
        "    for it5 in its2:\n"
        "        if _n4(env, it5, tx1, 'output'):\n"
        "            w = True\n"
        "            break\n"
        "    if not w:\n"
        "        return 'skip'\n"
        "    tx6 = env.output\n"
        "    h7 = env.hits('output', tx6)\n"
        "    t = 1 in h7\n"
        "    return 'pass' if t else 'fail'\n"
    )


def test_quantifiers_and_junctions(registry: Registry) -> None:
    fn = _function(
        registry,
        'every money in output (has unit and decimals == 2) or not output contains "收益"',
    )
    assert fn.__doc__ == (
        "def rule(env):\n"
        "    tx1 = env.output\n"
        "    its2 = env.cached_items.get(_k3)\n"
        "    if its2 is None:\n"
        "        its2 = env.items('money', 'output', tx1)\n"
        "    t = True\n"
        "    if its2:\n"
        "        for it4 in its2:\n"
        "            if not (((it4.unit is not None) and "
        "(it4.decimals is not None and it4.decimals == 2))):\n"
        "                t = False\n"
        "                break\n"
        "    if not t:\n"  # `or`: the second operand runs only when the first is false
        "        tx5 = env.output\n"
        "        h6 = env.hits('output', tx5)\n"
        "        t = 0 in h6\n"
        "        t = not t\n"
        "    return 'pass' if t else 'fail'\n"
    )


def test_generated_code_sees_no_builtins(registry: Registry) -> None:
    fn = _function(registry, 'output contains "收益"')
    assert set(fn.__globals__["__builtins__"]) == {"type", "bool"}
