"""Issue 8, acceptance 2: 去年一季度 is misread by the model, the user corrects it, the
reflection log records it, ``charter learn`` compiles a patch next to the pack, and a new
session of another user resolves 去年一季度 correctly with no model involved.

Everything is real: a copy of the finance pack, the reference skill ``quarterly_report``, a
SQLite file, the ``charter learn`` and ``charter validate`` commands; the model is the scripted
backend, which records every call it gets.
"""

from __future__ import annotations

import base64
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter.agent import Agent, AgentOptions
from charter.learn.log import ReflectionLog
from charter.llm.scripted import ScriptedLLM
from tests.support.cli import runner

ROOT = Path(__file__).parents[2]
KEY = base64.b64encode(bytes(range(32))).decode()
# 2026-11-30 10:22:05 in China; the planner and the patches read dates in local time, which is
# UTC on the CI machine: 去年 is 2025 either way
START = datetime(2026, 11, 30, 2, 22, 5, tzinfo=UTC)
Q1_2025 = (
    "演示银行2025年第1季度营业收入¥228,297,740.26（贰亿贰仟捌佰贰拾玖万柒仟柒佰肆拾元贰角陆分），"
    "净利润¥49,646,987.11（肆仟玖佰陆拾肆万陆仟玖佰捌拾柒元壹角壹分），报告发布于2025-04-28。"
)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


# the finance pack is strict: its replies are templates and the model only reads the slots it
# may read (the fill step). A calibration table is for a model that answers, so the tests of
# calibrations run the agent in assisted mode, where the model answers what no intent claims.
ASSISTED = AgentOptions(mode="assisted")


def open_agent(
    pack: Path, db: Path, llm: ScriptedLLM, clock: Clock, options: AgentOptions | None = None
) -> Agent:
    return Agent.from_pack(
        pack,
        llm=llm,
        database_url=f"sqlite:///{db}",
        memory_key=KEY,
        clock=clock,
        options=options,
    )


def steps(agent: Agent, trace_id: str | None) -> dict[str, Any]:
    assert agent.parts.traces is not None and trace_id is not None
    trace = agent.parts.traces.get(trace_id)
    assert trace is not None
    return {s.name: dict(s.outputs) for s in trace.steps}


def test_a_corrected_misreading_becomes_a_patch_that_needs_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "domains" / "finance"  # with the rule sets it extends, as in the repo
    shutil.copytree(ROOT / "domains" / "finance", pack)
    shutil.copytree(ROOT / "rulesets", tmp_path / "rulesets")
    db = tmp_path / "charter.db"
    clock = Clock()

    # ---- session 1: the model reads 去年 as 2024, the user corrects it -------------------------
    misread = ScriptedLLM(['{"year": 2024, "quarter": 1}', '{"year": 2025, "quarter": 1}'])
    with open_agent(pack, db, misread, clock) as agent:
        first = agent.turn("alice", "s1", "给我去年一季度的财报")
        assert first.skills[0]["args"] == {"quarter": 1, "year": 2024}
        assert first.text.startswith("演示银行2024年第1季度营业收入")
        assert (first.answered_by, first.verdict, first.responses) == (
            "template",
            "pass",
            ("quarterly_report.summary",),
        )
        assert steps(agent, first.trace_id)["fill"]["filled"] == {
            first.goals[0]["id"]: {"year": 2024, "quarter": 1}
        }
        clock.now += timedelta(seconds=66)
        second = agent.turn("alice", "s1", "不对，我要的是2025年一季度的财报")
        assert second.skills[0]["args"] == {"quarter": 1, "year": 2025}
        assert second.text == Q1_2025
        assert steps(agent, second.trace_id)["learn"] == {
            "patches": [],
            "triggers": ["negation"],
            "logged": ["R-000001"],
        }
    assert len(misread.calls) == 2  # the two readings of the parameters, nothing else

    # ---- the reflection log holds the seed's entry ------------------------------------------------
    log = ReflectionLog(f"sqlite:///{db}")
    (entry,) = log.entries("finance")
    log.dispose()
    assert entry.as_dict() == {
        "id": "R-000001",
        "pack": "finance",
        "trigger": "negation",
        "intent": "quarterly-report",
        "skill": "quarterly_report",
        "hypothesis": "用户需要查询2025年第1季度的业绩",
        "evidence": [
            {
                "type": "user_input",
                "content": "给我去年一季度的财报",
                "timestamp": "2026-11-30T02:22:05Z",
            },
            {
                "type": "tool_call",
                "name": "quarterly_report",
                "params": {"quarter": 1, "year": 2024},
                "result": {"status": "ok", "text": first.text},
                "timestamp": "2026-11-30T02:22:05Z",
            },
            {
                "type": "user_feedback",
                "content": "不对，我要的是2025年一季度的财报",
                "timestamp": "2026-11-30T02:23:11Z",
            },
        ],
        "correction": {"year": 2025},
        "created_at": "2026-11-30T02:23:11Z",
        "trace_id": second.trace_id,
    }

    # ---- charter learn: review the diff, write the patch, validate the pack ---------------------
    charter = runner(capsys)
    diff = charter("learn", str(pack), "--database", f"sqlite:///{db}", "--diff")
    assert diff.code == 0, diff.err
    assert "+  - id: quarterly-report/time/去年一季度" in diff.out
    assert not (pack / "patches").exists()  # --diff writes nothing
    learned = charter("learn", str(pack), "--database", f"sqlite:///{db}")
    assert learned.code == 0, learned.err
    patch = yaml.safe_load((pack / "patches" / "learned.yaml").read_text("utf-8"))
    assert patch["parameter_mappings"] == [
        {
            "id": "quarterly-report/time/去年一季度",
            "intent": "quarterly-report",
            "entity": "time",
            "phrase": "去年一季度",
            "set": {"year": "current_year - 1", "quarter": 1},
            "learned_from": ["R-000001"],
        }
    ]
    assert "user" not in (pack / "patches" / "learned.yaml").read_text("utf-8").lower()
    valid = charter("validate", str(pack))
    assert (valid.code, valid.out, valid.err) == (0, "", "")

    # ---- session 2, another user, a new process: the patch answers, the model is never asked ----
    clock.now += timedelta(days=3)
    silent = ScriptedLLM([])  # any call would raise: no answer is scripted
    with open_agent(pack, db, silent, clock) as agent:
        reply = agent.turn("bob", "s9", "帮我查一下去年一季度的财报")
        assert silent.calls == ()
        assert reply.skills[0]["args"] == {"quarter": 1, "year": 2025}
        assert (reply.text, reply.answered_by, reply.verdict) == (Q1_2025, "template", "pass")
        trace = steps(agent, reply.trace_id)
        assert trace["patches"]["applied"] == [
            {
                "id": "quarterly-report/time/去年一季度",
                "kind": "mapping",
                "intent": "quarterly-report",
                "score": 1.0,
                "set": {"year": 2025, "quarter": 1},
                "span": [5, 10],
            }
        ]
        assert "fill" not in trace  # nothing left for the model to read
        assert trace["learn"] == {
            "patches": ["quarterly-report/time/去年一季度"],
            "triggers": [],
            "logged": [],
        }
        # the patch is relative to the turn's date: in 2027, 去年 is 2026
        clock.now = datetime(2027, 2, 1, 2, 0, tzinfo=UTC)
        later = agent.turn("carol", "s1", "去年一季度的财报给我看看")
        assert later.skills[0]["args"] == {"quarter": 1, "year": 2026}
        assert silent.calls == ()


def test_a_confused_pair_becomes_a_calibration_table_the_prompt_carries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "domains" / "finance"
    shutil.copytree(ROOT / "domains" / "finance", pack)
    shutil.copytree(ROOT / "rulesets", tmp_path / "rulesets")
    db = tmp_path / "charter.db"
    clock = Clock()
    confused = ScriptedLLM(["市盈率是股价与每股收益之比，反映盈利能力。", "好的，已为您更正。"])
    with open_agent(pack, db, confused, clock, ASSISTED) as agent:
        misread = agent.turn("alice", "s1", "市净率是什么意思")  # no intent claims it
        assert (misread.answered_by, misread.text) == (
            "model",
            "市盈率是股价与每股收益之比，反映盈利能力。",
        )
        agent.turn("alice", "s1", "不对，我问的是市净率，不是市盈率")
        (entry,) = agent.parts.log.entries("finance")  # type: ignore[union-attr]
    assert (entry.trigger, entry.hypothesis, entry.correction) == (
        "negation",
        "用户问的是市净率，不是市盈率",
        {"concept": "市净率", "instead_of": "市盈率"},
    )
    charter = runner(capsys)
    learned = charter("learn", str(pack), "--database", f"sqlite:///{db}")
    assert learned.code == 0, learned.err
    patch = yaml.safe_load((pack / "patches" / "learned.yaml").read_text("utf-8"))
    assert patch["calibrations"] == [
        {
            "id": "calibration/市盈率-市净率",
            "confused_pair": ["市盈率", "市净率"],
            "discriminator": "市盈率：股价 ÷ 每股收益（看盈利能力）；市净率：股价 ÷ 每股净资产（看账面价值）",
            "example": "问的是市净率，不是市盈率",  # no user words in a patch
            "learned_from": ["R-000001"],
        }
    ]
    assert charter("validate", str(pack)).code == 0

    answer = ScriptedLLM(["市净率是股价与每股净资产之比，反映账面价值。"])
    with open_agent(pack, db, answer, clock, ASSISTED) as agent:
        reply = agent.turn("bob", "s2", "市净率怎么看")
        assert (reply.answered_by, reply.text) == (
            "model",
            "市净率是股价与每股净资产之比，反映账面价值。",
        )
        (call,) = answer.calls
        prompt = "\n".join(m.content for m in call.messages)
        assert (
            "注意区分市盈率与市净率：市盈率：股价 ÷ 每股收益（看盈利能力）；"
            "市净率：股价 ÷ 每股净资产（看账面价值）（例：问的是市净率，不是市盈率）" in prompt
        )
        assert steps(agent, reply.trace_id)["learn"]["patches"] == ["calibration/市盈率-市净率"]


HAND = """\
parameter_mappings:
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set: {year: current_year - 1, quarter: 1}
calibrations:
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 市净率看净资产
  - id: calibration/营业收入-净利润
    confused_pair: [营业收入, 净利润]
    discriminator: 净利润是扣除成本费用和税后的利润
    intent: quarterly-report
"""


def test_a_use_is_counted_only_when_the_patch_changed_the_turn(tmp_path: Path) -> None:
    pack = tmp_path / "domains" / "finance"
    shutil.copytree(ROOT / "domains" / "finance", pack)
    shutil.copytree(ROOT / "rulesets", tmp_path / "rulesets")
    (pack / "patches").mkdir()
    (pack / "patches" / "hand.yaml").write_text(HAND, encoding="utf-8")
    llm = ScriptedLLM([], default="市净率是股价与每股净资产之比。")
    with open_agent(pack, tmp_path / "charter.db", llm, Clock(), ASSISTED) as agent:
        # no intent planned: the model answers, and the calibration for every intent goes into
        # its prompt, the one for quarterly reports does not
        general = agent.turn("u1", "s1", "市净率是什么意思")
        assert general.answered_by == "model"
        prompt = "\n".join(m.content for m in llm.calls[-1].messages)
        assert "注意区分市盈率与市净率" in prompt and "净利润是扣除" not in prompt
        assert steps(agent, general.trace_id)["learn"]["patches"] == ["calibration/市盈率-市净率"]
        # the skill's result told by its template, no prompt: the report's calibration changed
        # nothing (the mapping filled the year and quarter)
        calls = len(llm.calls)
        report = agent.turn("u1", "s2", "去年一季度的财报，净利润怎么样")
        assert (report.answered_by, report.responses) == ("template", ("quarterly_report.summary",))
        assert len(llm.calls) == calls
        assert steps(agent, report.trace_id)["learn"]["patches"] == [
            "quarterly-report/time/去年一季度"
        ]
        # the phrase in another intent's request: matched, but no goal took its values
        other = agent.turn("u1", "s3", "去年一季度买的理财，我投了5万元")
        assert [a["kind"] for a in steps(agent, other.trace_id)["patches"]["applied"]] == [
            "mapping"
        ]
        assert steps(agent, other.trace_id)["learn"]["patches"] == []
        assert agent.parts.log is not None
        assert agent.parts.log.uses("finance") == {
            "calibration/市盈率-市净率": 1,
            "quarterly-report/time/去年一季度": 1,
        }
