"""The ablation (seed 001 §5.4): the CC formula and its bands, the case files' checks (every
problem at its file:line:col), the success criteria, the scripted model of a turn, a case
that asks the model for more than it scripted, the rendering, and a small run end to end."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest

from charter.contracts.models import Message
from charter.contracts.registry import Registry
from charter.health.ablation import run_ablation
from charter.health.ablation_cases import (
    AblationError,
    Case,
    Success,
    Turn,
    load_case_files,
    scripted,
)
from charter.health.ablation_play import Outcome, TurnModel, judge, play
from charter.health.ablation_render import render_ablation
from charter.health.ablation_results import (
    CONFIGURATIONS,
    NAMES,
    AblationReport,
    CaseResult,
    Summary,
    synergy,
)
from charter.reflect.engine import Engine
from tests.support.packs import shipped

ROOT = Path(__file__).resolve().parents[3]
ZERO_GAINS = (
    "the denominator is 0: memory, reflection and skills alone each succeed as often as the "
    "baseline"
)
CANCEL = "the denominator is 0: the single components' gains over the baseline cancel out"
WORSE = "the denominator is negative: the components alone do worse than the baseline"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # pack names resolve under domains/


@pytest.fixture(scope="module")
def finance(registry: Registry) -> Engine:
    return Engine(shipped("finance"), registry)


# ---- CC ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rates", "value", "band", "reason"),
    [
        # base, memory, reflection, skills, all
        ((F(1, 8), F(2, 8), F(4, 8), F(2, 8), F(8, 8)), F(7, 5), "closed loop", ""),
        ((F(0), F(2, 5), F(2, 5), F(1, 5), F(1, 2)), F(1, 2), "independent", ""),
        ((F(0), F(1, 2), F(1, 4), F(1, 4), F(7, 10)), F(7, 10), "closed loop", ""),
        ((F(0), F(1, 2), F(1, 4), F(1, 4), F(3, 10)), F(3, 10), "independent", ""),
        ((F(0), F(1, 2), F(1, 4), F(1, 4), F(29, 100)), F(29, 100), "negative synergy", ""),
        # all does worse than the baseline: a negative CC
        ((F(1, 2), F(3, 4), F(1, 2), F(1, 2), F(1, 4)), F(-1), "negative synergy", ""),
        # the components alone hurt: computed, and said
        ((F(1, 2), F(1, 4), F(1, 4), F(1, 2), F(1, 4)), F(1, 2), "independent", WORSE),
        ((F(1, 4), F(1, 4), F(1, 4), F(1, 4), F(1)), None, None, ZERO_GAINS),
        ((F(0), F(0), F(0), F(0), F(0)), None, None, ZERO_GAINS),
        ((F(1, 5), F(2, 5), F(1, 5), F(0), F(1)), None, None, CANCEL),
    ],
)
def test_cc(rates: Sequence[F], value: F | None, band: str | None, reason: str) -> None:
    cc = synergy(dict(zip(NAMES, rates, strict=True)))
    assert (cc.value, cc.band, cc.reason) == (value, band, reason)


def test_cc_as_json_and_shown() -> None:
    summary = Summary(24, {"base": 3, "memory": 6, "reflection": 10, "skills": 6, "all": 24})
    assert summary.as_dict() == {
        "cases": 24,
        "configurations": {
            "base": {"passed": 3, "rate": 0.125, "gain": None},
            "memory": {"passed": 6, "rate": 0.25, "gain": 0.125},
            "reflection": {"passed": 10, "rate": 0.4167, "gain": 0.2917},
            "skills": {"passed": 6, "rate": 0.25, "gain": 0.125},
            "all": {"passed": 24, "rate": 1.0, "gain": 0.875},
        },
        "cc": {"value": 1.6154, "band": "closed loop", "reason": None},
    }
    assert summary.synergy.shown == "1.62"
    flat = Summary(2, dict.fromkeys(NAMES, 1)).synergy
    assert (flat.shown, flat.as_dict()) == (
        "n/a",
        {"value": None, "band": None, "reason": ZERO_GAINS},
    )
    assert Summary(0, dict.fromkeys(NAMES, 0)).synergy.reason == "no cases"


# ---- case files -------------------------------------------------------------------------------

GOOD = """\
pack: finance
cases:
  - name: 对照
    needs: []
    sessions:
      - - user: 你好，请问你们周末营业吗
          model: 您好，我们周末正常营业。
    success:
      contains: 周末正常营业
"""


def load(tmp_path: Path, text: str, name: str = "cases.yaml") -> list[Any]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_case_files([tmp_path], None)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(AblationError) as err:
        load(tmp_path, text)
    return [
        d.headline().replace(str(tmp_path / "cases.yaml"), "cases.yaml")
        + (f" ({d.hint})" if d.hint else "")
        for d in err.value.diagnostics
    ]


def test_a_good_file(tmp_path: Path) -> None:
    (file,) = load(tmp_path, GOOD)
    assert (file.pack, file.pack_root) == ("finance", ROOT / "domains" / "finance")
    (case,) = file.cases
    assert case == Case(
        "对照",
        ((Turn("你好，请问你们周末营业吗", "您好，我们周末正常营业。"),),),
        Success(contains=("周末正常营业",)),
        needs=(),
        line=3,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "pack: finanse\ncases: []\nother: 1\n",
            [
                "cases.yaml:1:7: CH013 unknown pack 'finanse': neither a pack directory relative "
                "to this file nor a pack name under domains/ or installed by a plugin",
                "cases.yaml:2:8: CH010 cases must be a non-empty list, not an empty list",
                "cases.yaml:3:1: CH012 unknown key 'other' in a case file "
                "(expected one of: cases, pack)",
            ],
        ),
        ("- pack\n", ["cases.yaml:1:1: CH010 a case file must be a mapping, not a list"]),
        (
            "cases: [{}]\n",
            [
                "cases.yaml:1:1: CH011 a case file needs 'pack'",
                "cases.yaml:1:9: CH011 a case needs 'name'",
                "cases.yaml:1:9: CH011 a case needs 'sessions'",
                "cases.yaml:1:9: CH011 a case needs 'success'",
            ],
        ),
        (
            GOOD.replace("needs: []", "needs: [memroy, skills, skills]"),
            [
                "cases.yaml:4:13: CH013 unknown component 'memroy' (did you mean 'memory'?)",
                "cases.yaml:4:29: CH013 component 'skills' is listed twice",
            ],
        ),
        (
            GOOD.replace(
                "          model: 您好，我们周末正常营业。\n", "          modle: x\n      - []\n"
            ),
            [
                "cases.yaml:7:11: CH012 unknown key 'modle' in a turn (did you mean 'model'?)",
                "cases.yaml:8:9: CH010 a session must be a non-empty list of turns, "
                "not an empty list",
            ],
        ),
        (
            GOOD.replace("user: 你好，请问你们周末营业吗", 'user: " "').replace(
                "model: 您好，我们周末正常营业。", "model: []"
            ),
            [
                "cases.yaml:6:17: CH010 user must be a non-empty text, not an empty text",
                "cases.yaml:7:18: CH013 model must be a text, a non-empty list of answers or a "
                "non-empty mapping of patterns to answers, not an empty list",
            ],
        ),
        (
            GOOD.replace("model: 您好，我们周末正常营业。", 'model: {"(": x}'),
            [
                "cases.yaml:7:18: CH013 script pattern '(' is not a regular expression: missing "
                "), unterminated subpattern at position 0"
            ],
        ),
        (
            GOOD.replace(
                "      contains: 周末正常营业\n",
                '      contain: [a]\n      not_contains: [""]\n      matches: "["\n'
                "      passes_rules: yes\n",
            ),
            [
                "cases.yaml:9:7: CH012 unknown key 'contain' in success (did you mean 'contains'?)",
                "cases.yaml:10:21: CH010 not_contains must be a text or a list of non-empty texts",
                "cases.yaml:11:16: CH013 matches is not a regular expression: unterminated "
                "character set at position 0",
                "cases.yaml:12:21: CH010 passes_rules must be true or false, not the text 'yes'",
            ],
        ),
        (
            GOOD + GOOD.split("cases:\n")[1],
            ["cases.yaml:10:11: CH013 case '对照' is defined twice in this file"],
        ),
        (
            "pack: finance\ncases: [\n",
            [
                "cases.yaml:3:1: CH001 expected the node content, but found '<stream end>' while "
                "parsing a flow node (a '[' or '{' is never closed)"
            ],
        ),
    ],
)
def test_a_bad_file_says_where(tmp_path: Path, text: str, expected: list[str]) -> None:
    assert problems(tmp_path, text) == expected


def test_paths_that_hold_no_cases(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(AblationError) as err:
        load_case_files([tmp_path / "empty", tmp_path / "missing.yaml"])
    assert [d.headline() for d in err.value.diagnostics] == [
        f"{tmp_path / 'empty'}: CH004 no case files (*.yaml) in this directory",
        f"{tmp_path / 'missing.yaml'}: CH004 no such case file or directory",
    ]


def test_a_pack_directory_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "mine").mkdir()
    (tmp_path / "packs" / "mine" / "pack.yaml").write_text("name: mine\n", encoding="utf-8")
    (file,) = load(tmp_path, GOOD.replace("pack: finance", "pack: packs/mine"))
    assert file.pack_root == tmp_path / "packs" / "mine"


# ---- success ----------------------------------------------------------------------------------

BALANCE = "余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。"


@pytest.mark.parametrize(
    ("success", "text", "said", "why"),
    [
        (Success(contains=("12,345.60",)), BALANCE, ["查余额"], ""),
        (Success(contains=("1234", "余额")), BALANCE, ["查余额"], "lacks '1234'"),
        (
            Success(not_contains=("R4",), matches="R[12]"),
            "推荐R4。",
            ["x"],
            "contains 'R4'; does not match /R[12]/",
        ),
        # the pack's rules, a fixable one included: the reply as sent must pass them
        (Success(), "余额为5000元。", ["x"], "breaks price-format, amount-upper-and-lower"),
        (Success(passes_rules=False), "余额为5000元。", ["x"], ""),
        # a claim about the user's past rests on what the user said in the case
        (Success(), "您之前提到过想买稳健型理财，推荐R2。", ["我想买稳健型理财", "再推荐"], ""),
        (
            Success(),
            "您之前提到过想买稳健型理财，推荐R2。",
            ["我想买理财"],
            "breaks claims-backed-by-memory",
        ),
    ],
)
def test_success(finance: Engine, success: Success, text: str, said: list[str], why: str) -> None:
    assert judge(success, text, said, finance) == Outcome(not why, text, why)


# ---- the scripted model of a turn -------------------------------------------------------------


def answers(model: Any, prompts: Sequence[str]) -> list[str]:
    llm = scripted(model)
    return [llm.generate([Message("user", p)], max_tokens=8, temperature=0).text for p in prompts]


def test_the_scripted_model() -> None:
    assert answers("好的。", ["a", "b"]) == ["好的。", "好的。"]
    assert answers(["一", "二"], ["a", "b", "c"]) == ["一", "二", "二"]  # the last repeats
    script = {"【技能结果】": "余额为¥1.00（壹元整）。", "": "查不到。"}
    assert answers(script, ["【技能结果】余额1元\n请基于以上信息回答：余额", "余额"]) == [
        "余额为¥1.00（壹元整）。",
        "查不到。",
    ]


@dataclass(frozen=True)
class Said:
    text: str


class Fake:
    """An agent that asks its model once per turn and returns what it said."""

    def __init__(self, model: TurnModel) -> None:
        self.model = model
        self.sessions: list[str] = []

    def turn(self, user_id: str, session_id: str, text: str) -> Said:
        self.sessions.append(session_id)
        done = self.model.generate([Message("user", text)], max_tokens=8, temperature=0)
        return Said(done.text)


def test_play_runs_the_sessions_as_one_user(finance: Engine) -> None:
    model = TurnModel()
    agent = Fake(model)
    case = Case(
        "c",
        ((Turn("a", "一"), Turn("b", "二")), (Turn("c", "三"),)),
        Success(contains=("三",)),
    )
    assert play(agent, model, finance, case, "case-07") == Outcome(True, "三")
    assert agent.sessions == ["case-07-s1", "case-07-s1", "case-07-s2"]


@pytest.mark.parametrize(
    ("turn", "why"),
    [
        (Turn("你好"), "turn 2 (你好): the turn asked the model, and it scripts no answer"),
        (
            Turn("你好", {"你好": ["一"]}),
            "turn 2 (你好): call 2 has no answer: the 1 answers of script pattern '你好' were "
            "all used",
        ),
    ],
)
def test_a_turn_the_script_cannot_answer_fails_the_case(
    finance: Engine, turn: Turn, why: str
) -> None:
    model = TurnModel()

    class Twice(Fake):
        def turn(self, user_id: str, session_id: str, text: str) -> Said:
            super().turn(user_id, session_id, text)
            return super().turn(user_id, session_id, text)  # a retry

    case = Case("c", ((Turn("a", "一"), turn),), Success())
    assert play(Twice(model), model, finance, case, "u") == Outcome(False, "", why)


def test_an_agent_error_is_not_a_case_failure(finance: Engine) -> None:
    model = TurnModel()

    class Broken(Fake):
        def turn(self, user_id: str, session_id: str, text: str) -> Said:
            raise RuntimeError("the goal store is gone")

    with pytest.raises(RuntimeError, match="the goal store is gone"):
        play(Broken(model), model, finance, Case("c", ((Turn("a", "一"),),), Success()), "u")


# ---- the report -------------------------------------------------------------------------------


def result(name: str, needs: tuple[str, ...] | None, ok: str, pack: str = "finance") -> CaseResult:
    """``ok``: one character per configuration, ``y`` when the case succeeded there."""
    outcomes = {
        n: Outcome(c == "y", "回复", "" if c == "y" else "lacks '余额'")
        for n, c in zip(NAMES, ok, strict=True)
    }
    return CaseResult(pack, "ablation/finance.yaml", 3, name, needs, outcomes)


REPORT = AblationReport(
    (
        result("对照", (), "yyyyy"),
        result("余额", ("skills",), "nnnyy"),
        result("合规", ("reflection",), "nnnny"),  # expected in reflection too
        result("订单", None, "nnnny", "ecommerce"),
    )
)


def test_unexpected_outcomes() -> None:
    assert [r.unexpected for r in REPORT.cases] == [(), (), ("reflection",), ()]
    assert REPORT.cases[1].expected == {
        "base": False,
        "memory": False,
        "reflection": False,
        "skills": True,
        "all": True,
    }


def test_the_table() -> None:
    assert render_ablation(REPORT, "table") == (
        "Ablation · 4 cases · 2 pack(s) · seed 001 §5.4\n"
        "\n"
        "configuration      finance   ecommerce      overall    gain\n"
        "───────────────────────────────────────────────────────────\n"
        "base             1/3 33.3%    0/1 0.0%    1/4 25.0%\n"
        "memory           1/3 33.3%    0/1 0.0%    1/4 25.0%   +0.0%\n"
        "reflection       1/3 33.3%    0/1 0.0%    1/4 25.0%   +0.0%\n"
        "skills           2/3 66.7%    0/1 0.0%    2/4 50.0%  +25.0%\n"
        "all             3/3 100.0%  1/1 100.0%   4/4 100.0%  +75.0%\n"
        "\n"
        "CC                    2.00         n/a         3.00\n"
        "band           closed loop         n/a  closed loop\n"
        "CC ecommerce: the denominator is 0: memory, reflection and skills alone each succeed "
        "as often as the\n"
        "baseline\n"
        "\n"
        "finance  needs   base  memory  reflection  skills  all\n"
        "──────────────────────────────────────────────────────\n"
        "对照     -        ✓      ✓         ✓         ✓      ✓\n"
        "余额     skills   ✗      ✗         ✗         ✓      ✓\n"
        "合规     refl     ✗      ✗         ✗!        ✗      ✓\n"
        "\n"
        "ecommerce  needs  base  memory  reflection  skills  all\n"
        "───────────────────────────────────────────────────────\n"
        "订单       ?       ✗      ✗         ✗         ✗      ✓\n"
        "\n"
        "1 case(s) not as their needs predict (!):\n"
        "  ablation/finance.yaml:3 合规 [reflection] failed: lacks '余额'\n"
    )


def test_the_json() -> None:
    data = json.loads(render_ablation(REPORT, "json"))
    assert data["now"] == "2024-05-01T02:00:00Z"
    assert data["configurations"][2] == {"name": "reflection", "components": ["reflection"]}
    assert data["overall"]["cc"] == {"value": 3.0, "band": "closed loop", "reason": None}
    assert [p["pack"] for p in data["packs"]] == ["finance", "ecommerce"]
    assert data["packs"][1]["cc"]["reason"] == ZERO_GAINS
    assert data["cases"][2] == {
        "pack": "finance",
        "file": "ablation/finance.yaml",
        "line": 3,
        "name": "合规",
        "needs": ["reflection"],
        "outcomes": {
            n: {"ok": n == "all", "reply": "回复", "why": None if n == "all" else "lacks '余额'"}
            for n in NAMES
        },
        "unexpected": ["reflection"],
    }
    with pytest.raises(ValueError, match="unknown format 'html': table or json"):
        render_ablation(REPORT, "html")


# ---- a run ------------------------------------------------------------------------------------


def test_a_run_in_the_five_configurations(tmp_path: Path, registry: Registry) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "finance.yaml").write_text(
        GOOD
        + """\
  - name: 余额
    needs: [skills]
    sessions:
      - - user: 查一下我的余额
        - user: 尾号1234
          model:
            "【技能结果】": 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）。
            "": 抱歉，我暂时查不到尾号1234的账户余额。
    success:
      contains: ["12,345.60"]
""",
        encoding="utf-8",
    )
    kept = tmp_path / "db"
    report = run_ablation([cases], registry=registry, database_dir=kept)
    assert [(r.name, [r.outcomes[n].ok for n in NAMES]) for r in report.cases] == [
        ("对照", [True] * 5),
        ("余额", [False, False, False, True, True]),
    ]
    assert report.cases[1].outcomes["reflection"].why == "lacks '12,345.60'"
    # assisted in every configuration: the finance pack is strict, yet the model answers the
    # greeting no intent claims; the balance is told by its template when the skill is on, and
    # the model (without a result) answers it when the skill is off
    assert {c.options().mode for c in CONFIGURATIONS} == {"assisted"}
    assert {report.cases[0].outcomes[n].reply for n in NAMES} == {"您好，我们周末正常营业。"}
    assert [report.cases[1].outcomes[n].reply for n in ("base", "skills")] == [
        "抱歉，我暂时查不到尾号1234的账户余额。",
        "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。",
    ]
    assert report.overall.passed == {"base": 1, "memory": 1, "reflection": 1, "skills": 2, "all": 2}
    assert sorted(p.name for p in kept.iterdir()) == [
        f"ablation-01-finance-{n}.db" for n in sorted(NAMES)
    ]
