"""The typed model of goals.yaml: a shipped pack's file reads whole, and a file the schema
rejected reads as defaults with its list indexes kept (the goals stage points into the file by
them). ``test_typed.py`` fuzzes every model of it with arbitrary documents."""

from __future__ import annotations

from pathlib import Path

from charter.pack.typed.goals import (
    Deliverable,
    GoalsFile,
    Intent,
    Limits,
    PlannerTest,
    SkillBinding,
    Slot,
    Stage,
    StageStatus,
)
from charter.pack.yamlsrc import load_yaml

ROOT = Path(__file__).resolve().parents[3]


def _finance() -> GoalsFile:
    doc, diags = load_yaml(ROOT / "domains" / "finance" / "goals.yaml")
    assert doc is not None and diags == []
    return GoalsFile.read(doc.data)


def test_a_shipped_goals_file_reads_whole() -> None:
    goals = _finance()
    limits = goals.limits
    assert (limits.max_depth, limits.max_new_subgoals, limits.confirm_split_over) == (2, 3, None)
    assert (limits.timeout, limits.root, limits.aggregate) == ("30m", "综合业务办理", "综合查询")
    assert goals.cancel.startswith("input ")
    assert goals.correct == ""
    assert [i.id for i in goals.intents if i is not None] == [
        "fraud",
        "card-lost",
        "account-query",
        "wealth-product",
        "transfer",
        "quarterly-report",
        "invoice",
    ]
    transfer = goals.intents[4]
    assert transfer is not None
    assert (transfer.describe, transfer.group, transfer.timeout) == ("转账", "账户服务", "10m")
    assert [s.name for s in transfer.slots if s is not None] == [
        "payee",
        "amount",
        "payee_card",
        "card_tail",
        "date",
    ]
    payee = transfer.slots[0]
    assert payee is not None
    assert (payee.required, payee.carry, payee.label, payee.extractor) == (
        True,
        "session",
        "收款人",
        "",
    )
    assert payee.role is not None  # read by the words around it: 给李四 / 李四那边
    assert (payee.role.kind, payee.role.before[:2], payee.role.after[:1]) == (
        "name",
        ("给", "向"),
        ("那边",),
    )
    assert transfer.inherits == ("card_tail",)
    assert transfer.confirm is True
    # a deliverable is a template or its long form, in the file's order
    assert transfer.deliverables == (
        "{payee}",
        Deliverable.read(
            {
                "id": "amount-confirmed",
                "describe": "回复写明了转账金额",
                "check": "output mentions money",
            }
        ),
    )
    assert transfer.skill is not None
    assert (transfer.skill.name, transfer.skill.done) == ("transfer", 'result.status == "done"')
    assert transfer.skill.args["date"] == "{date|date}"
    (stage,) = transfer.stages
    assert stage is not None
    assert (stage.id, stage.describe, stage.quiet, stage.slots, stage.by) == (
        "compliance",
        "监管合规检查",
        True,
        (),
        None,
    )
    assert stage.status == StageStatus(completed="compliant", aborted="non_compliant")
    assert stage.skill is not None and stage.skill.name == "compliance_check"


def test_planner_tests_keep_what_the_runner_reads_as_written() -> None:
    goals = _finance()
    first = goals.tests[0]
    assert first is not None
    assert (first.name, first.input, first.now) == (
        "转账，收款人和金额都给了",
        "帮我给张三转账5000元",
        "",
    )
    (planned,) = first.expected.goals
    assert planned is not None
    assert (planned.ref, planned.intent, planned.parent, planned.awaiting) == (
        "n1",
        "transfer",
        None,
        True,
    )
    assert first.plan["goals"][0]["slots"] == {"payee": "张三", "amount": "5000"}
    answered = next(t for t in goals.tests if t is not None and t.goals)
    assert answered.written_goals == [
        {
            "id": "g1",
            "intent": "transfer",
            "status": "pending",
            "slots": {"payee": "李四"},
            "missing": ["amount"],
        }
    ]
    (opened,) = answered.open_goals
    assert (opened.id, opened.intent, opened.missing) == ("g1", "transfer", ("amount",))
    (update,) = answered.expected.updates
    assert update is not None and (update.goal, update.slot, update.value) == (
        "g1",
        "amount",
        "3000",
    )
    assert answered.expected.awaits == ("g1",)


def test_a_file_the_schema_rejected_reads_as_defaults_at_the_files_indexes() -> None:
    goals = GoalsFile.read(
        {
            "limits": {"max_depth": True, "timeout": 30, "confirm_split_over": "2"},
            "cancel": ["取消"],
            "intents": [
                "transfer",
                {
                    "id": 7,
                    "trigger": None,
                    "slots": [None, {"name": 3, "required": "yes", "default": [1]}, {"name": "a"}],
                    "deliverables": [3, "{a}", {"check": 1}],
                    "skill": "pay",
                    "confirm": 1,
                    "stages": [{"id": "s", "skill": 0, "by": 2.5, "slots": "a", "status": []}],
                },
            ],
            "tests": [{"input": 3, "goals": {"id": "g"}, "plan": []}, 5],
        }
    )
    assert goals.limits == Limits()
    assert goals.cancel == ""
    assert goals.intents[0] is None
    intent = goals.intents[1]
    assert intent is not None
    assert (intent.id, intent.trigger, intent.skill, intent.confirm) == (None, None, None, False)
    assert intent.slots[0] is None
    assert intent.slots[1] == Slot()  # no name: the stage compiles no slot of it
    assert intent.slots[2] == Slot.read({"name": "a"})
    assert intent.deliverables == (None, "{a}", Deliverable())
    (stage,) = intent.stages
    assert stage == Stage(id="s")  # nothing says what completes it
    case = goals.tests[0]
    assert case == PlannerTest()
    assert (case.written_goals, case.open_goals, case.expected.goals) == ([], (), ())
    assert goals.tests[1] is None


def test_confirm_keeps_a_question_and_a_default_keeps_its_scalar() -> None:
    assert Intent.read({"confirm": "请确认？"}).confirm == "请确认？"
    assert Intent.read({"confirm": False}).confirm is False
    assert Intent.read({"confirm": None}).confirm is False
    for value in ("3", 3, 2.5, True):
        assert Slot.read({"default": value}).default == value
        assert type(Slot.read({"default": value}).default) is type(value)
    assert Slot.read({"default": {"a": 1}}).default is None


def test_a_skill_binding_keeps_args_and_keep_as_written() -> None:
    binding = SkillBinding.read(
        {"name": "s", "args": {"n": 3, "t": "{a}"}, "keep": {"ref": "data.id"}, "moves": ["ref", 1]}
    )
    assert binding.args == {"n": 3, "t": "{a}"}
    assert binding.keep == {"ref": "data.id"}
    assert binding.moves == ("ref",)
    assert SkillBinding.read({"args": [1], "keep": "x", "moves": "ref"}) == SkillBinding()
