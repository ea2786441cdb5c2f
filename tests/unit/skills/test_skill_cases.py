"""A contract's ``tests:`` that explain themselves (issue 32, item 3): a failing case prints the
contract violation or the exception (type, message, where it was raised), the call's arguments
and what the skill returned, in the text report, the JSON report and the JUnit file; and a
case can pin the reply the agent tells (``expect: {reply: ...}``), which is not the
``message`` (the result's summary as the skill wrote it).

The skills are fakes registered with ``dataclasses.replace(registry, skills=...)``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from charter.cli.test_report import Run, json_report, text_report
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.reflect.skill_report import OUTPUT_SHOWN, skill_call_lines
from charter.reflect.testing import CaseResult, Coverage, junit_xml, run_skill_case
from charter.skills.cases import SkillCaseCall, SkillCaseRunner, raised_at

PACK = "name: bank\nversion: 0.1.0\n"

BALANCE = """\
name: balance
description: 按卡号后四位查询余额
input_schema:
  type: object
  required: [tail]
  properties:
    tail: {type: string, pattern: "^[0-9]{4}$"}
output_schema:
  type: object
  required: [results, summary]
  properties:
    results:
      type: array
      items:
        type: object
        properties:
          tail: {type: string}
          balance: {type: string}
    summary: {type: string}
messages:
  tail: 请告诉我卡号后四位
fallback: balance_fb
reply:
  - when: found == 0
    text: 没有查到尾号{args.tail}的账户。
  - each: 尾号{tail}的账户余额为{balance}元。
tests:
  - name: 余额
    args: {tail: "1234"}
    expect: {status: ok, reply: 尾号1234的账户余额为12345.60元。, message: 余额12345.60元}
  - name: 查无此卡
    args: {tail: "9999"}
    expect: {status: ok, reply: 没有查到尾号9999的账户。}
  - name: 卡号不对
    args: {tail: "12"}
    expect: {status: invalid, reply: 请告诉我卡号后四位, message: 请告诉我卡号后四位}
  - name: 接口故障
    args: {tail: "1234"}
    inject: error
    expect: {status: failed, action: template, reply: 余额查询暂时不可用}
  - name: 把摘要当成回复
    args: {tail: "1234"}
    expect: {status: ok, message: 尾号1234的账户余额为12345.60元。}
  - name: 回复写错
    args: {tail: "1234"}
    expect: {status: ok, reply: 尾号1234的账户余额为12345.06元。}
"""

# the summary is all it tells: no reply:, no fallback
PLAIN = """\
name: plain
description: 只有摘要
input_schema: {type: object}
output_schema:
  type: object
  properties:
    amount: {type: number}
    summary: {type: string}
tests:
  - name: 摘要
    args: {}
    expect: {status: ok, reply: 一切正常, message: 一切正常}
"""

FALLBACKS = """\
protocols:
  balance_fb:
    - when: unavailable
      do: template "余额查询暂时不可用"
"""


class Balance:
    """The demo balance: 1234 holds 12345.60, any other tail nothing; ``output`` replaces
    the result."""

    name = "balance"
    description = "余额"

    def __init__(self) -> None:
        self.output: Any = None

    def __call__(self, args: Mapping[str, Any]) -> Any:
        if self.output is not None:
            return self.output
        tail = args["tail"]
        if tail != "1234":
            return {"results": [], "summary": f"没有尾号{tail}的账户"}
        return {"results": [{"tail": tail, "balance": "12345.60"}], "summary": "余额12345.60元"}


class Plain:
    name = "plain"
    description = "摘要"

    def __init__(self) -> None:
        self.output: Any = {"amount": 1, "summary": "一切正常"}

    def __call__(self, args: Mapping[str, Any]) -> Any:
        return self.output


@pytest.fixture
def world(tmp_path: Path, registry: Registry) -> tuple[CompiledPack, Registry, Balance, Plain]:
    root = tmp_path / "bank"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text(PACK, encoding="utf-8")
    (root / "skills" / "balance.yaml").write_text(BALANCE, encoding="utf-8")
    (root / "skills" / "plain.yaml").write_text(PLAIN, encoding="utf-8")
    (root / "fallbacks.yaml").write_text(FALLBACKS, encoding="utf-8")
    balance, plain = Balance(), Plain()
    reg = replace(registry, skills={"balance": balance, "plain": plain})
    pack, diags = compile_path(root, reg, cache_dir=None)
    assert pack is not None and diags == []
    return pack, reg, balance, plain


def cases(pack: CompiledPack, skill: str) -> dict[str, Any]:
    assert pack.skills is not None
    contract = pack.skills.contract(skill)
    assert contract is not None
    return {c.name: c for c in contract.cases}


def call_of(r: CaseResult) -> dict[str, Any]:
    """The call a skill case reports (``charter test --format json`` gives it as ``call``)."""
    assert isinstance(r.result, Mapping)
    return dict(r.result["call"])


def run(pack: CompiledPack, reg: Registry, skill: str, name: str) -> CaseResult:
    with SkillCaseRunner(pack, reg) as runner:
        return run_skill_case(pack, skill, cases(pack, skill)[name], runner.call)


# ---- reply: what the agent tells ---------------------------------------------------------------


def test_reply_is_compiled_into_the_case(world: tuple[Any, ...]) -> None:
    pack = world[0]
    got = {n: (c.message, c.reply) for n, c in cases(pack, "balance").items()}
    assert got["余额"] == ("余额12345.60元", "尾号1234的账户余额为12345.60元。")
    assert got["回复写错"] == (None, "尾号1234的账户余额为12345.06元。")


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("余额", "尾号1234的账户余额为12345.60元。"),  # reply: each, over the items
        ("查无此卡", "没有查到尾号9999的账户。"),  # the alternative whose when: holds
        ("卡号不对", "请告诉我卡号后四位"),  # refused: the contract's message
        ("接口故障", "余额查询暂时不可用"),  # failed: the fallback's text
    ],
)
def test_the_reply_told(world: tuple[Any, ...], name: str, reply: str) -> None:
    pack, reg, _, _ = world
    with SkillCaseRunner(pack, reg) as runner:
        got = runner.call("balance", cases(pack, "balance")[name])
    assert got.reply == reply
    r = run(pack, reg, "balance", name)
    assert (r.problems, r.details) == ((), ())


def test_without_reply_the_summary_is_told(world: tuple[Any, ...]) -> None:
    pack, reg, _, _ = world
    r = run(pack, reg, "plain", "摘要")
    assert r.ok and call_of(r)["reply"] == "一切正常"


def test_a_failure_no_fallback_answers_tells_no_reply_of_the_contract(
    world: tuple[Any, ...],
) -> None:
    pack, reg, _, plain = world
    plain.output = {"amount": "一", "summary": "一切正常"}  # breaks the output schema
    r = run(pack, reg, "plain", "摘要")
    assert r.problems[:2] == (
        'status: expected "ok", got "failed"',
        'message: expected "一切正常", got "output schema: amount: \'一\' is not of type '
        "'number'\"\ndiff: (-expected +got) [-一切正常-]{+output schema: amount: '一' is not "
        "of type 'number'+}",
    )
    assert r.problems[2] == 'reply: expected "一切正常", got (none)'


def test_a_wrong_reply_is_shown_as_a_diff(world: tuple[Any, ...]) -> None:
    pack, reg, _, _ = world
    r = run(pack, reg, "balance", "回复写错")
    assert r.problems == (
        'reply: expected "尾号1234的账户余额为12345.06元。", got "尾号1234的账户余额为12345.60元。"\n'
        "diff: (-expected +got) …的账户余额为[-12345.06-]{+12345.60+}元。",
    )


def test_a_message_that_is_the_reply_says_so(world: tuple[Any, ...]) -> None:
    """The pack author's mistake: ``message`` is the result's summary, not the reply."""
    pack, reg, _, _ = world
    r = run(pack, reg, "balance", "把摘要当成回复")
    assert r.problems == (
        'message: expected "尾号1234的账户余额为12345.60元。", got "余额12345.60元"\n'
        "diff: (-expected +got) [-尾号1234的账户-]余额[-为-]12345.60元[-。-]\n"
        "hint: message is the result's summary as the skill wrote it; this text is the "
        "reply told (the contract's reply:): expect it with reply:",
    )


# ---- why a case failed -------------------------------------------------------------------------


def test_a_schema_violation_shows_the_violation_the_args_and_the_output(
    world: tuple[Any, ...],
) -> None:
    pack, reg, balance, _ = world
    balance.output = {"results": [{"tail": "1234", "balance": 45.6}], "summary": "余额45.6元"}
    r = run(pack, reg, "balance", "余额")
    assert r.problems[0] == 'status: expected "ok", got "failed"'
    assert r.details == (
        "failure: contract_violation: output schema: results.balance: 45.6 is not of type 'string'",
        'args: {"tail": "1234"}',
        'output: {"results": [{"balance": 45.6, "tail": "1234"}], "summary": "余额45.6元"}',
    )
    call = call_of(r)
    assert call["output"] == balance.output and call["returned"] is True
    assert call["failure"] == {
        "kind": "contract_violation",
        "detail": "output schema: results.balance: 45.6 is not of type 'string'",
        "raised_at": None,
    }


def test_an_exception_shows_its_type_message_and_where(world: tuple[Any, ...]) -> None:
    pack, reg, _, _ = world

    def broken(args: Mapping[str, Any]) -> Any:
        return {"tail": args["account"]}  # the wrong argument name: KeyError

    reg = replace(reg, skills={**reg.skills, "balance": _Named("balance", broken)})
    r = run(pack, reg, "balance", "余额")
    line = broken.__code__.co_firstlineno + 1
    assert r.details == (
        "failure: error: KeyError: 'account'",
        f"  raised at {raised_at_path()}:{line}, in broken",
        'args: {"tail": "1234"}',
        "output: (none)",
    )
    assert call_of(r)["returned"] is False


def test_an_injected_fault_is_named(world: tuple[Any, ...]) -> None:
    pack, reg, _, _ = world
    case = replace(cases(pack, "balance")["接口故障"], action="handoff_human")
    with SkillCaseRunner(pack, reg) as runner:
        r = run_skill_case(pack, "balance", case, runner.call)
    assert r.problems == ('action: expected "handoff_human", got "template"',)
    assert r.details == (
        "failure: error: raised (injected)",
        "inject: error",
        'args: {"tail": "1234"}',
        "output: (none)",  # an injected error never reaches the skill
    )


def test_a_passing_case_has_no_details(world: tuple[Any, ...]) -> None:
    pack, reg, _, _ = world
    r = run(pack, reg, "balance", "余额")
    assert r.ok and r.details == ()
    assert call_of(r)["text"] == "余额12345.60元"


class _Named:
    def __init__(self, name: str, fn: Any) -> None:
        self.name = name
        self.description = name
        self.fn = fn

    def __call__(self, args: Mapping[str, Any]) -> Any:
        return self.fn(args)


def raised_at_path() -> str:
    """This file as ``raised_at`` names it (relative to the working directory when below it)."""
    try:
        raise RuntimeError
    except RuntimeError as exc:
        where = raised_at(exc)
    assert where is not None
    return where.rsplit(":", 2)[0]


# ---- the formatting on its own -----------------------------------------------------------------


def test_call_lines_cut_a_long_output() -> None:
    output = {"results": ["政" * 500]}
    lines = skill_call_lines(
        {"args": {}, "inject": None, "failure": None, "returned": True, "output": output}
    )
    text = json.dumps(output, ensure_ascii=False, sort_keys=True)
    assert lines == (
        "args: {}",
        f"output: {text[:OUTPUT_SHOWN]}… ({len(text) - OUTPUT_SHOWN} more characters)",
    )


def test_call_lines_of_a_skill_that_returned_nothing_json_holds(world: tuple[Any, ...]) -> None:
    """A skill may return any object: the reports show its repr, and the JSON report stays
    JSON."""
    pack, reg, _, plain = world

    class Odd:
        def __repr__(self) -> str:
            return "<Odd>"

    plain.output = Odd()
    r = run(pack, reg, "plain", "摘要")
    assert (
        r.details[0]
        == "failure: contract_violation: output schema: result: <Odd> is not of type 'object'"
    )
    assert r.details[-1] == 'output: "<Odd>"'
    assert call_of(r)["output"] == "<Odd>"
    json.dumps(call_of(r))


def test_a_returned_none_is_null_not_nothing() -> None:
    lines = skill_call_lines(
        {"args": {"a": 1}, "inject": None, "failure": None, "returned": True, "output": None}
    )
    assert lines == ('args: {"a": 1}', "output: null")


def test_the_reports_carry_the_details(world: tuple[Any, ...]) -> None:
    pack, reg, balance, _ = world
    balance.output = {"results": [{"tail": "1234", "balance": 45.6}], "summary": "余额45.6元"}
    r = run(pack, reg, "balance", "余额")
    run_ = Run(results=[r])
    text = text_report(run_, verbose=False, show_coverage=False)
    assert text.splitlines() == [
        f"FAIL bank/balance: 余额 ({r.case.location})",
        '    status: expected "ok", got "failed"',
        '    message: expected "余额12345.60元", got "抱歉，暂时无法完成这个请求，请稍后再试或联系人工'
        '客服。"',
        "      diff: (-expected +got) [-余额12345.60元-]{+抱歉，暂时无法完成这个请求，请稍后再试或联系"
        "人工客服。+}",
        '    reply: expected "尾号1234的账户余额为12345.60元。", got (none)',
        "    failure: contract_violation: output schema: results.balance: 45.6 is not of type "
        "'string'",
        '    args: {"tail": "1234"}',
        '    output: {"results": [{"balance": 45.6, "tail": "1234"}], "summary": "余额45.6元"}',
        "rule coverage: 100.0% of 0 rules (each seen passing and failing)",
        "0 passed, 1 failed",
    ]
    doc = json_report(run_)
    assert doc["cases"][0]["call"]["failure"]["kind"] == "contract_violation"
    assert doc["cases"][0]["call"]["output"] == balance.output
    suites = ET.fromstring(junit_xml([r], Coverage()))
    failure = suites.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == (
        'status: expected "ok", got "failed" (failure: contract_violation: output schema: '
        "results.balance: 45.6 is not of type 'string')"
    )
    assert (failure.text or "").splitlines()[-2:] == [
        'args: {"tail": "1234"}',
        'output: {"results": [{"balance": 45.6, "tail": "1234"}], "summary": "余额45.6元"}',
    ]


def test_a_call_function_that_gives_the_outcome_alone_still_runs(world: tuple[Any, ...]) -> None:
    """``run_skill_case`` takes a ``SkillCaseCall`` or a bare ``SkillOutcome`` (what the call
    functions before reply: gave)."""
    pack, reg, _, _ = world
    with SkillCaseRunner(pack, reg) as runner:

        def bare(skill: str, case: Any) -> Any:
            got = runner.call(skill, case)
            assert isinstance(got, SkillCaseCall)
            return got.outcome

        case = cases(pack, "balance")["卡号不对"]
        case = replace(case, reply=None)
        r = run_skill_case(pack, "balance", case, bare)
    assert r.ok and call_of(r)["returned"] is False


def test_an_unknown_expect_key_is_reported(tmp_path: Path, registry: Registry) -> None:
    root = tmp_path / "bank"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text(PACK, encoding="utf-8")
    (root / "skills" / "plain.yaml").write_text(
        PLAIN.replace("reply: 一切正常", "replied: 一切正常"), encoding="utf-8"
    )
    reg = replace(registry, skills={"plain": Plain()})
    _, diags = compile_path(root, reg, cache_dir=None)
    assert [(d.code, d.message, d.hint) for d in diags] == [
        ("CH012", "unknown key 'replied'", "did you mean 'reply'?")
    ]
    assert diags[0].location.line == 12
