"""The ``responses`` compile stage: responses.yaml, the contracts' ``reply:`` and goals.yaml's
``confirm:`` questions into a ``ResponsesSpec``; each diagnostic (CH350-CH357) with its place,
message and hint; every template rendered with sample values and checked by the pack's rules."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.compile.response_spec import BUILTIN, EVENTS, variant_ids
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, sort_diagnostics

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "conversations" / "balance"

RULES = """\
rules:
  - id: amount-twin
    describe: 金额大小写双显
    check: every money in output has twin money_upper
    on_fail: retry
  - id: no-guarantee
    describe: 禁用“保证”
    check: not output contains "保证"
    on_fail: retry
  - id: disclaimer
    describe: 提到收益要加提示
    when: output contains "收益"
    check: output contains "风险自担"
    on_fail: fix append "（风险自担）"
"""

GOALS = """\
intents:
  - id: account-query
    describe: 账户查询
    trigger: input contains any ["余额", "查账户"]
    slots:
      - name: card_tail
        regex: 尾号(?:是|为)?(?P<value>[0-9]{4})(?![0-9])
        required: true
        ask: 请问您要查询哪张卡？请告诉我卡号后四位。
        label: 卡号后四位
    description: 查询尾号{card_tail}账户的余额
    skill: {name: account_balance, args: {account_tail: "{card_tail}"}}
  - id: transfer
    describe: 转账
    trigger: input contains "转账"
    slots:
      - name: amount
        extractor: money
        required: true
        ask: 请问转多少钱？
    description: %s
    confirm: %s
tests:
  - name: 转账
    input: 转账5000元
    plan:
      goals:
        - ref: n1
          intent: transfer
          parent: null
          status: pending
          awaiting: true
          description: %s
          slots: {amount: "5000"}
"""

SKILL = r"""name: account_balance
description: 按银行卡号后四位查询演示账户的余额
input_schema:
  type: object
  required: [account_tail]
  additionalProperties: false
  properties:
    account_tail: {type: string, pattern: "^[0-9]{4}$"}
output_schema:
  type: object
  required: [results, summary]
  properties:
    results:
      type: array
      items:
        type: object
        properties:
          account_tail: {type: string, pattern: "^[0-9]{4}$"}
          balance: {type: string, pattern: '^-?[0-9]+\.[0-9]{2}$'}
          as_of: {type: string, format: date}
    summary: {type: string, minLength: 1}
fallback: account_balance
"""


def make_pack(
    tmp_path: Path,
    responses: str | None,
    confirm: str = "true",
    reply: str | None = None,
    unit: str = "",
) -> Path:
    root = tmp_path / "balance"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("tests", "responses.yaml"))
    (root / "rules.yaml").write_text(RULES, encoding="utf-8")
    description = f"转账{{amount}}{unit}"
    goals = GOALS % (description, confirm, description.replace("{amount}", "5000"))
    (root / "goals.yaml").write_text(goals, encoding="utf-8")
    if responses is not None:
        (root / "responses.yaml").write_text(responses, encoding="utf-8")
    (root / "skills" / "account_balance.yaml").write_text(SKILL + (reply or ""), encoding="utf-8")
    return root


def problems(root: Path, registry: Registry) -> list[tuple[str, str, str, str]]:
    _, diags = compile_path(root, registry, cache_dir=None)
    return [_row(d) for d in sort_diagnostics(diags)]


def _row(d: Diagnostic) -> tuple[str, str, str, str]:
    return d.code, str(d.location).split("/balance/", 1)[-1], d.message, d.hint


GOOD = """\
mode: strict
events:
  cancelled: 好的，已取消{intent}。
intents:
  transfer:
    mode: assisted
    confirmation_asked: 请确认：转账{amount|amount}？
    slot_corrected:
      - when: slot == "amount"
        text:
          - 好的，金额改为{new|amount}。
          - 已改为{new|amount}。
      - 好的，已更新。
"""


def test_a_good_pack_compiles_to_its_spec(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_path(make_pack(tmp_path, GOOD, "true"), registry, cache_dir=None)
    assert diags == []
    assert pack is not None and pack.responses is not None
    spec = pack.responses
    assert (spec.mode, spec.mode_of("transfer"), spec.mode_of("account-query")) == (
        "strict",
        "assisted",
        "strict",
    )
    corrected = spec.entry("slot_corrected", "transfer")
    assert corrected is not None and corrected.ids == (
        "transfer.slot_corrected#1.1",
        "transfer.slot_corrected#1.2",
        "transfer.slot_corrected#2",
    )
    cancel = spec.entry("cancelled", "account-query")
    assert cancel is not None and cancel.key == "pack.cancelled"
    ask = spec.entry("slot_asked", "transfer")
    assert ask is not None and ask.key == "builtin.slot_asked"
    # what a turn of this pack can use: no split confirmation, no confirmation of a balance
    assert "transfer.confirmation_asked" in spec.reachable
    assert "builtin.confirmation_declined#1" in spec.reachable
    assert "builtin.slot_corrected#1" in spec.reachable  # the balance query has none of its own
    assert "builtin.handed_off" in spec.reachable
    assert spec.template_ids() >= set(spec.reachable)


def test_a_pack_without_responses_gets_the_builtin_wording(
    tmp_path: Path, registry: Registry
) -> None:
    pack, diags = compile_path(make_pack(tmp_path, None, "false"), registry, cache_dir=None)
    assert [d.code for d in diags] == []
    assert pack is not None and pack.responses is not None
    assert pack.responses.mode == "strict"
    assert {e.key for e in pack.responses.entries} == {f"builtin.{e}" for e in EVENTS}


@pytest.mark.parametrize(
    ("responses", "want"),
    [
        (
            "intents:\n  transfr:\n    cancelled: 好的。\n",
            [
                (
                    "CH350",
                    "responses.yaml:2:3",
                    "responses for unknown intent 'transfr'",
                    "did you mean 'transfer'?",
                )
            ],
        ),
        (
            "events:\n  cancelled: 好的，已取消{intent。\n",
            [
                (
                    "CH351",
                    "responses.yaml:2:20",
                    "template syntax: a '{' without its '}'",
                    "write '{{' for a brace",
                )
            ],
        ),
        (
            "intents:\n  transfer:\n    cancelled: 已取消{amout}。\n",
            [
                (
                    "CH352",
                    "responses.yaml:3:19",
                    "unknown field 'amout' in transfer.cancelled — did you mean 'amount'?",
                    "did you mean 'amount'?",
                )
            ],
        ),
        (
            "intents:\n  transfer:\n    cancelled: 已取消{amount|amont}。\n",
            [
                (
                    "CH353",
                    "responses.yaml:3:19",
                    "unknown formatter 'amont'",
                    "did you mean 'amount'?",
                )
            ],
        ),
        (  # each: is a skill reply's (the schema of responses.yaml has no such key)
            "intents:\n  transfer:\n    cancelled:\n      - each: 已取消。\n",
            [("CH013", "responses.yaml:4:9", "unknown key 'each'", "expected one of: text, when")],
        ),
        (
            'intents:\n  transfer:\n    cancelled:\n      - when: slot == "x"\n',
            [
                (
                    "CH354",
                    "responses.yaml:4:9",
                    "an alternative of transfer.cancelled needs exactly one of text and each",
                    "text: tells the result once; each: once per result item",
                )
            ],
        ),
        (
            'intents:\n  transfer:\n    slot_corrected:\n      - when: slt == "amount"\n'
            "        text: 好的。\n",
            [("CH101", "responses.yaml:4:15", "unknown subject 'slt'", "did you mean 'slot'?")],
        ),
        (
            "intents:\n  transfer:\n    cancelled: 已取消转账{amount}元。\n",
            [
                (
                    "CH356",
                    "responses.yaml:3:16",
                    "template transfer.cancelled fails rule 'amount-twin' (retry) when rendered "
                    "with sample values: 已取消转账5000元。",
                    "金额大小写双显",
                )
            ],
        ),
        (
            'intents:\n  transfer:\n    slot_corrected:\n      - when: slot == "nothing"\n'
            "        text: 好的。\n",
            [
                (
                    "CH357",
                    "responses.yaml:4:9",
                    "template transfer.slot_corrected could not be checked against the rules: no "
                    "sample value makes it apply",
                    "give the fields examples: in the output schema, or the slots values in the "
                    "planner tests of goals.yaml",
                )
            ],
        ),
    ],
)
def test_each_problem_is_reported_where_it_is(
    tmp_path: Path, registry: Registry, responses: str, want: list[tuple[str, str, str, str]]
) -> None:
    assert problems(make_pack(tmp_path, responses), registry) == want


def test_a_builtin_template_the_rules_refuse_is_reported_at_the_intent(
    tmp_path: Path, registry: Registry
) -> None:
    # the built-in cancellation names the goal, whose description has an amount in one form
    got = problems(make_pack(tmp_path, None, unit="元"), registry)
    assert got == [
        (
            "CH356",
            "goals.yaml:13:5",
            "template builtin.cancelled#1 (for intent 'transfer') fails rule 'amount-twin' "
            "(retry) when rendered with sample values: 好的，已取消转账5000元。",
            "write the cancelled template in responses.yaml; 金额大小写双显",
        ),
        (
            "CH356",
            "goals.yaml:13:5",
            "template builtin.confirmation_asked#2 (for intent 'transfer') fails rule "
            "'amount-twin' (retry) when rendered with sample values: 请确认：转账5000元？（是/否）",
            "write the confirmation_asked template in responses.yaml; 金额大小写双显",
        ),
        (
            "CH356",
            "goals.yaml:13:5",
            "template builtin.confirmation_declined#1 (for intent 'transfer') fails rule "
            "'amount-twin' (retry) when rendered with sample values: 好的，已取消转账5000元。",
            "write the confirmation_declined template in responses.yaml; 金额大小写双显",
        ),
    ]


def test_a_confirmation_question_written_twice(tmp_path: Path, registry: Registry) -> None:
    root = make_pack(
        tmp_path, "intents:\n  transfer:\n    confirmation_asked: 确认？\n", '"确认转账？"'
    )
    assert problems(root, registry) == [
        (
            "CH355",
            "goals.yaml:22:14",
            "intent 'transfer' has its confirmation question in goals.yaml and responses.yaml",
            "write confirm: true here and keep the question in responses.yaml",
        )
    ]


def test_a_confirmation_question_in_goals_yaml_is_a_template(
    tmp_path: Path, registry: Registry
) -> None:
    pack, diags = compile_path(
        make_pack(tmp_path, None, '"请确认转账{amount|amount}？"'), registry, cache_dir=None
    )
    assert diags == [] and pack is not None and pack.responses is not None
    entry = pack.responses.entry("confirmation_asked", "transfer")
    assert entry is not None and entry.ids == ("transfer.confirmation_asked",)


REPLY = """
reply:
  - when: found == 0
    text: 没有尾号{args.account_tail}的账户。
  - each: 尾号{account_tail}余额{balance|amount}，截至{as_of|date}。
"""


def test_a_contracts_reply_is_compiled_and_checked(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_path(make_pack(tmp_path, None, reply=REPLY), registry, cache_dir=None)
    assert diags == [] and pack is not None and pack.responses is not None
    entry = pack.responses.result("account_balance")
    assert entry is not None
    assert entry.ids == ("account_balance.result#1", "account_balance.result#2")
    assert [a.each for a in entry.alternatives] == [False, True]


@pytest.mark.parametrize(
    ("reply", "want"),
    [
        (
            "\nreply: 余额{balanse}\n",
            (
                "CH352",
                "skills/account_balance.yaml:24:10",
                "unknown field 'balanse' in account_balance.result — expected one of: args, "
                "found, goal, intent, result, results, slots, summary",
                "expected one of: args, found, goal, intent, result, results, slots, summary",
            ),
        ),
        (
            "\nreply:\n  - each: 余额{balance}元\n",
            (
                "CH356",
                "skills/account_balance.yaml:25:5",
                "template account_balance.result fails rule 'amount-twin' (retry) when rendered "
                "with sample values: 余额12345.60元",
                "金额大小写双显",
            ),
        ),
        (
            "\nreply:\n  - each: 尾号{args.acount_tail}\n",
            (
                "CH352",
                "skills/account_balance.yaml:25:13",
                "unknown field 'acount_tail' in account_balance.result (args) — did you mean "
                "'account_tail'?",
                "did you mean 'account_tail'?",
            ),
        ),
    ],
)
def test_a_contracts_reply_problems(
    tmp_path: Path, registry: Registry, reply: str, want: tuple[str, str, str, str]
) -> None:
    assert want in problems(make_pack(tmp_path, None, reply=reply), registry)


def test_ids() -> None:
    assert variant_ids("k", [1]) == [["k"]]
    assert variant_ids("k", [2]) == [["k#1.1", "k#1.2"]]
    assert variant_ids("k", [1, 3]) == [["k#1"], ["k#2.1", "k#2.2", "k#2.3"]]
    assert set(BUILTIN) == set(EVENTS)


STATUS = """
reply:
  - when: status == "frozen"
    text: 尾号{args.account_tail}的账户已冻结，请到柜台办理。
  - when: status == "closed"
    text: 尾号{args.account_tail}的账户已销户。
  - text: "{summary}"
"""


def test_every_value_a_field_names_selects_its_alternative(
    tmp_path: Path, registry: Registry
) -> None:
    # issue 32, problem 2: with enum and examples [ok, frozen, closed] only the first was a
    # sample, so the frozen and closed alternatives were never checked (CH357 for good)
    root = make_pack(tmp_path, None, reply=STATUS)
    path = root / "skills" / "account_balance.yaml"
    text = path.read_text(encoding="utf-8").replace(
        "    summary: {type: string, minLength: 1}\n",
        "    summary: {type: string, minLength: 1}\n"
        "    status: {type: string, enum: [ok, frozen, closed], examples: [ok]}\n",
        1,
    )
    path.write_text(text, encoding="utf-8")
    assert problems(root, registry) == []


def test_a_description_is_sampled_with_its_formatters(tmp_path: Path, registry: Registry) -> None:
    # issue 32, problem 3: {goal} was the description without its formatters (转账5000), so
    # built-in texts failed a rule the runtime's formatted description (¥5,000.00（伍仟元整）)
    # passes; written with the formatter, nothing is reported
    root = make_pack(tmp_path, None, unit="元")
    goals = root / "goals.yaml"
    text = goals.read_text(encoding="utf-8")
    goals.write_text(
        text.replace("description: 转账{amount}元", "description: 转账{amount|amount}元"),
        encoding="utf-8",
    )
    assert problems(root, registry) == []


def test_coverage_counts_only_the_built_in_texts_a_pack_can_say(
    registry: Registry, shipped_packs: Any
) -> None:
    # issue 32: the telecom fixture's slots have no label, so no built-in text naming a
    # label (为保护您的信息安全…{label} / 请告诉我{label}。) can ever be said: coverage counted them
    telecom = FIXTURE.parents[1] / "goals" / "telecom"
    pack, _ = compile_path(telecom, registry, cache_dir=None)
    assert pack is not None and pack.responses is not None
    asked = [i for i in pack.responses.reachable if i.startswith("builtin.slot_asked")]
    assert asked == ["builtin.slot_asked#2"]
    # finance's card number slot has a label and a pattern that may pass over personal data
    finance = shipped_packs["finance"].responses
    assert "builtin.slot_asked#1" in finance.reachable
