"""Acceptance (issue 8): ``charter health --ablation ablation/`` plays the scripted conversations
of the three packs in the five configurations of seed 001 §5.4 (base, memory, reflection,
skills, all) and reports the success rates per pack and overall and the synergy CC.

The success matrix is deterministic (fixed clock, scripted model, a fresh database per
configuration): every case succeeds exactly in the configurations that have the components it
needs, so the rates and CC are pinned whole. CC exceeds 1 here: the mixed cases are solved by
the components together and by none alone (a super-additive, closed-loop result)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

RunCli = Callable[..., Any]

RATES = """\
Ablation · 25 cases · 3 pack(s) · seed 001 §5.4

configuration    ecommerce      finance      medical       overall    gain
──────────────────────────────────────────────────────────────────────────
base             1/8 12.5%    1/8 12.5%    1/9 11.1%    3/25 12.0%
memory           2/8 25.0%    2/8 25.0%    2/9 22.2%    6/25 24.0%  +12.0%
reflection       3/8 37.5%    4/8 50.0%    3/9 33.3%   10/25 40.0%  +28.0%
skills           2/8 25.0%    2/8 25.0%    2/9 22.2%    6/25 24.0%  +12.0%
all             8/8 100.0%   8/8 100.0%   9/9 100.0%  25/25 100.0%  +88.0%

CC                    1.75         1.40         2.00          1.69
band           closed loop  closed loop  closed loop   closed loop
"""

# each case: where it succeeded, in the order base, memory, reflection, skills, all
MATRIX = {
    "ecommerce": {
        "对照：客服时间不需要任何组件": "yyyyy",
        "技能：订单状态要靠 order_lookup 查": "nnnyy",
        "反思：优惠券要写明有效期": "nnyny",
        "反思：“最便宜”换成合规的说法": "nnyny",
        "记忆：换货记得上次要的颜色": "nynny",
        "技能＋反思：实付金额补两位小数": "nnnny",
        "技能＋反思：物流不许“保证”，改用技能结果": "nnnny",
        "记忆＋反思：记得尺码，运费写两位小数": "nnnny",
    },
    "finance": {
        "对照：寒暄不需要任何组件": "yyyyy",
        "记忆：记得用户上次说的风险偏好": "nynny",
        "反思：收益率补上风险提示": "nnyny",
        "反思：“保证收益”被拦下，重试后改口": "nnyny",
        "反思：转账金额要写出大写": "nnyny",
        "技能：余额要靠 account_balance 查": "nnnyy",
        "技能＋反思：漏写大写金额，改用技能结果作答": "nnnny",
        "记忆＋反思：按记住的偏好推荐，补上风险提示": "nnnny",
    },
    "medical": {
        "对照：门诊时间不需要任何组件": "yyyyy",
        "技能：挂哪个科要靠分诊技能": "nnnyy",
        "反思：说到药品要附上“请遵医嘱”": "nnyny",
        "反思：不给诊断结论": "nnyny",
        "记忆：记得上次的体温": "nynny",
        "技能＋反思：科室和“请遵医嘱”都要有": "nnnny",
        "记忆＋技能：记得是孩子，科室按分诊": "nnnny",
        "记忆＋反思：记得是孩子，附上“请遵医嘱”": "nnnny",
        "记忆＋技能＋反思：孩子、科室、“请遵医嘱”": "nnnny",
    },
}
CONFIGS = ("base", "memory", "reflection", "skills", "all")


def test_the_table(run_cli: RunCli) -> None:
    r = run_cli("health", "--ablation", "ablation/")
    assert (r.code, r.err) == (0, "")
    assert r.out.startswith(RATES)
    assert "!" not in r.out  # no case differs from what its needs predict


def test_the_json(run_cli: RunCli) -> None:
    r = run_cli("health", "--ablation", "ablation/", "--format", "json")
    assert r.code == 0
    data = json.loads(r.out)
    passed = {
        p["pack"]: tuple(p["configurations"][c]["passed"] for c in CONFIGS) for p in data["packs"]
    }
    assert passed == {
        "ecommerce": (1, 2, 3, 2, 8),
        "finance": (1, 2, 4, 2, 8),
        "medical": (1, 2, 3, 2, 9),
    }
    overall = data["overall"]
    assert overall["cases"] == 25
    assert [overall["configurations"][c]["rate"] for c in CONFIGS] == [0.12, 0.24, 0.4, 0.24, 1.0]
    assert overall["cc"] == {"value": 1.6923, "band": "closed loop", "reason": None}  # 22/13
    assert [(p["pack"], p["cc"]["value"], p["cc"]["band"]) for p in data["packs"]] == [
        ("ecommerce", 1.75, "closed loop"),  # 7/4
        ("finance", 1.4, "closed loop"),  # 7/5
        ("medical", 2.0, "closed loop"),  # 8/4
    ]
    matrix: dict[str, dict[str, str]] = {}
    for case in data["cases"]:
        marks = "".join("y" if case["outcomes"][c]["ok"] else "n" for c in CONFIGS)
        matrix.setdefault(case["pack"], {})[case["name"]] = marks
        assert case["unexpected"] == []
    assert matrix == MATRIX
    # why a configuration failed, in the case's words
    balance = next(c for c in data["cases"] if c["name"] == "技能：余额要靠 account_balance 查")
    assert balance["file"] == "ablation/finance.yaml"
    assert balance["outcomes"]["memory"] == {
        "ok": False,
        "reply": "抱歉，我暂时查不到尾号1234的账户余额，请登录手机银行查看。",
        "why": "lacks '12,345.60'",
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
