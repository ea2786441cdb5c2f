"""``every X in S found in P``: items grounded in other texts, through every compile layer.

The outcome table runs through the Engine over packs compiled from a temporary directory with
the charter-zh extractors; the generated fast path is compared with the closures, and the
relevance index with running every rule, on random texts and contexts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.compile.api import compile_path
from charter.compile.build import Builder
from charter.compile.codegen import rule_function
from charter.compile.env import Env, Grounds
from charter.compile.literals import LiteralTable
from charter.compile.primitives import comparable, ground_texts, item_key
from charter.compile.relevance import info
from charter.contracts.registry import Registry
from charter.contracts.rules import Extractor, Item, ValueKind
from charter.dsl.parser import parse_expr
from charter.reflect.engine import Engine
from tests.support.hypo import examples
from tests.support.rules import CompileText, one_rule

EVERY_MONEY = "every money in output found in context.g"
EVERY_DATE = "every date in output found in context.g"
EVERY_PERCENT = "every percent in output found in context.g"
SOME_MONEY = "some money in output found in context.g"
NO_PERCENT = "no percent in output found in context.banned"

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # -- money: the same amount in any spelling, with the same unit
    (EVERY_MONEY, "合计¥12,345.60", {"g": "报价12345.60元"}, "pass"),
    (EVERY_MONEY, "合计12345.60元", {"g": "报价1.234560万元"}, "pass"),
    (EVERY_MONEY, "合计1.2345600万元", {"g": "¥12,345.6"}, "pass"),
    (EVERY_MONEY, "合计¥12,345.60", {"g": "报价12345.61元"}, "fail"),
    (EVERY_MONEY, "合计¥12,345.60", {"g": "编号12345.60"}, "fail"),  # a number is no money
    (EVERY_MONEY, "合计$5", {"g": "5元"}, "fail"),  # USD is not 元
    (EVERY_MONEY, "合计$5.00", {"g": "USD 5"}, "pass"),
    (EVERY_MONEY, "退我5块钱", {"g": "¥5.00"}, "pass"),
    (EVERY_MONEY, "¥1.00，¥2.00", {"g": "¥1.00"}, "fail"),  # each item must be found
    # money_upper against money_upper; money only against money
    (
        "every money_upper in output found in context.g",
        "人民币壹万贰仟叁佰肆拾伍元陆角整",
        {"g": "壹万贰仟叁佰肆拾伍元陆角"},
        "pass",
    ),
    (
        "every money_upper in output found in context.g",
        "人民币壹万贰仟叁佰肆拾伍元陆角整",
        {"g": "壹万贰仟元整"},
        "fail",
    ),
    (EVERY_MONEY, "¥12,345.60", {"g": "壹万贰仟叁佰肆拾伍元陆角"}, "fail"),
    # -- percent, date
    (EVERY_PERCENT, "收益12.5%", {"g": "百分之十二点五"}, "pass"),
    (EVERY_PERCENT, "收益12.5%", {"g": "12.6%"}, "fail"),
    (EVERY_DATE, "2024年5月1日到账", {"g": "2024-05-01"}, "pass"),
    (EVERY_DATE, "2024/5/1到账", {"g": "2024年5月1日"}, "pass"),
    (EVERY_DATE, "2024年5月2日到账", {"g": "2024-05-01"}, "fail"),
    (EVERY_DATE, "5月1日到账", {"g": "2024-05-01"}, "fail"),  # no year: not the same date
    (EVERY_DATE, "5月1日到账", {"g": "每年5月1日"}, "pass"),
    # -- full-width digits and signs in the grounds
    (EVERY_MONEY, "合计¥12,345.60", {"g": "报价１２３４５．６０元"}, "pass"),
    (EVERY_MONEY, "合计¥12,345.60", {"g": "报价￥１２，３４５．６"}, "pass"),
    (EVERY_PERCENT, "收益12.5%", {"g": "１２．５％"}, "pass"),
    (EVERY_DATE, "2024-05-01到账", {"g": "２０２４年５月１日"}, "pass"),
    # -- the path's value: lists, nested mappings, other values, missing
    (EVERY_MONEY, "¥1.00和¥2.00", {"g": ["¥1.00", "无关", "2元"]}, "pass"),
    (EVERY_MONEY, "¥1.00和¥2.00", {"g": ["¥1.00"]}, "fail"),
    (
        EVERY_MONEY,
        "¥1.00和¥2.00",
        {"g": {"a": [{"b": "首付¥1.00"}], "c": {"d": ("尾款2元",)}}},
        "pass",
    ),
    (EVERY_MONEY, "¥1.00和¥2.00", {"g": {"¥2.00": "¥1.00"}}, "fail"),  # keys are not texts
    (EVERY_MONEY, "¥12,345.60", {"g": [12345.6, True, None, {"x": 12345.6}]}, "fail"),
    (EVERY_MONEY, "¥12,345.60", {}, "fail"),  # missing: nothing is found
    (EVERY_MONEY, "¥12,345.60", {"g": None}, "fail"),
    (EVERY_MONEY, "¥12,345.60", {"g": []}, "fail"),
    (EVERY_MONEY, "没有金额", {}, "pass"),  # no item: every holds
    ("every money in output found in context.a.b[1]", "¥3.00", {"a": {"b": ["¥2", "¥3"]}}, "pass"),
    ("every money in output found in context.a.b[0]", "¥3.00", {"a": {"b": ["¥2", "¥3"]}}, "fail"),
    ("every money in output found in skill.quote", "¥3.00", {"skill": {"quote": "3元"}}, "pass"),
    ("every money in output found in goal.slots", "¥3.00", {"goal": {"slots": ["3元"]}}, "pass"),
    ("every money in output found in memory.facts", "¥3.00", {"memory": {"facts": "4元"}}, "fail"),
    # -- some / no / not
    (SOME_MONEY, "¥1.00和¥2.00", {"g": "2元"}, "pass"),
    (SOME_MONEY, "¥1.00和¥2.00", {"g": "3元"}, "fail"),
    (SOME_MONEY, "没有金额", {"g": "3元"}, "fail"),
    (NO_PERCENT, "利率3.5%", {"banned": ["4.2%", "3.5%"]}, "fail"),
    (NO_PERCENT, "利率3.5%", {"banned": ["4.2%"]}, "pass"),
    (NO_PERCENT, "利率3.5%", {}, "pass"),
    ("every money in output not found in context.banned", "¥5", {"banned": "5元"}, "fail"),
    ("every money in output not found in context.banned", "¥5", {"banned": "6元"}, "pass"),
    # -- with other item checks and expressions
    ('every money in output (has unit "元" and found in context.g)', "$5", {"g": "$5"}, "fail"),
    ('every money in output (has unit "USD" or found in context.g)', "$5", {}, "pass"),
    (f'{EVERY_MONEY} and output contains "合计"', "合计¥1", {"g": "1元"}, "pass"),
    (f"not ({EVERY_MONEY})", "合计¥1", {"g": "2元"}, "pass"),
]


@pytest.mark.parametrize(
    ("check", "text", "context", "expected"),
    CASES,
    ids=[f"{i}:{c[0][:30]}:{c[1][:12]}" for i, c in enumerate(CASES)],
)
def test_outcome(
    engine_for: Callable[[str], Engine],
    check: str,
    text: str,
    context: dict[str, Any],
    expected: str,
) -> None:
    engine = engine_for(one_rule(check))
    assert engine.evaluate(text, "", context)["r"] == expected


@pytest.mark.parametrize(
    ("check", "text", "input", "expected"),
    [
        ("every money in output found in input", "好的，退您¥5.00", "退我5块钱", "pass"),
        ("every money in output found in input", "好的，退您¥6.00", "退我5块钱", "fail"),
        ("every money in input found in output", "好的，退您¥5.00", "退我5块钱", "pass"),
        ("every money in input found in output", "好的，马上处理", "退我5块钱", "fail"),
    ],
)
def test_input_and_output_as_grounds(
    engine_for: Callable[[str], Engine], check: str, text: str, input: str, expected: str
) -> None:
    assert engine_for(one_rule(check)).evaluate(text, input)["r"] == expected


@pytest.mark.parametrize(
    ("check", "text", "context", "evidence"),
    [
        (EVERY_MONEY, "¥1.00，¥2.00，¥3.00", {"g": "2元"}, ("¥1.00", "¥3.00")),
        (EVERY_MONEY, "合计¥12,345.60", {}, ("¥12,345.60",)),
        (NO_PERCENT, "3.5%和百分之四点二", {"banned": ["4.2%"]}, ("百分之四点二",)),
        (f"not ({SOME_MONEY})", "¥1.00，¥2.00", {"g": "¥2"}, ("¥2.00",)),
    ],
)
def test_findings_show_the_items_that_failed(
    engine_for: Callable[[str], Engine],
    check: str,
    text: str,
    context: dict[str, Any],
    evidence: tuple[str, ...],
) -> None:
    result = engine_for(one_rule(check)).check(text, "", context)
    assert result.verdict == "retry"
    assert result.findings[0].evidence == evidence
    assert tuple(text[s:e] for s, e in result.findings[0].spans) == evidence


# ---- the checker ---------------------------------------------------------------------------------

SAME_TEXT_HINT = (
    'to require one, write some money in output; to require a phrase, write output contains "..."; '
    "to ground the items, name where they come from: found in context.<path>"
)


@pytest.mark.parametrize(
    ("check", "diagnostics"),
    [
        (
            "every money in output found in output",
            [
                "4:44-4:50 CH106 'found in output' looks in the text the money items come from, "
                f"so every item is found | {SAME_TEXT_HINT}"
            ],
        ),
        (
            "no date in context.a found in context.a",
            [
                "4:43-4:52 CH106 'found in context.a' looks in the text the date items come from, "
                "so every item is found | name the texts the items must come from: "
                "found in context.<path>"
            ],
        ),
        (
            "every money in output found in model.grounds",
            [
                "4:44-4:49 CH101 unknown subject 'model' | expected one of: context, goal, "
                "input, memory, output, skill"
            ],
        ),
        (
            "every money in output found in pack.prices",
            [
                "4:44-4:48 CH101 'pack' constants are not a text to check | use output, input "
                "or a context path"
            ],
        ),
        (
            "every money in output found in output.lines",
            ["4:44-4:56 CH101 'output' is a text and has no field '.lines' | write just 'output'"],
        ),
        (
            "every money in output (has unit and found in contxt.a)",
            ["4:58-4:64 CH101 unknown subject 'contxt' | did you mean 'context'?"],
        ),
        (
            "every mony in output found in context.a",
            ["4:19-4:23 CH102 unknown extractor 'mony' | did you mean 'money'?"],
        ),
        (
            "every money in output found in",
            [
                "4:43-4:43 CH100 syntax error in the 'check' expression of rule 'r': unexpected "
                "end of expression | 'found in' takes a path to the texts to look in: "
                "found in context.prices"
            ],
        ),
        ("every money in input found in output", []),
        ("every date in output found in context.a", []),
        ("every url in output found in skill.sources", []),
    ],
)
def test_checker_diagnostics(
    compile_rules: CompileText, check: str, diagnostics: list[str]
) -> None:
    _, found = compile_rules(one_rule(check))
    assert [
        f"{d.location.line}:{d.location.col}-{d.location.end_line}:{d.location.end_col} "
        f"{d.code} {d.message} | {d.hint}"
        for d in found
    ] == diagnostics


# ---- evaluation: once per text, the fast path, the relevance index ------------------------------


class Counting:
    """An extractor that records the texts it is run on."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.value_kind: ValueKind = inner.value_kind
        self.has_units = inner.has_units
        self.seen: list[str] = []

    def extract(self, text: str) -> tuple[Item, ...]:
        self.seen.append(text)
        return self.inner.extract(text)

    def canonical(self, item: Item) -> str | None:
        return self.inner.canonical(item)


def test_the_extractor_runs_once_per_ground_text(registry: Registry) -> None:
    money = Counting(registry.extractors["money"])
    checks = [
        "every money in output found in context.g",
        "some money in output found in context.g",
        "no money in output found in context.h",
        "every money in output (has unit and found in context.g)",
    ]
    builder = Builder({}, {}, registry.predicates)
    exprs = [parse_expr(c) for c in checks]
    closures = [builder.expr(e) for e in exprs]
    generated = [rule_function(str(i), None, e, builder) for i, e in enumerate(exprs)]
    env = Env(
        "¥1.00和¥2.00",
        "",
        {"g": ["1元", "2元", "1元"], "h": {"x": "2元", "y": "3元"}},
        LiteralTable({}),
        {"money": money},
    )
    assert [f(env) for f in closures] == [True, True, False, True]
    assert [f(env) for f in generated] == ["pass", "pass", "fail", "pass"]
    env.start_explaining()
    assert [f(env) for f in closures] == [True, True, False, True]
    # the output once; each distinct ground text once, although two paths share "2元"
    assert money.seen == ["¥1.00和¥2.00", "1元", "2元", "3元"]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (EVERY_MONEY, (True, {"money"})),
        (SOME_MONEY, (False, {"money"})),
        (NO_PERCENT, (True, {"percent"})),
        (f"not ({EVERY_MONEY})", (False, {"money"})),
        ("every money in input found in output", None),  # the subject is not the output
        ("every money in context.a found in output", None),
    ],
)
def test_sources(expr: str, expected: tuple[bool, set[str]] | None) -> None:
    found = info(parse_expr(expr))
    assert (None if found is None else (found[0], set(found[1].extractors))) == expected


RULES = [
    EVERY_MONEY,
    SOME_MONEY,
    NO_PERCENT,
    EVERY_DATE,
    "every money_upper in output found in context.g",
    "every money in output (found in context.g or found in context.banned)",
    'every money in output (has unit "元" and not found in context.banned)',
    "no money in output found in input",
    "every date in input found in output",
    "every percent in output found in skill.results",
    'output contains "合计" and every money in output found in context.g',
]
PIECES = [
    "¥12,345.60",
    "12345.6元",
    "1.234560万元",
    "１２３４５．６０元",
    "壹万贰仟叁佰肆拾伍元陆角",
    "$5",
    "5元",
    "3.5%",
    "百分之三点五",
    "2024-05-01",
    "2024年5月1日",
    "5月1日",
    "合计",
    "，",
]


@pytest.fixture(scope="module")
def grounded(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("found_in")
    (root / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    rules = "rules:\n" + "".join(
        f"  - id: r{i}\n    describe: d\n    check: {json.dumps(c)}\n    on_fail: retry\n"
        for i, c in enumerate(RULES)
    )
    (root / "rules.yaml").write_text(rules, encoding="utf-8")
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None and diags == [], diags
    return Engine(pack, registry)


_piece = st.sampled_from(PIECES)
_text = st.lists(st.one_of(_piece, _piece, st.text(max_size=3)), max_size=6).map("".join)
_ground: st.SearchStrategy[Any] = st.recursive(
    st.one_of(_piece, _text, st.none(), st.integers(), st.booleans()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(
    text=_text,
    input=_text,
    context=st.fixed_dictionaries(
        {"g": _ground, "banned": _ground, "skill": st.fixed_dictionaries({"results": _ground})}
    ),
)
def test_fast_path_and_index_equal_the_closures(
    grounded: Engine, text: str, input: str, context: dict[str, Any]
) -> None:
    env = grounded._env(text, input, context)
    everything = {b.rule.id: grounded._outcome(b, env) for b in grounded._rules}
    for rid, generated in grounded._plan:
        assert generated(grounded._env(text, input, context)) == everything[rid], rid
    assert grounded.evaluate(text, input, context) == everything


# ---- the pieces -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "texts"),
    [
        ("一段话", ["一段话"]),
        (None, []),
        (12.5, []),
        (["a", ["b", {"k": "c", "n": 1}], ("d",)], ["a", "b", "c", "d"]),
        ({"k": {"k2": ["x"]}, "j": None}, ["x"]),
    ],
)
def test_ground_texts(value: Any, texts: list[str]) -> None:
    assert ground_texts(value) == texts


def test_a_list_that_contains_itself_is_read_once() -> None:
    loop: list[Any] = ["a"]
    loop.append(loop)
    assert ground_texts(loop) == ["a"]


@dataclass(frozen=True)
class Place:
    name: str
    number: int


def _item(value: Any, unit: str | None = None) -> Item:
    return Item(0, 1, "x", value, unit)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (_item(Decimal("12345.60"), "元"), _item(Decimal("12345.6"), "元"), True),
        (_item(Decimal("5"), "元"), _item(Decimal("5"), "USD"), False),
        (_item(Decimal("5"), "％"), _item(Decimal("5"), "%"), True),
        (_item(Decimal("5")), _item(5), True),
        (_item("ＳＫＵ１００"), _item("SKU100"), True),
        (_item("sku100"), _item("SKU100"), False),
        (_item(date(2024, 5, 1)), _item(date(2024, 5, 1)), True),
        (_item((None, 5, 1)), _item(date(2024, 5, 1)), False),
        (_item((None, 5, 1)), _item([None, 5, 1]), True),
        (_item(Place("建国路８８号", 1)), _item(Place("建国路88号", 1)), True),
        (_item(Decimal("NaN")), _item(Decimal("NaN")), False),
        (_item(None), _item(None), False),
    ],
)
def test_item_equality(a: Item, b: Item, equal: bool) -> None:
    key_b = item_key(b)
    grounds = Grounds(frozenset() if key_b is None else frozenset({key_b}))
    assert grounds.has(a) is equal


def test_unhashable_values_are_compared_one_by_one() -> None:
    key = item_key(_item({"a": "１"}))
    assert key is not None
    grounds = Grounds(loose=(key,))
    assert grounds.has(_item({"a": "１"}))
    assert not grounds.has(_item({"a": "2"}))
    assert not grounds.has(_item(Decimal(1)))
    assert comparable(["１", Decimal("1.0")]) == ("1", Decimal(1))
