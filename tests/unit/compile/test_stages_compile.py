"""An intent's ``stages:`` and a binding's ``moves:`` (goals.yaml), compiled: each stage says
what completes it with exactly one of slots / skill / by (CH306), a stage's skill is a query
(CH328), ``by`` names another intent (CH306), ``moves`` names kept fields (CH307); the spec
holds the stages in order with their status names."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.contracts.registry import Registry
from tests.support.skills_compile import CONTRACT, compile_files, with_skills

CHECK = """\
name: check
description: 检查
input_schema:
  type: object
  required: [payee]
  additionalProperties: false
  properties:
    payee: {type: string}
output_schema:
  type: object
  required: [status, summary]
  properties:
    status: {enum: [ok, bad]}
    summary: {type: string}
"""


def goals(stages: str, moves: str = "[ref]") -> str:
    return f"""\
intents:
  - id: transfer
    describe: 转账
    trigger: input contains "转账"
    slots:
      - name: payee
        regex: 给(?P<value>\\p{{Han}}{{2,3}})转账
        required: true
        ask: 收款人是谁？
    confirm: true
    stages:
{stages}
    skill:
      name: pay
      args: {{payee: "{{payee}}"}}
      keep: {{ref: status}}
      moves: {moves}
    description: 向{{payee}}转账
  - id: receipt
    describe: 回单
    trigger: input contains "回单"
"""


GOOD = """\
      - id: collect
        describe: 收集
        slots: [payee]
      - id: compliance
        describe: 合规检查
        skill: {name: check, args: {payee: "{payee}"}, done: result.status == "ok"}
        status: {completed: compliant, aborted: non_compliant}
        quiet: true
      - id: receipt
        describe: 回单
        by: receipt"""


def build(tmp_path: Path, registry: Registry, stages: str, moves: str = "[ref]") -> tuple:
    return compile_files(
        tmp_path,
        with_skills(registry, "pay", "check"),
        {
            "goals.yaml": goals(stages, moves),
            "skills/pay.yaml": CONTRACT,
            "skills/check.yaml": CHECK,
        },
    )


def test_the_spec_holds_the_stages_in_order(tmp_path: Path, registry: Registry) -> None:
    pack, diags = build(tmp_path, registry, GOOD)
    assert diags == []
    assert pack is not None and pack.goals is not None
    intent = pack.goals.intents[0]
    assert [(s.id, s.slots, s.by, s.passed, s.failed, s.quiet) for s in intent.stages] == [
        ("collect", ("payee",), None, "completed", "aborted", False),
        ("compliance", (), None, "compliant", "non_compliant", True),
        ("receipt", (), "receipt", "completed", "aborted", False),
    ]
    assert intent.stages[1].skill is not None and intent.stages[1].skill.done is not None
    assert intent.skill is not None and intent.skill.moves == ("ref",)
    found = pack.goals.stage("transfer.compliance")
    assert found is not None and found[1].id == "compliance"
    assert pack.goals.stage("transfer.nothing") is None
    assert pack.goals.stage("transfer") is None


@pytest.mark.parametrize(
    ("stages", "moves", "wanted"),
    [
        (
            "      - {id: a, describe: 甲}",
            "[ref]",
            [
                (
                    "CH306",
                    "stage 'a' of intent 'transfer' must say what completes it with exactly one "
                    "of slots, skill or by (it has none of them)",
                    "goals.yaml:12:9",
                )
            ],
        ),
        (
            "      - {id: a, slots: [payee], by: receipt}",
            "[ref]",
            [
                (
                    "CH306",
                    "stage 'a' of intent 'transfer' must say what completes it with exactly one "
                    "of slots, skill or by (it has slots, by)",
                    "goals.yaml:12:9",
                )
            ],
        ),
        (
            "      - {id: a, slots: [payer]}",
            "[ref]",
            [
                (
                    "CH306",
                    "stage 'a' of intent 'transfer' waits for 'payer', which is not one of its "
                    "slots",
                    "goals.yaml:12:25",
                )
            ],
        ),
        (
            "      - {id: a, by: transfer}",
            "[ref]",
            [
                (
                    "CH306",
                    "stage 'a' of intent 'transfer' is completed by 'transfer', which is not "
                    "another intent of the pack",
                    "goals.yaml:12:21",
                )
            ],
        ),
        (
            "      - {id: a, skill: {name: pay, args: {payee: '{payee}'}}}",
            "[ref]",
            [
                (
                    "CH328",
                    "stage 'a' of intent 'transfer' calls skill 'pay', which executes "
                    "(effect: execute)",
                    "goals.yaml:12:24",
                )
            ],
        ),
        (
            "      - {id: a, slots: [payee]}",
            "[reff]",
            [
                (
                    "CH307",
                    "the skill of intent 'transfer' moves 'reff', which its keep: does not keep",
                    "goals.yaml:17:15",
                )
            ],
        ),
    ],
    ids=["none", "two", "unknown-slot", "by-itself", "executing", "moves-unkept"],
)
def test_a_malformed_stage_or_move_is_reported(
    tmp_path: Path, registry: Registry, stages: str, moves: str, wanted: list
) -> None:
    _, diags = build(tmp_path, registry, stages, moves)
    assert [(d.code, d.message, d.where) for d in diags] == wanted
