"""Acceptance (issue 8): ``charter health --ablation ablation/`` plays the scripted conversations
of the three packs in the five configurations of seed 001 §5.4 (base, memory, reflection,
skills, all) and reports the success rates per pack and overall and the synergy CC.

Every configuration runs the agent with ``AgentOptions(mode="assisted")``: the shipped packs are
strict (the model never speaks there), so the ablation measures the components around a model
that may answer what no template covers, while templates tell what they cover (a skill's
result, a question). The success matrix is deterministic (fixed clock, scripted model, a fresh
database per configuration): every case succeeds exactly in the configurations that have the
components it needs, so the rates and CC are pinned whole. CC exceeds 1 here: the mixed cases
are solved by the components together and by none alone (a super-additive, closed-loop
result). The cases that need skills with another component are all ecommerce's: only there
does one reply hold a skill's result (told by its template) and a model's answer (price
comparison has no skill and no completed template)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

RunCli = Callable[..., Any]

RATES = """\
Ablation · 25 cases · 3 pack(s) · seed 001 §5.4

configuration     ecommerce      finance      medical      overall    gain
──────────────────────────────────────────────────────────────────────────
base             1/10 10.0%    1/8 12.5%    2/7 28.6%   4/25 16.0%
memory           2/10 20.0%    2/8 25.0%    3/7 42.9%   7/25 28.0%  +12.0%
reflection       3/10 30.0%    3/8 37.5%    2/7 28.6%   8/25 32.0%  +16.0%
skills           2/10 20.0%    2/8 25.0%    3/7 42.9%   7/25 28.0%  +12.0%
all            10/10 100.0%    7/8 87.5%    5/7 71.4%  22/25 88.0%  +72.0%

CC                     2.25         1.50         1.50         1.80
band            closed loop  closed loop  closed loop  closed loop
"""

# each case: where it succeeded, in the order base, memory, reflection, skills, all
MATRIX = {
    "ecommerce": {
        "对照：客服时间不需要任何组件": "yyyyy",
        "技能：订单状态要靠 order_lookup 查": "nnnyy",
        "反思：促销要写明活动时间": "nnyny",
        "反思：“最便宜”换成合规的说法": "nnyny",
        "记忆：比价时记得上次看过的机型": "nynny",
        "技能＋反思：查订单顺带比价，不许编价格": "nnnny",
        "技能＋反思：查物流顺带比价，不许“保证”": "nnnny",
        "记忆＋反思：记得尺码，金额写两位小数": "nnnny",
        "记忆＋技能：查订单顺带比价，记得刚看的机型": "nnnny",
        "记忆＋技能＋反思：查订单比价，不说“最便宜”": "nnnny",
    },
    "finance": {
        "对照：寒暄不需要任何组件": "yyyyy",
        "记忆：记得用户刚说的风险偏好": "nynny",
        "反思：收益率补上风险提示": "nnyny",
        "反思：“保证收益”被拦下，重试后改口": "nnnnn",  # KNOWN below
        "反思：金额要写出大写": "nnyny",
        "技能：余额要靠 account_balance 查": "nnnyy",
        "记忆＋反思：复述记住的金额，补上大写": "nnnny",
        "记忆＋反思：按记住的偏好推荐，补上风险提示": "nnnny",
    },
    "medical": {
        "对照：道谢不需要任何组件": "yyyyy",
        "技能：挂哪个科要靠分诊技能": "nnnyy",
        "反思：说到药品要附上“请遵医嘱”": "nnnnn",  # KNOWN below
        "反思：不给诊断结论": "yyyyy",  # KNOWN below
        "记忆：记得刚才的体温": "nynny",
        "记忆＋反思：记得是孩子，附上“请遵医嘱”": "nnnny",
        "记忆＋反思：记得不能用青霉素，附上“请遵医嘱”": "nnnnn",  # KNOWN below
    },
}
# Cases that no longer succeed where their needs predict, since intents are recognised by
# their examples (issue 31): the input now opens an intent whose template answers in every
# configuration, so the model's answer, and the component that would fix it, are never
# reached. Each is a gap of the product, kept visible here until it is fixed:
# - 有没有稳赚不赔的投资 opens the wealth recommendation, which asks the amount instead of
#   saying that no investment is guaranteed;
# - 晚上总是睡不着怎么办 opens the symptom consultation, whose symptom slot (a word list)
#   cannot read 睡不着 and asks the patient to describe what they just described;
# - 我是不是得了流感 opens the symptom consultation too (its question is harmless, so the case
#   "succeeds" without reflection);
# - 嗓子发炎了可以吃什么药 (after 我不能用青霉素) is close to both the medication and the symptom
#   consultation: the clarifying question (您是想办理用药咨询，还是症状咨询？) is asked instead.
KNOWN = {
    ("finance", "反思：“保证收益”被拦下，重试后改口"): ["reflection", "all"],
    ("medical", "反思：说到药品要附上“请遵医嘱”"): ["reflection", "all"],
    ("medical", "反思：不给诊断结论"): ["base", "memory", "skills"],
    ("medical", "记忆＋反思：记得不能用青霉素，附上“请遵医嘱”"): ["all"],
}
CONFIGS = ("base", "memory", "reflection", "skills", "all")


@pytest.mark.slow  # plays the ablation conversations six times (about 2 s)
def test_the_table(run_cli: RunCli) -> None:
    r = run_cli("health", "--ablation", "ablation/")
    assert (r.code, r.err) == (0, "")
    assert r.out.startswith(RATES)
    # no case differs from what its needs predict, but the KNOWN ones
    assert r.out.count("!") == sum(map(len, KNOWN.values())) + 1  # and the heading's


@pytest.mark.slow  # plays the ablation conversations six times (about 2 s)
def test_the_json(run_cli: RunCli) -> None:
    r = run_cli("health", "--ablation", "ablation/", "--format", "json")
    assert r.code == 0
    data = json.loads(r.out)
    passed = {
        p["pack"]: tuple(p["configurations"][c]["passed"] for c in CONFIGS) for p in data["packs"]
    }
    assert passed == {
        "ecommerce": (1, 2, 3, 2, 10),
        "finance": (1, 2, 3, 2, 7),
        "medical": (2, 3, 2, 3, 5),
    }
    overall = data["overall"]
    assert overall["cases"] == 25
    assert [overall["configurations"][c]["rate"] for c in CONFIGS] == [0.16, 0.28, 0.32, 0.28, 0.88]
    # (22 - 4) / ((7 - 4) + (8 - 4) + (7 - 4)) = 18/10
    assert overall["cc"] == {"value": 1.8, "band": "closed loop", "reason": None}
    assert [(p["pack"], p["cc"]["value"], p["cc"]["band"]) for p in data["packs"]] == [
        ("ecommerce", 2.25, "closed loop"),  # (10 - 1) / (1 + 2 + 1) = 9/4
        ("finance", 1.5, "closed loop"),  # (7 - 1) / (1 + 2 + 1) = 6/4
        ("medical", 1.5, "closed loop"),  # (5 - 2) / (1 + 0 + 1) = 3/2
    ]
    matrix: dict[str, dict[str, str]] = {}
    for case in data["cases"]:
        marks = "".join("y" if case["outcomes"][c]["ok"] else "n" for c in CONFIGS)
        matrix.setdefault(case["pack"], {})[case["name"]] = marks
        assert case["unexpected"] == KNOWN.get((case["pack"], case["name"]), [])
    assert matrix == MATRIX
    # why a configuration failed, in the case's words
    balance = next(c for c in data["cases"] if c["name"] == "技能：余额要靠 account_balance 查")
    assert balance["file"] == "ablation/finance.yaml"
    assert balance["outcomes"]["memory"] == {
        "ok": False,
        "reply": "抱歉，我暂时查不到尾号1234的账户余额，请登录手机银行查看。",
        "why": "lacks '12,345.60'",
    }
    # without the skill, reflection refuses the model's answers that give no amount (the goal's
    # deliverable) three times: the plain unanswered reply takes their place
    assert balance["outcomes"]["reflection"] == {
        "ok": False,
        "reply": "抱歉，这个问题我暂时无法回答。目前我可以为您办理账户查询、理财产品咨询、转账、"
        "季度业绩查询、开票等业务；如需人工服务，请说“转人工”。",
        "why": "lacks '12,345.60'",
    }
    # one reply, two components: the order's result (skills) beside the model's comparison,
    # whose made-up price only reflection refuses
    mixed = next(c for c in data["cases"] if c["name"] == "技能＋反思：查订单顺带比价，不许编价格")
    assert {n: mixed["outcomes"][n]["why"] for n in ("skills", "reflection", "all")} == {
        "skills": "lacks '4999.00元'; contains '4599'",
        "reflection": "lacks '398.00元'",
        "all": None,
    }


def test_case_files_that_cannot_be_played(run_cli: RunCli, tmp_path: Any) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("pack: finance\ncases:\n  - name: x\n    sessions: []\n", encoding="utf-8")
    r = run_cli("health", "--ablation", str(bad))
    assert r.code == 1
    assert r.out.splitlines()[::3] == [
        f"{bad}:3:5: CH011 a case needs 'success'",
        f"{bad}:4:15: CH010 sessions must be a non-empty list, not an empty list",
    ]


def test_docs_health_shows_this_run() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "health.md").read_text("utf-8")
    shown = "$ charter health --ablation ablation/\nAblation"
    assert shown in doc
    block = doc.split(shown, 1)[1].split("```", 1)[0]
    assert "Ablation" + block == RATES
