"""`charter test` through the CLI: the first-party packs are fully covered and green."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


FIRST_PARTY_RULES = [
    "ecommerce/no-lowest-price-claims",
    "ecommerce/promotion-validity",
    "finance/amount-upper-and-lower",
    "finance/date-format",
    "finance/tax-rate-cites-policy",
    "finance/yield-disclaimer",
    "medical/drug-advice-disclaimer",
    "medical/no-diagnosis",
    "memory-grounding/claims-backed-by-memory",
    "uncertainty/uncertainty-marker",
    "zh-customer-service/external-link-disclaimer",
    "zh-customer-service/no-absolute-terms",
    "zh-customer-service/price-format",
]


def compiled(name: str) -> Any:
    from charter.compile.api import compile_path
    from charter.plugins.host import default_host

    root = ROOT / ("domains" if name in ("ecommerce", "finance", "medical") else "rulesets") / name
    pack, diags = compile_path(root, default_host().registry, cache_dir=None)
    assert pack is not None, diags
    return pack


def expected_suites() -> dict[str, int]:
    out = {}
    for name in (
        "ecommerce",
        "finance",
        "medical",
        "memory-grounding",
        "uncertainty",
        "zh-customer-service",
    ):
        pack = compiled(name)
        goals = len(pack.goals.cases) if pack.goals is not None else 0
        talks = len(pack.conversations or ())
        table = 1 if pack.phrases else 0  # the intent table, one case
        out[name] = len([c for c in pack.cases if c.origin == name]) + goals + talks + table
        for c in pack.skills.contracts if pack.skills is not None else ():
            out[f"{name}/{c.name}"] = len(c.cases)
    return out


@pytest.mark.slow  # plays the shipped packs' 164 conversations (about 18 s)
def test_first_party_packs_are_green_and_fully_covered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "reports" / "charter.xml"
    code, out = run(
        capsys, "test", "domains", "rulesets", "--threshold", "100", "--junit-xml", str(junit)
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[-2] == "rule coverage: 100.0% of 13 rules (each seen passing and failing)"
    # every case of every pack ran and passed: rules cases, planner cases, the skill
    # contracts' cases and the conversations (counted from the compiled packs)
    suites = {
        s.get("name"): int(s.get("tests") or 0) for s in ET.parse(junit).getroot().iter("testsuite")
    }
    assert suites == expected_suites()
    total = sum(suites.values())
    assert lines[-1] == f"{total} passed, 0 failed"
    root = ET.parse(junit).getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", str(total), "0")
    # the shipped packs have at least 15 conversations each (issue 14)
    for name in ("ecommerce", "finance", "medical"):
        pack = compiled(name)
        assert len(pack.conversations or ()) >= 15, name
    case = next(root.iter("testcase"))
    assert case.get("file", "").endswith("rules.yaml") and int(case.get("line") or 0) > 0
    prop = root.find("properties/property")
    assert prop is not None and prop.get("value") == "100.0"


@pytest.mark.slow  # plays the shipped packs' 164 conversations (about 17 s)
def test_coverage_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "test", "domains", "rulesets", "--coverage")
    assert code == 0
    table = [line.split() for line in out.splitlines()[1:14]]
    assert [row[0] for row in table] == FIRST_PARTY_RULES
    assert all(row[1:] == ["pass", "✓", "fail", "✓"] for row in table)


@pytest.mark.slow  # plays a shipped pack's conversations (about 5 s)
def test_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "test", "domains/medical", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert [c["name"] for c in doc["cases"]][:2] == [
        "a diagnostic conclusion is blocked",
        "a confirmed diagnosis is blocked",
    ]
    # medical alone does not exercise the inherited rules from both sides
    assert doc["coverage"]["percent"] == pytest.approx(28.57, abs=0.01)


BROKEN_CASES = """\
rules:
  - id: disclaimer
    describe: needs 请遵医嘱
    check: output contains "请遵医嘱"
    on_fail: fix append "（请遵医嘱）"
  - id: never-tested
    describe: nobody wrote a case for this
    check: not output contains "喂"
    on_fail: flag
tests:
  - name: wrong expectations
    output: 多喝水
    pass: [disclaimer]
    fixed: 多喝水。
  - name: right expectations
    output: 多喝水
    fail: [disclaimer]
    verdict: fixed
    fixed: 多喝水（请遵医嘱）
"""


def test_failing_cases_and_threshold(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pack = tmp_path / "p"
    pack.mkdir()
    (pack / "pack.yaml").write_text("name: p\nversion: 0.1.0\n", encoding="utf-8")
    (pack / "rules.yaml").write_text(BROKEN_CASES, encoding="utf-8")
    code, out = run(capsys, "test", str(pack))
    assert code == 1
    assert out.splitlines() == [
        f"FAIL p: wrong expectations ({pack}/rules.yaml:11:5)",
        "    expected rule 'disclaimer' to pass, but it failed",
        "    expected fixed text '多喝水。', got '多喝水（请遵医嘱）'",
        "      diff: (-expected +got) 多喝水[-。-]{+（请遵医嘱）+}",
        "not covered: p/disclaimer: never seen passing",
        "not covered: p/never-tested: never seen passing or failing",
        "rule coverage: 25.0% of 2 rules (each seen passing and failing)",
        "1 passed, 1 failed",
    ]
    (pack / "rules.yaml").write_text(
        BROKEN_CASES.split("  - name: wrong")[0]
        + "  - name: right"
        + BROKEN_CASES.split("  - name: right")[1],
        encoding="utf-8",
    )
    code, out = run(capsys, "test", str(pack), "--threshold", "50")
    assert code == 1
    assert out.splitlines()[-1] == "rule coverage 25.0% is below the threshold 50%"
    code, out = run(capsys, "test", str(pack), "--threshold", "25")
    assert code == 0


def test_packs_that_do_not_compile_fail_with_diagnostics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "test", "tests/fixtures/broken/dsl")
    assert code == 1
    assert "CH102 unknown extractor 'mony'" in out


def test_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "schema")
    assert code == 0
    assert out.splitlines() == [
        "pack           pack.yaml",
        "rules          rules.yaml",
        "goals          goals.yaml",
        "memory         memory.yaml",
        "skill          skills/*.yaml",
        "fallbacks      fallbacks.yaml",
        "faq            faq.yaml",
        "responses      responses.yaml",
        "learning       learning.yaml",
        "patches        patches/*.yaml",
        "conversations  tests/conversations/*.yaml",
        "intents        tests/intents.yaml",
    ]
    code, out = run(capsys, "schema", "rules")
    doc = json.loads(out)
    assert code == 0
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "rules" in doc["properties"]
    code, out = run(capsys, "schema", "conversations")
    assert code == 0 and "conversations" in json.loads(out)["properties"]
    code, _ = run(capsys, "schema", "nope")
    assert code == 2


def test_readme_check_example_is_real(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```console\n", 1)[1].split("```", 1)[0]
    command, *expected = block.splitlines()
    assert command.startswith("$ charter check --domain finance ")
    text = command.split('"')[1]
    code, out = run(capsys, "check", "--domain", "finance", text)
    assert code == 1
    assert out.splitlines() == expected


# ---- conversation tests ---------------------------------------------------------------------

CONVERSATIONS = "tests/fixtures/conversations/balance"
TALK = f"{CONVERSATIONS}/tests/conversations/balance.yaml"
NOT_COVERED_EVENTS = (
    "slot_corrected, slot_carried, cancelled, already_done, confirmation_asked, "
    "confirmation_accepted, confirmation_declined, completed, skill_failed, handed_off, "
    "resumed, invalid, faq"
)
# the built-in texts this pack can say: not the ones naming a slot's label (it has none)
NOT_COVERED_TEMPLATES = (
    "builtin.cancelled#1, builtin.cancelled#2, builtin.handed_off, builtin.resumed#1, "
    "builtin.resumed#2, builtin.skill_failed, builtin.slot_corrected#3, builtin.unanswered#1, "
    "builtin.unanswered#2, builtin.unanswered#3"
)


def test_conversations_run_after_the_other_cases_with_their_coverage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "charter.xml"
    code, out = run(capsys, "test", CONVERSATIONS, "-v", "--junit-xml", str(junit))
    assert code == 0
    assert out.splitlines() == [
        f"PASS balance: 先问卡号再查余额 ({TALK}:3:5)",
        f"PASS balance: 闲聊由模型回答 ({TALK}:29:5)",
        f"PASS balance: 查询故障时给出兜底回复 ({TALK}:42:5)",
        "conversation coverage: balance: intents 1/1, events 4/17, templates 1/11",
        f"not covered: balance: events {NOT_COVERED_EVENTS}",
        f"not covered: balance: templates {NOT_COVERED_TEMPLATES}",
        "rule coverage: 100.0% of 0 rules (each seen passing and failing)",
        "3 passed, 0 failed",
    ]
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures")) == ("3", "0")
    cases = [(c.get("name"), c.get("file"), c.get("line")) for c in root.iter("testcase")]
    assert cases == [
        ("先问卡号再查余额", TALK, "3"),
        ("闲聊由模型回答", TALK, "29"),
        ("查询故障时给出兜底回复", TALK, "42"),
    ]
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props == {
        "rule_coverage_percent": "100.0",
        "conversation_coverage.balance": "intents 1/1, events 4/17, templates 1/11",
    }


WRONG = """\
conversations:
  - name: 故意写错的期望
    model: 您好，请问有什么可以帮您？
    turns:
      - user: 你好
        expect:
          reply: 您好，请问有什么可以帮助您？
          contians: [您好]
      - user: 查一下余额
        expect:
          skills: [account_balance]
          model_calls: 1
  - name: 对的期望
    turns:
      - user: 查一下余额
        expect: {model_calls: 0, ticket: false}
"""


def test_a_failing_conversation_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import shutil

    pack = tmp_path / "balance"
    shutil.copytree(ROOT / CONVERSATIONS, pack, ignore=shutil.ignore_patterns("tests"))
    (pack / "tests" / "conversations").mkdir(parents=True)
    talk = pack / "tests" / "conversations" / "wrong.yaml"
    talk.write_text(WRONG, encoding="utf-8")
    junit = tmp_path / "charter.xml"
    code = main(["test", str(pack), "--junit-xml", str(junit)])
    out, err = capsys.readouterr()
    assert code == 1
    # the misspelt key checks nothing: said first, with the run's other problems, and it goes on
    warned = [
        f"{talk}:8:11: CH012 unknown key 'contians' (warning)",
        "              contians: [您好]",
        "              ^^^^^^^^",
    ]
    assert out.splitlines()[:3] == warned
    report = out.splitlines()[
        out.splitlines().index(f"FAIL balance: 故意写错的期望 ({talk}:2:5)") :
    ]
    assert report[:5] == [
        f"FAIL balance: 故意写错的期望 ({talk}:2:5)",
        "    turn 1 “你好” (line 5): reply: (-expected +got) …请问有什么可以帮[-助-]您？",
        '    turn 2 “查一下余额” (line 9): skills: expected ["account_balance"], got []',
        "    turn 2 “查一下余额” (line 9): model_calls: expected 1, got 0",
        "conversation coverage: balance: intents 1/1, events 2/17, templates 1/11",
    ]
    assert out.splitlines()[-1] == "1 passed, 1 failed, 1 warning"
    assert err == ""
    problems, suite = ET.parse(junit).getroot().findall("testsuite")
    # a warning is a passing testcase of its own, with the diagnostic in its output
    assert (problems.get("name"), problems.get("tests"), problems.get("failures")) == (
        "pack problems",
        "1",
        "0",
    )
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failing, passing = suite.iter("testcase")
    assert [f.get("message") for f in failing.iter("failure")] == [
        line.strip() for line in report[1:4]
    ]
    assert [f.get("type") for f in failing.iter("failure")] == ["ConversationFailed"] * 3
    assert list(passing.iter("failure")) == []


def test_conversations_in_the_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "test", CONVERSATIONS, "--format", "json")
    doc = json.loads(out)
    assert code == 0
    first = doc["cases"][0]
    assert (first["kind"], first["name"], first["ok"], first["location"]) == (
        "conversation",
        "先问卡号再查余额",
        True,
        f"{TALK}:3:5",
    )
    assert first["turns"][0] == {
        "turn": 1,
        "user": "查一下余额",
        "reply": "请问您要查询哪张卡？请告诉我卡号后四位。",
        "verdict": "ask",
        "answered_by": "template",
        "responses": ["builtin.slot_asked#2"],
        "events": ["slot_asked"],
        "model_calls": 0,
    }
    (coverage,) = doc["conversation_coverage"]
    assert coverage["pack"] == "balance"
    assert coverage["intents"] == {"covered": 1, "total": 1, "missing": []}
    assert coverage["events"] == {
        "covered": 4,
        "total": 17,
        "missing": NOT_COVERED_EVENTS.split(", "),
    }
    assert coverage["templates"]["covered"] == 1 and coverage["templates"]["total"] == 11


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["test", "--threshold", "101"], "Invalid value for '--threshold'"),
        (["test", "--threshold", "-5"], "Invalid value for '--threshold'"),
        (["validate", "--max-errors", "-1"], "Invalid value for '--max-errors'"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    code = main([*args, "domains/finance"])
    assert code == 2
    assert said in capsys.readouterr().err


def test_an_unwritable_junit_path_fails_before_the_tests_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    target = blocker / "j.xml"  # a file where a directory should be
    code = main(["test", "domains/finance", "--junit-xml", str(target)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert captured.err.startswith(f"charter test: --junit-xml {target}: ")
    code = main(["test", "domains/finance", "--junit-xml", str(tmp_path)])
    assert code == 2
    assert capsys.readouterr().err == f"charter test: --junit-xml {tmp_path}: is a directory\n"


def test_a_single_declined_request_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    # the built-in confirmation_declined names the one request declined (好的，已取消…), and
    # keeps "these matters" for the requests of a split (issue 32, item 9)
    # and a description holding personal data is told from the slots, not as stored ([PHONE])
    code, out = run(capsys, "test", "tests/fixtures/goals/telecom", "-k", "decline")
    assert (code, out.splitlines()[-1]) == (0, "1 passed, 0 failed")
