"""What CI reads from `charter test` and `charter check`: one broken pack never hides the
others, JSON is always JSON, JUnit carries the packs' problems; `-k`, `--explain`, the diff of
a fixed text and warnings, through the CLI as an author runs it (issue 18 points 4, 11, 12)."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
BROKEN_RULES = "rules:\n  - id: x\n    check: [oops\n"
DIAGNOSTIC = (
    "y1/rules.yaml:4:1: CH001 expected ',' or ']', but got '<stream end>' while parsing a flow "
    "sequence\n"
    "    hint: separate items with ',' and close the collection at line 3, column 12\n"
)
EXPRESS_CASES = 12


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of two packs: y1 with a YAML error, express with twelve green cases."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / ".cache"))
    shutil.copytree(ROOT / "rulesets" / "uncertainty", tmp_path / "y1")
    (tmp_path / "y1" / "rules.yaml").write_text(BROKEN_RULES, encoding="utf-8")
    express = tmp_path / "express"
    shutil.copytree(ROOT / "rulesets" / "zh-customer-service", express)
    manifest = express / "pack.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("name: zh-customer-service", "name: express"),
        encoding="utf-8",
    )
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_broken_pack_does_not_stop_the_others(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "test", "y1", "express", "--junit-xml", "j.xml")
    assert code == 1
    assert out.startswith(DIAGNOSTIC)
    assert out.endswith(f"{EXPRESS_CASES} passed, 0 failed, 1 error in packs\n")
    suites = ET.parse(repo / "j.xml").getroot()
    assert (suites.get("tests"), suites.get("failures")) == (str(EXPRESS_CASES + 1), "1")
    problems, express = suites.findall("testsuite")
    assert (problems.get("name"), problems.get("failures")) == ("pack problems", "1")
    (case,) = problems.findall("testcase")
    assert (case.get("name"), case.get("file"), case.get("line")) == (
        "CH001 y1/rules.yaml:4:1",
        "y1/rules.yaml",
        "4",
    )
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "CH001"
    assert (express.get("name"), express.get("tests")) == ("express", str(EXPRESS_CASES))


def test_the_json_report_carries_the_diagnostics(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "test", "y1", "express", "--format", "json")
    assert (code, err) == (1, "")
    doc = json.loads(out)  # nothing but JSON on stdout
    assert [(d["code"], d["path"], d["line"], d["severity"]) for d in doc["diagnostics"]] == [
        ("CH001", "y1/rules.yaml", 4, "error")
    ]
    assert len(doc["cases"]) == EXPRESS_CASES
    assert doc["summary"] == {
        "passed": EXPRESS_CASES,
        "failed": 0,
        "deselected": 0,
        "errors": 1,
        "warnings": 0,
    }
    assert doc["threshold"] == {"percent": 0.0, "met": True, "problem": None}


def test_check_json_is_json_when_the_pack_does_not_compile(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check", "--domain", "y1", "--format", "json", "您好")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert (doc["pack"], doc["verdict"]) == ("y1", None)
    assert [d["code"] for d in doc["diagnostics"]] == ["CH001"]
    code, out, _ = run(capsys, "check", "--domain", "nowhere", "--format", "json", "您好")
    assert code == 1
    assert [d["message"] for d in json.loads(out)["diagnostics"]] == ["unknown domain 'nowhere'"]


def test_check_json_lists_no_diagnostic_for_a_clean_pack(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", "--domain", "express", "--format", "json", "您好")
    assert code == 0
    doc = json.loads(out)
    assert (doc["verdict"], doc["diagnostics"]) == ("pass", [])


@pytest.mark.parametrize(
    ("expression", "ran"),
    [
        ("link", ["links carry the verification note", "a bare link gets the verification note"]),
        ("absolute and not negated", ["absolute terms are banned", "100% is an absolute term"]),
        (
            "full-width or (amount and 角)",
            [
                "full-width 100％ is banned too",
                "full-width digits are read as digits",
                "a spoken amount with its 角 is one amount",
            ],
        ),
        ("express and nothing-has-this-name", []),
    ],
)
def test_k_selects_cases_by_keyword_expression(
    repo: Path, capsys: pytest.CaptureFixture[str], expression: str, ran: list[str]
) -> None:
    code, out, _ = run(capsys, "test", "express", "-k", expression, "--format", "json")
    doc = json.loads(out)
    assert [c["name"] for c in doc["cases"]] == ran
    assert doc["summary"]["deselected"] == EXPRESS_CASES - len(ran)
    assert code == 0
    code, out, _ = run(capsys, "test", "express", "-k", expression)
    assert out.endswith(f"{len(ran)} passed, 0 failed, {EXPRESS_CASES - len(ran)} deselected\n")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "link and",
            "charter test: -k: at column 9: expected a name, 'not' or '('; got end of input\n"
            "    link and\n"
            "            ^\n",
        ),
        (
            "link price",
            "charter test: -k: at column 6: expected 'and', 'or' or the end; got 'price'\n"
            "    link price\n"
            "         ^\n",
        ),
        (
            "(link or price",
            "charter test: -k: at column 15: expected ')'; got end of input\n"
            "    (link or price\n"
            "                  ^\n",
        ),
    ],
)
def test_a_k_expression_that_does_not_parse_is_a_usage_error(
    repo: Path, capsys: pytest.CaptureFixture[str], expression: str, message: str
) -> None:
    assert run(capsys, "test", "express", "-k", expression) == (2, "", message)


def test_explain_says_why_each_rule_failed_was_skipped_or_passed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "我们保证不会亏本，售价１２３元。"
    code, out, _ = run(capsys, "check", "--domain", "express", "--explain", text)
    assert code == 1
    assert out.split("explain", 1)[1] == (
        " (3 rules, spans are character offsets in the text):\n"
        "  ✗ fail  no-absolute-terms (retry, express/rules.yaml:3:5)\n"
        "      failed: 请勿使用“肯定”“绝对”“100%”“保证”等绝对化用语，改用留有余地的表述。\n"
        "      blamed: '保证' at 2-4\n"
        "      saw: '保证' at 2-4 (phrase '保证')\n"
        "  ✗ fail  price-format (fix, express/rules.yaml:14:5)\n"
        "      failed: 价格请写成“128.00元”或“¥128.00”，保留两位小数（四舍五入到分）。\n"
        "      blamed: '１２３元' at 11-15\n"
        "      saw: '１２３元' at 11-15 (extractor money)\n"
        "  ✓ pass  external-link-disclaimer (fix, express/rules.yaml:21:5)\n"
        "      passed: nothing it looks for is in the text\n"
    )
    code, out, _ = run(
        capsys, "check", "--domain", "express", "--explain", "--format", "json", "详见www.a.cn"
    )
    rules = {r["rule"]: r for r in json.loads(out)["explain"]}
    assert rules["external-link-disclaimer"] == {
        "rule": "external-link-disclaimer",
        "origin": "express",
        "location": "express/rules.yaml:21:5",
        "action": "fix",
        "outcome": "fail",
        "reason": "failed: 每个外部链接后面都要紧跟“（请自行核实）”。",
        "blamed": [[2, 10]],
        "seen": [{"kind": "extractor", "what": "url", "start": 2, "end": 10, "text": "www.a.cn"}],
    }
    assert rules["price-format"]["reason"] == "passed: nothing it looks for is in the text"


def test_a_wrong_fixed_text_is_shown_as_a_diff(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = repo / "express" / "rules.yaml"
    rules.write_text(
        rules.read_text(encoding="utf-8")
        + "  - name: a fixed price\n"
        + "    output: 赔付3块5。\n"
        + "    fixed: 赔付3.05元。\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "test", "express", "-k", "fixed")
    assert code == 1
    assert out.startswith("FAIL express: a fixed price (express/rules.yaml:")
    assert "    expected fixed text '赔付3.05元。', got '赔付3.50元。'\n" in out
    assert "      diff: (-expected +got) 赔付[-3.05-]{+3.50+}元。\n" in out


def test_warnings_are_shown_by_test(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(repo / "express" / "rules.yaml", repo / "express" / "rules.yml")
    code, out, _ = run(capsys, "test", "express")
    assert code == 0
    assert out.startswith(
        "express/rules.yml: CH005 file rules.yml is not a pack file: it is not read (warning)\n"
    )
    assert out.endswith(f"{EXPRESS_CASES} passed, 0 failed, 1 warning\n")


def test_conversations_that_cannot_run_are_a_diagnostic(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A pack that encrypts memory, tested where the memory extra is not installed."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path))
    # as if cryptography were not installed: importing it raises ImportError
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    code, out, err = run(capsys, "test", "domains/medical", "-k", "白细胞偏高 or 没说哪项检查")
    assert (code, err) == (1, "")
    assert out.splitlines()[0] == (
        "domains/medical/tests/conversations/report.yaml:3:5: CH370 the conversations of pack "
        "'medical' cannot run here: encrypting memory needs the cryptography package: "
        "pip install 'charter[memory]'"
    )
    # the two chosen conversations did not run: neither passed nor deselected
    assert out.endswith("\n0 passed, 0 failed, 138 deselected, 1 error in packs\n")
