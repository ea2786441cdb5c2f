"""What goals.yaml and skills/*.yaml say about actions and follow-ups, compiled: an executing
skill (``effect: execute``) must be confirmed first (CH327); a binding's ``done:`` is a DSL
condition over ``result`` (its errors located like any other); ``keep:`` and a slot's
``carry:`` compile into the spec; a constraint's ``asks:`` names input properties (CH321); a
message keyed by a keyword about the arguments together (``anyOf``) is no CH326."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.contracts.registry import Registry
from tests.support.skills_compile import CONTRACT, Diag, compile_files, with_skills


def goals(confirm: str = "confirm: true", done: str = 'result.status == "done"') -> str:
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
        carry: session
      - name: card
        regex: 尾号(?P<value>[0-9]{{4}})
        carry: memory
    {confirm}
    skill:
      name: pay
      args: {{payee: "{{payee}}"}}
      done: {done}
      keep: {{last_status: status}}
    description: 向{{payee}}转账
"""


def test_the_spec_holds_what_was_declared(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_files(
        tmp_path, with_skills(registry, "pay"), {"goals.yaml": goals(), "skills/pay.yaml": CONTRACT}
    )
    assert diags == []
    assert pack is not None and pack.goals is not None and pack.skills is not None
    intent = pack.goals.intents[0]
    assert [(s.name, s.carry) for s in intent.slots] == [("payee", "session"), ("card", "memory")]
    assert intent.skill is not None
    assert intent.skill.keep == (("last_status", "status"),)
    assert intent.skill.done is not None
    assert pack.goals.remembered_slots == frozenset({"card"})
    contract = pack.skills.contracts[0]
    assert contract.executes is True
    assert contract.constraints[0].asks == ("half",)


def test_an_executing_skill_without_confirm_is_refused(tmp_path: Path, registry: Registry) -> None:
    _, diags = compile_files(
        tmp_path,
        with_skills(registry, "pay"),
        {"goals.yaml": goals(confirm=""), "skills/pay.yaml": CONTRACT},
    )
    assert diags == [
        Diag(
            "CH327",
            "error",
            "intent 'transfer' calls skill 'pay', which executes (effect: execute), without "
            "asking the user first",
            "goals.yaml:16:7",
            "add confirm: true to the intent: nothing executes before the user's yes",
        )
    ]


@pytest.mark.parametrize(
    ("done", "code", "message", "where"),
    [
        (
            "result.status ==",
            "CH100",
            "syntax error in the done: condition of intent 'transfer'",
            "goals.yaml:18:29",
        ),
        ('output contains "x"', "CH101", "unknown subject 'output'", "goals.yaml:18:13"),
    ],
)
def test_a_done_condition_is_checked_like_any_expression(
    tmp_path: Path, registry: Registry, done: str, code: str, message: str, where: str
) -> None:
    _, diags = compile_files(
        tmp_path,
        with_skills(registry, "pay"),
        {"goals.yaml": goals(done=done), "skills/pay.yaml": CONTRACT},
    )
    assert [(d.code, d.where) for d in diags] == [(code, where)]
    assert diags[0].message.startswith(message)


def test_asks_names_an_input_property(tmp_path: Path, registry: Registry) -> None:
    contract = CONTRACT.replace("asks: [half]", "asks: [halve]")
    _, diags = compile_files(
        tmp_path, with_skills(registry, "pay"), {"goals.yaml": goals(), "skills/pay.yaml": contract}
    )
    assert [(d.code, d.message, d.where, d.hint) for d in diags] == [
        (
            "CH321",
            "constraint of skill 'pay' asks for 'halve', which the input schema does not declare",
            "skills/pay.yaml:20:12",
            "did you mean 'half'?",
        )
    ]


def test_a_message_for_the_arguments_together_is_no_warning(
    tmp_path: Path, registry: Registry
) -> None:
    contract = CONTRACT.replace(
        "constraints:",
        "messages:\n  anyOf: 请给出收款人\n  minProperties: 请给出收款人\nconstraints:",
    )
    _, diags = compile_files(
        tmp_path, with_skills(registry, "pay"), {"goals.yaml": goals(), "skills/pay.yaml": contract}
    )
    assert diags == []
