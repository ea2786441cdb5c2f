"""``ContractGuard``: the arguments against the input schema (each keyword path to its exact
user-facing message) and the constraints; the result against the output schema,
``max_results`` and the empty-result-claims-success post-check (seed 001 §4.2)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from charter.compile.api import compile_path
from charter.compile.specs.skills import Constraint, SkillContract
from charter.contracts.registry import Registry
from charter.contracts.rules import ArgKind
from charter.diagnostics import Location
from charter.dsl.parser import parse_expr
from charter.skills.guard import DEFAULT_INVALID, ContractGuard, OutputProblem, Violation

HERE = Location("skills/policy_search.yaml")

CONTRACT = """\
name: policy_search
description: 检索2020-2023年国家及省级政策文件
input_schema:
  type: object
  required: [keyword]
  properties:
    keyword: {type: string, minLength: 2, maxLength: 10}
    year_range:
      type: array
      maxItems: 2
      items: {type: integer, minimum: 2020, maximum: 2023}
    region: {type: string}
    since: {type: string, format: date}
    at: {type: string, format: date-time}
output_schema:
  type: object
  required: [results]
  properties:
    results:
      type: array
      items:
        type: object
        required: [title]
        properties:
          title: {type: string}
          effective_date: {type: string, format: date}
    summary: {type: string, maxLength: 200}
messages:
  keyword.required: 请告诉我要检索的政策关键词
  keyword.minLength: 关键词长度需为2-10字
  year_range: 年份范围超出能力边界，仅支持2020-2023，请调整后重试
constraints:
  - check: args.year_range[1] >= args.year_range[0]
    message: 起始年份不能晚于结束年份
  - check: args.region != "海外"
    message: 仅支持国家及省级政策
limits:
  max_results: 3
"""


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory, registry: Registry) -> SkillContract:
    root = tmp_path_factory.mktemp("guard") / "pack"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text("name: guard\nversion: 0.1.0\n", encoding="utf-8")
    (root / "skills" / "policy_search.yaml").write_text(CONTRACT, encoding="utf-8")
    pack, diags = compile_path(root, registry, cache_dir=None)
    assert pack is not None and pack.skills is not None, [d.headline() for d in diags]
    found = pack.skills.contract("policy_search")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def guard(contract: SkillContract, registry: Registry) -> ContractGuard:
    return ContractGuard(contract, registry, {})


def make_contract(
    input_schema: Mapping[str, Any],
    *,
    output_schema: Mapping[str, Any] | None = None,
    messages: Mapping[str, str] | None = None,
    constraints: Mapping[str, str] | None = None,
    max_results: int | None = None,
    results_key: str = "results",
) -> SkillContract:
    return SkillContract(
        name="s",
        description="d",
        input_schema_json=json.dumps(input_schema),
        output_schema_json=json.dumps(output_schema or {}),
        location=HERE,
        messages=tuple(sorted((messages or {}).items())),
        constraints=tuple(
            Constraint(parse_expr(src), message, src, HERE)
            for src, message in (constraints or {}).items()
        ),
        max_results=max_results,
        results_key=results_key,
    )


# ---- arguments: the schema -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            {},
            Violation(
                "请告诉我要检索的政策关键词",
                "keyword",
                "required",
                "'keyword' is a required property",
                ("keyword",),
            ),
            id="required-by-property.keyword",
        ),
        pytest.param(
            {"keyword": "补"},
            Violation("关键词长度需为2-10字", "keyword", "minLength", "'补' is too short"),
            id="property.keyword",
        ),
        pytest.param(
            {"keyword": "新能源汽车购置补贴政策细则"},
            Violation(
                "参数keyword不符合要求，请调整后重试",
                "keyword",
                "maxLength",
                "'新能源汽车购置补贴政策细则' is too long",
            ),
            id="no-message-for-keyword-built-in-default",
        ),
        pytest.param(
            {"keyword": "电动车", "year_range": [2019, 2024]},
            Violation(
                "年份范围超出能力边界，仅支持2020-2023，请调整后重试",
                "year_range",
                "minimum",
                "2019 is less than the minimum of 2020",
            ),
            id="property-message-for-an-item-first-error-by-path",
        ),
        pytest.param(
            {"keyword": "电动车", "year_range": [2020, 2021, 2022]},
            Violation(
                "年份范围超出能力边界，仅支持2020-2023，请调整后重试",
                "year_range",
                "maxItems",
                "[2020, 2021, 2022] is too long",
            ),
            id="property-message-any-keyword",
        ),
        pytest.param(
            {"keyword": "电动车", "region": 7},
            Violation(
                "参数region不符合要求，请调整后重试", "region", "type", "7 is not of type 'string'"
            ),
            id="type-built-in-default",
        ),
        pytest.param(
            {"keyword": "电动车", "since": "2024-13-01"},
            Violation(
                "参数since不符合要求，请调整后重试",
                "since",
                "format",
                "'2024-13-01' is not a 'date'",
            ),
            id="format-date-checked",
        ),
        pytest.param(
            # jsonschema checks "date-time" only with rfc3339-validator installed (it is not):
            # jsonschema-rs checks every format, and its finding is reported instead
            {"keyword": "电动车", "at": "not a time"},
            Violation(
                "参数at不符合要求，请调整后重试",
                "at",
                "format",
                '"not a time" is not a "date-time"',
            ),
            id="format-date-time-checked-by-jsonschema-rs",
        ),
    ],
)
def test_schema_violations(guard: ContractGuard, args: dict[str, Any], expected: Violation) -> None:
    assert guard.check_args(args) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"keyword": "电动车"}, None),
        ({"keyword": "电动车", "year_range": [2020, 2023]}, None),
        ({"keyword": "电动车", "since": "2024-02-29"}, None),
        ({"keyword": "电动车", "at": "2024-02-29T10:00:00Z"}, None),
        ({"keyword": "电动车", "region": "浙江省"}, None),
    ],
)
def test_valid_arguments(guard: ContractGuard, args: dict[str, Any], expected: None) -> None:
    assert guard.check_args(args) is expected


def test_which_formats_are_checked() -> None:
    checkers = jsonschema.FormatChecker().checkers
    assert "date" in checkers
    assert "date-time" not in checkers  # needs rfc3339-validator, which is not installed


MESSAGES_FULL = {
    "keyword.minLength": "keyword.minLength 的消息",
    "keyword": "keyword 的消息",
    "default": "default 的消息",
}


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (("keyword.minLength", "keyword", "default"), "keyword.minLength 的消息"),
        (("keyword", "default"), "keyword 的消息"),
        (("default",), "default 的消息"),
        ((), "参数keyword不符合要求，请调整后重试"),
    ],
)
def test_the_most_specific_message_wins(
    registry: Registry, declared: tuple[str, ...], expected: str
) -> None:
    c = make_contract(
        {"type": "object", "properties": {"keyword": {"type": "string", "minLength": 2}}},
        messages={k: MESSAGES_FULL[k] for k in declared},
    )
    v = ContractGuard(c, registry, {}).check_args({"keyword": "a"})
    assert v is not None
    assert (v.message, v.field, v.keyword) == (expected, "keyword", "minLength")


def test_several_required_names_all_missing(registry: Registry) -> None:
    c = make_contract(
        {
            "type": "object",
            "required": ["keyword", "region"],
            "properties": {"keyword": {"type": "string"}, "region": {"type": "string"}},
        },
        messages={"region.required": "请说明地区"},
    )
    guard = ContractGuard(c, registry, {})
    assert guard.check_args({}) == Violation(
        "参数keyword不符合要求，请调整后重试",
        "keyword",
        "required",
        "'keyword' is a required property",
        ("keyword", "region"),
    )
    assert guard.check_args({"keyword": "补贴"}) == Violation(
        "请说明地区", "region", "required", "'region' is a required property", ("region",)
    )


def test_nested_property_dotted_path(registry: Registry) -> None:
    c = make_contract(
        {
            "type": "object",
            "properties": {
                "filter": {
                    "type": "object",
                    "required": ["level"],
                    "properties": {"level": {"enum": ["national", "province"]}},
                }
            },
        },
        messages={
            "filter.level.enum": "级别只能是国家或省级",
            "filter.level.required": "请选择级别",
        },
    )
    guard = ContractGuard(c, registry, {})
    assert guard.check_args({"filter": {"level": "city"}}) == Violation(
        "级别只能是国家或省级",
        "filter.level",
        "enum",
        "'city' is not one of ['national', 'province']",
    )
    assert guard.check_args({"filter": {}}) == Violation(
        "请选择级别", "filter.level", "required", "'level' is a required property", ("level",)
    )


def test_top_level_keyword_message(registry: Registry) -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"keyword": {"type": "string"}},
    }
    declared = make_contract(schema, messages={"additionalProperties": "不支持这个参数"})
    v = ContractGuard(declared, registry, {}).check_args({"keyword": "补贴", "page": 2})
    assert v == Violation(
        "不支持这个参数",
        "",
        "additionalProperties",
        "Additional properties are not allowed ('page' was unexpected)",
    )


def test_top_level_violation_built_in_default(registry: Registry) -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"keyword": {"type": "string"}},
    }
    v = ContractGuard(make_contract(schema), registry, {}).check_args(
        {"keyword": "补贴", "page": 2}
    )
    assert v is not None
    assert DEFAULT_INVALID == "参数{field}不符合要求，请调整后重试"
    # BUG: guard.py check_args formats DEFAULT_INVALID with field="参数" for a top-level
    # violation, which reads "参数参数不符合要求，请调整后重试"
    assert v.message == "参数不符合要求，请调整后重试"


# ---- arguments: the constraints --------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"keyword": "电动车", "year_range": [2021, 2023]}, None),
        (
            {"keyword": "电动车", "year_range": [2023, 2021]},
            Violation(
                "起始年份不能晚于结束年份",
                "year_range",
                "constraint",
                "args.year_range[1] >= args.year_range[0]",
            ),
        ),
        # a second item missing: the comparison with a missing value does not hold
        (
            {"keyword": "电动车", "year_range": [2021]},
            Violation(
                "起始年份不能晚于结束年份",
                "year_range",
                "constraint",
                "args.year_range[1] >= args.year_range[0]",
            ),
        ),
        (
            {"keyword": "电动车", "region": "海外"},
            Violation("仅支持国家及省级政策", "region", "constraint", 'args.region != "海外"'),
        ),
        # the constraints read arguments that were not given: skipped, not failed
        ({"keyword": "电动车"}, None),
        # the schema is checked first: its message, not the constraint's
        (
            {"keyword": "电动车", "year_range": [2024, 2021]},
            Violation(
                "年份范围超出能力边界，仅支持2020-2023，请调整后重试",
                "year_range",
                "maximum",
                "2024 is greater than the maximum of 2023",
            ),
        ),
    ],
)
def test_constraints(
    guard: ContractGuard, args: dict[str, Any], expected: Violation | None
) -> None:
    assert guard.check_args(args) == expected


def test_constraint_reading_two_arguments_needs_both(registry: Registry) -> None:
    c = make_contract(
        {
            "type": "object",
            "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
        },
        constraints={"args.end - args.start <= 3": "跨度不能超过3年"},
    )
    guard = ContractGuard(c, registry, {})
    assert guard.check_args({"start": 2020}) is None
    assert guard.check_args({"end": 2030}) is None
    assert guard.check_args({"start": 2020, "end": 2023}) is None
    assert guard.check_args({"start": 2020, "end": 2024}) == Violation(
        "跨度不能超过3年", "end, start", "constraint", "args.end - args.start <= 3"
    )


def test_constraint_over_pack_constants(registry: Registry) -> None:
    c = make_contract(
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        constraints={"args.n <= pack.limits.pages": "最多查询5页"},
    )
    guard = ContractGuard(c, registry, {"limits": {"pages": 5}})
    assert guard.check_args({"n": 5}) is None
    assert guard.check_args({"n": 6}) == Violation(
        "最多查询5页", "n", "constraint", "args.n <= pack.limits.pages"
    )


class Picky:
    """A predicate that cannot judge some values: it raises."""

    name = "known_region"
    params: Sequence[ArgKind] = ()

    def __call__(self, text: str, *args: Any) -> bool:
        if text == "未知":
            raise ValueError("cannot tell")
        return text in ("浙江省", "江苏省")


def test_a_constraint_that_raises_counts_as_failed(registry: Registry) -> None:
    reg = replace(registry, predicates={**registry.predicates, "known_region": Picky()})
    c = make_contract(
        {"type": "object", "properties": {"region": {"type": "string"}}},
        constraints={"known_region(args.region)": "暂不支持该地区"},
    )
    guard = ContractGuard(c, reg, {})
    assert guard.check_args({"region": "浙江省"}) is None
    failed = Violation("暂不支持该地区", "region", "constraint", "known_region(args.region)")
    assert guard.check_args({"region": "广东省"}) == failed
    assert guard.check_args({"region": "未知"}) == failed


def test_the_first_failing_constraint_is_reported(registry: Registry) -> None:
    c = make_contract(
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        constraints={"args.n >= 1": "至少1条", "args.n <= 5": "最多5条", "args.n != 0": "不能为0"},
    )
    guard = ContractGuard(c, registry, {})
    v = guard.check_args({"n": 0})
    assert v is not None and v.message == "至少1条"
    v = guard.check_args({"n": 9})
    assert v is not None and v.message == "最多5条"


# ---- results ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"results": [{"title": "关于新能源汽车补贴的通知"}]}, None),
        ({"results": [{"title": "a"}, {"title": "b"}, {"title": "c"}]}, None),
        ({"results": []}, None),
        (
            {"results": "三份文件"},
            OutputProblem("output schema: results: '三份文件' is not of type 'array'"),
        ),
        ({}, OutputProblem("output schema: result: 'results' is a required property")),
        (["a"], OutputProblem("output schema: result: ['a'] is not of type 'object'")),
        (
            {"results": [{"title": 1}]},
            OutputProblem("output schema: results.title: 1 is not of type 'string'"),
        ),
        (
            {"results": [{"title": "t", "effective_date": "2023-02-30"}]},
            OutputProblem("output schema: results.effective_date: '2023-02-30' is not a 'date'"),
        ),
        (
            {"results": [{"title": "a"}, {"title": "b"}, {"title": "c"}, {"title": "d"}]},
            OutputProblem("4 results, the contract allows 3"),
        ),
        (
            {"results": [], "summary": "已为您找到3份文件"},
            OutputProblem("no results, but the result says '已为您找到3份文件'", reflect=True),
        ),
    ],
)
def test_check_output(guard: ContractGuard, result: Any, expected: OutputProblem | None) -> None:
    assert guard.check_output(result) == expected


def test_an_output_json_has_no_type_for_is_a_violation(guard: ContractGuard) -> None:
    """A skill may return any object: jsonschema-rs cannot read one JSON has no type for (it
    raised ValueError, which crashed the call and ``charter test``); the reference validator
    says what is wrong with it."""

    class Odd:
        def __repr__(self) -> str:
            return "<Odd>"

    assert guard.check_output(Odd()) == OutputProblem(
        "output schema: result: <Odd> is not of type 'object'"
    )
    assert guard.check_output({"results": [{"title": Odd()}]}) == OutputProblem(
        "output schema: results.title: <Odd> is not of type 'string'"
    )


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("summary", "已为您找到3份相关文件"),
        ("summary", "为您找到2条结果"),
        ("message", "找到了 5 个相关政策"),
        ("text", "共找到十二篇文章"),
        ("answer", "查询成功"),
        ("note", "已完成办理"),
        ("summary", "预约成功"),
        ("summary", "Found 3 documents"),
        ("summary", "Booked successfully"),
    ],
)
def test_empty_result_that_claims_success(registry: Registry, key: str, text: str) -> None:
    guard = ContractGuard(make_contract({"type": "object"}), registry, {})
    assert guard.check_output({"results": [], key: text}) == OutputProblem(
        f"no results, but the result says {text!r}", reflect=True
    )
    # the same text with results is what it says
    assert guard.check_output({"results": [{"title": "t"}], key: text}) is None


@pytest.mark.parametrize(
    "text",
    [
        "未找到相关文件",
        "没有找到任何符合条件的政策",
        "暂无结果",
        "No results found",
        "",
        # BUG: guard.py SUCCESS_CLAIM matches "为您找到" / "已为您" / "找到0条" inside honest
        # empty-result texts (negated or a zero count), flagging them as claims of success
        pytest.param("抱歉，没有为您找到相关文件", id="bug-negated-1"),
        pytest.param("未能为您找到相关政策", id="bug-negated-2"),
        pytest.param("共找到0条结果", id="bug-zero-count"),
        pytest.param("已为您查询，暂无结果", id="bug-yiweinin-no-claim"),
    ],
)
def test_an_honest_empty_result_is_not_a_claim(registry: Registry, text: str) -> None:
    guard = ContractGuard(make_contract({"type": "object"}), registry, {})
    assert guard.check_output({"results": [], "summary": text}) is None


def test_claims_are_read_only_from_the_text_keys(registry: Registry) -> None:
    guard = ContractGuard(make_contract({"type": "object"}), registry, {})
    assert guard.check_output({"results": [], "title": "已为您找到3份文件"}) is None
    assert guard.check_output({"results": [], "summary": 3}) is None


def test_results_key_and_no_cap(registry: Registry) -> None:
    capped = ContractGuard(
        make_contract({"type": "object"}, max_results=1, results_key="items"), registry, {}
    )
    assert capped.check_output({"items": [1, 2]}) == OutputProblem(
        "2 results, the contract allows 1"
    )
    assert capped.check_output({"results": [1, 2]}) is None  # not the results key
    assert capped.check_output({"items": [], "summary": "已为您找到1条"}) == OutputProblem(
        "no results, but the result says '已为您找到1条'", reflect=True
    )
    assert capped.count({"items": [1, 2]}) == 2
    assert capped.count({"results": [1, 2]}) is None
    assert capped.count("text") is None
    uncapped = ContractGuard(make_contract({"type": "object"}), registry, {})
    assert uncapped.check_output({"results": list(range(100))}) is None
    assert uncapped.check_output("纯文本结果") is None


def test_compiled_contract_messages_are_sorted_pairs(contract: SkillContract) -> None:
    assert contract.messages == (
        ("keyword.minLength", "关键词长度需为2-10字"),
        ("keyword.required", "请告诉我要检索的政策关键词"),
        ("year_range", "年份范围超出能力边界，仅支持2020-2023，请调整后重试"),
    )
    assert contract.message_for("keyword", "required") == "请告诉我要检索的政策关键词"
    assert contract.message_for("year_range", "maximum") == (
        "年份范围超出能力边界，仅支持2020-2023，请调整后重试"
    )
    assert contract.message_for("region", "type") is None


REDOS = """\
name: lookup
description: 查询
input_schema:
  type: object
  required: [code]
  properties:
    code: {type: string, pattern: "^(a+)+$"}
    n: {type: integer}
output_schema: {type: object}
messages:
  code.pattern: 编号格式不对
"""


def test_a_catastrophic_schema_pattern_is_warned_of_and_bounded(
    tmp_path: Path, registry: Registry
) -> None:
    """Issue 16: a contract's ``pattern`` runs on what a user or the model chose; jsonschema
    (which explains an invalid instance) would use ``re`` and backtrack for minutes."""
    root = tmp_path / "pack"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text("name: redos\nversion: 0.1.0\n", encoding="utf-8")
    (root / "skills" / "lookup.yaml").write_text(REDOS, encoding="utf-8")
    pack, diags = compile_path(root, registry, cache_dir=None)
    found_codes = [(d.code, d.location.line, d.location.col) for d in diags if d.code != "CH323"]
    assert found_codes == [("CH112", 7, 35)]  # at the pattern; no plugin implements lookup
    assert pack is not None and pack.skills is not None
    found = pack.skills.contract("lookup")
    assert found is not None
    violation = ContractGuard(found, registry, {}).check_args({"code": "a" * 5000 + "!", "n": "x"})
    assert violation is not None and violation.keyword in ("pattern", "type")
