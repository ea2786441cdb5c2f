"""`charter test` through the CLI: the first-party packs are fully covered and green."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

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
    # 41 rules cases, 74 planner cases and 137 cases of the 9 skill contracts
    assert lines[-1] == "252 passed, 0 failed"
    root = ET.parse(junit).getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "252", "0")
    suites = {s.get("name"): int(s.get("tests") or 0) for s in root.iter("testsuite")}
    assert suites == {
        "ecommerce": 7 + 24,
        "ecommerce/coupon_check": 19,
        "ecommerce/logistics_track": 11,
        "ecommerce/order_lookup": 11,
        "ecommerce/product_price": 11,
        "finance": 12 + 25,
        "finance/account_balance": 12,
        "finance/policy_search": 30,
        "finance/quarterly_report": 11,
        "medical": 6 + 25,
        "medical/appointment_book": 17,
        "medical/department_recommend": 15,
        "memory-grounding": 4,
        "uncertainty": 3,
        "zh-customer-service": 9,
    }
    case = next(root.iter("testcase"))
    assert case.get("file", "").endswith("rules.yaml") and int(case.get("line") or 0) > 0
    prop = root.find("properties/property")
    assert prop is not None and prop.get("value") == "100.0"


def test_coverage_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "test", "domains", "rulesets", "--coverage")
    assert code == 0
    table = [line.split() for line in out.splitlines()[1:14]]
    assert [row[0] for row in table] == FIRST_PARTY_RULES
    assert all(row[1:] == ["pass", "✓", "fail", "✓"] for row in table)


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
        "pack       pack.yaml",
        "rules      rules.yaml",
        "goals      goals.yaml",
        "memory     memory.yaml",
        "skill      skills/*.yaml",
        "fallbacks  fallbacks.yaml",
        "faq        faq.yaml",
        "learning   learning.yaml",
        "patches    patches/*.yaml",
    ]
    code, out = run(capsys, "schema", "rules")
    doc = json.loads(out)
    assert code == 0
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "rules" in doc["properties"]
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
