"""`charter validate` through the CLI: silent on valid packs, every problem of a broken tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests/fixtures/broken"
GOLDEN = ROOT / "tests/fixtures/broken.expected.txt"


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_first_party_packs_validate_silently(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", "domains", "rulesets") == (0, "", "")


def test_strict_first_party_packs_validate_silently(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", "--strict", "domains", "rulesets") == (0, "", "")


def test_every_problem_of_the_broken_tree_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", BROKEN)
    assert code == 1
    assert out == GOLDEN.read_text(encoding="utf-8")


EXPECTED_CODES = {
    "CH001": "yaml-syntax/rules.yaml",
    "CH002": "tabs/rules.yaml",
    "CH003": "dup-key/rules.yaml",
    "CH010": "schema/rules.yaml",
    "CH011": "schema/rules.yaml",
    "CH012": "schema/rules.yaml",
    "CH013": "memory/memory.yaml",
    "CH020": "extends-unknown/pack.yaml",
    "CH021": "cycle-a/pack.yaml",
    "CH022": "dup-rule/rules.yaml",
    "CH023": "override/rules.yaml",
    "CH024": "more/rules.yaml",
    "CH025": "missing-plugin/pack.yaml",
    "CH026": "more/pack.yaml",
    "CH030": "dsl/rules.yaml",
    "CH031": "more/rules.yaml",
    "CH100": "dsl/rules.yaml",
    "CH101": "dsl/rules.yaml",
    "CH102": "dsl/rules.yaml",
    "CH103": "dsl/rules.yaml",
    "CH104": "dsl/rules.yaml",
    "CH105": "dsl/rules.yaml",
    "CH106": "more/rules.yaml",
    "CH107": "more/rules.yaml",
    "CH108": "more/rules.yaml",
    "CH110": "dsl/rules.yaml",
    "CH111": "more/rules.yaml",
    "CH300": "goals/goals.yaml",
    "CH301": "goals/goals.yaml",
    "CH302": "goals/goals.yaml",
    "CH303": "goals/goals.yaml",
    "CH304": "goals/goals.yaml",
    "CH305": "goals/goals.yaml",
    "CH310": "memory/memory.yaml",
    "CH311": "memory/memory.yaml",
    "CH312": "memory/memory.yaml",
    "CH320": "skills/skills/policy_search.yaml",
    "CH321": "skills/skills/policy_search.yaml",
    "CH322": "skills/fallbacks.yaml",
    "CH323": "skills/skills/lookup.yaml",
    "CH324": "skills/skills/lookup.yaml",
    "CH325": "skills/fallbacks.yaml",
    "CH326": "skills/skills/policy_search.yaml",
    "CH340": "learning/patches/001-time.yaml",
    "CH341": "learning/patches/001-time.yaml",
    "CH342": "learning/patches/001-time.yaml",
    "CH343": "learning/patches/001-time.yaml",
    "CH344": "learning/patches/002-dup.yaml",
    "CH345": "learning/patches/001-time.yaml",
    "CH346": "learning/patches/001-time.yaml",
    "CH347": "learning/patches/001-time.yaml",
    "CH348": "learning-dir/learning.yaml",
    "CH349": "learning/patches/001-time.yaml",
    "CH350": "responses/responses.yaml",
    "CH351": "responses/responses.yaml",
    "CH352": "responses/responses.yaml",
    "CH353": "responses/responses.yaml",
    "CH354": "responses/responses.yaml",
    "CH355": "responses/goals.yaml",
    "CH356": "responses-rules/responses.yaml",
    "CH357": "responses-rules/responses.yaml",
}


def test_json_output_lists_every_code_at_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--format", "json", BROKEN)
    assert code == 1
    items = json.loads(out)
    seen = {(d["code"], d["path"].split(f"{BROKEN}/", 1)[1]) for d in items}
    for c, path in EXPECTED_CODES.items():
        assert (c, path) in seen, c
    assert {d["code"] for d in items} == set(EXPECTED_CODES)
    keys = {"code", "severity", "message", "hint", "path", "line", "col", "end_line", "end_col"}
    assert all(set(d) == keys for d in items)
    # sorted by location
    assert [(d["path"], d["line"], d["col"]) for d in items] == sorted(
        (d["path"], d["line"], d["col"]) for d in items
    )


@pytest.mark.parametrize(
    ("check", "line", "col", "end_col", "message"),
    [
        # plain scalar: the misspelt keyword
        ("syntax-plain", 4, 19, 26, "unexpected 'contans'"),
        # literal block scalar: second line of the block
        ("syntax-literal-block", 10, 9, 15, "unexpected 'unless'"),
        # folded block scalar: the token after the doubled 'and'
        ("syntax-folded-block", 16, 15, 21, "unexpected 'output'"),
    ],
)
def test_dsl_errors_point_into_the_yaml_file(
    capsys: pytest.CaptureFixture[str], check: str, line: int, col: int, end_col: int, message: str
) -> None:
    _, out_text, _ = run(capsys, "validate", "--format", "json", f"{BROKEN}/dsl")
    items = [
        d for d in json.loads(out_text) if d["code"] == "CH100" and f"'{check}'" in d["message"]
    ]
    assert len(items) == 1
    d = items[0]
    assert (d["line"], d["col"], d["end_line"], d["end_col"]) == (line, col, line, end_col)
    assert d["message"].endswith(message)


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--format", "github", f"{BROKEN}/dsl")
    assert code == 1
    lines = out.splitlines()
    assert lines[3] == (
        "::error file=tests/fixtures/broken/dsl/rules.yaml,line=20,col=12,title=CH101::"
        "unknown subject 'outptu' (did you mean 'output'?)"
    )
    assert all(line.startswith(("::error ", "::warning ")) for line in lines)
    assert len(lines) == 10


def test_sarif_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--format", "sarif", f"{BROKEN}/schema")
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run_ = doc["runs"][0]
    assert run_["tool"]["driver"]["name"] == "charter"
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["CH010", "CH011", "CH012"]
    results = run_["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("CH010", "error"),
        ("CH011", "error"),
        ("CH012", "warning"),
    ]
    region = results[2]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (11, 5)
    uri = results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "tests/fixtures/broken/schema/rules.yaml"


def test_sarif_and_json_are_printed_on_success_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--format", "json", "domains/finance")
    assert (code, json.loads(out)) == (0, [])
    code, out, _ = run(capsys, "validate", "--format", "sarif", "domains/finance")
    assert code == 0
    assert json.loads(out)["runs"][0]["results"] == []


def test_warnings_alone_pass_unless_strict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pack = tmp_path / "warn"
    pack.mkdir()
    (pack / "pack.yaml").write_text("name: warn\nversion: 0.1.0\ncolour: blue\n", "utf-8")
    code, out, _ = run(capsys, "validate", str(pack))
    assert code == 0
    assert "CH012 unknown key 'colour' (warning)" in out
    code, _, _ = run(capsys, "validate", "--strict", str(pack))
    assert code == 1


def test_max_errors_caps_the_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--max-errors", "2", BROKEN)
    assert code == 1
    assert sum(1 for line in out.splitlines() if ": CH" in line) == 2
    total = len(GOLDEN.read_text(encoding="utf-8").split(": CH")) - 1
    golden = GOLDEN.read_text(encoding="utf-8")
    warnings = sum(
        1 for line in golden.splitlines() if ": CH" in line and line.endswith("(warning)")
    )
    summary = golden.splitlines()[-1]
    assert summary.startswith(f"{total - warnings} errors, {warnings} warnings; 20 packs checked")
    assert out.endswith(f"... and {total - 2} more (raise --max-errors to see them)\n{summary}\n")


def test_missing_path_is_a_diagnostic(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "no/such/dir")
    assert code == 1
    assert out.startswith("no/such/dir: CH004 no such file or directory\n")


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "validate", "--format", "xml", "domains")
    assert code == 2
    assert "Invalid value for '--format'" in err


def test_installed_console_script(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("charter")
    env = {**os.environ, "CHARTER_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [str(exe), "validate", f"{BROKEN}/dsl"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "tests/fixtures/broken/dsl/rules.yaml:24:18: CH102 unknown extractor 'mony'" in (
        proc.stdout
    )


def test_packs_compiled_in_worker_processes_report_as_a_serial_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With several cores, packs compile in forked workers; the report is the same, in the
    same order, as when one process compiles them all."""
    import charter.cli.validate as validate_cmd

    calls: list[object] = []
    real = validate_cmd.compile_path

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(validate_cmd, "compile_path", counted)
    monkeypatch.setattr("charter.cli.common.compile_path", counted)
    monkeypatch.setattr(validate_cmd.os, "cpu_count", lambda: 2)
    parallel = run(capsys, "validate", BROKEN)
    assert calls == []  # compiled in the workers: their calls stay there
    monkeypatch.setattr(validate_cmd.os, "cpu_count", lambda: 1)
    serial = run(capsys, "validate", BROKEN)
    assert len(calls) == 20  # compiled here, one pack after the other
    assert parallel == serial
    assert parallel[1] == GOLDEN.read_text(encoding="utf-8")
