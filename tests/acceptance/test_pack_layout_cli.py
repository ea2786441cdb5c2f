"""Nothing in a pack is ignored silently: misnamed and misplaced files, pack files that are
not files, packs without rules and two packs of one name, through the CLI as an author runs it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from charter.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
RULES = """\
rules:
  - id: no-guarantee
    describe: 不得承诺收益
    check: not output contains "保证"
    on_fail: retry
tests:
  - name: 承诺收益
    output: 我保证收益。
    fail: [no-guarantee]
  - name: 正常回答
    output: 收益有波动。
    pass: [no-guarantee]
"""


@pytest.fixture()
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / ".cache"))
    root = tmp_path / "acme"
    root.mkdir()
    (root / "pack.yaml").write_text("name: acme\nversion: 0.1.0\n", encoding="utf-8")
    (root / "rules.yaml").write_text(RULES, encoding="utf-8")
    (root / "README.md").write_text("# acme\n", encoding="utf-8")  # docs are expected
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_a_clean_pack_is_silent(pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", "--strict", "acme") == (0, "")


def _rename_rules(root: Path, name: str) -> None:
    (root / "rules.yaml").rename(root / name)


def _misplaced_test(root: Path) -> None:
    (root / "tests").mkdir()
    (root / "tests" / "rules_test.yaml").write_text("- output: x\n", encoding="utf-8")


def _skill_yml(root: Path) -> None:
    (root / "skills").mkdir()
    (root / "skills" / "lookup.yml").write_text("name: lookup\n", encoding="utf-8")


def _rules_directory(root: Path) -> None:
    shutil.move(root / "rules.yaml", root / "rules.txt")
    (root / "rules.yaml").mkdir()


def _rules_loop(root: Path) -> None:
    (root / "rules.yaml").unlink()
    os.symlink("rules.yaml", root / "rules.yaml")


def _empty_rules(root: Path) -> None:
    (root / "rules.yaml").write_text("rules: []\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("breaks", "strict_only", "expected"),
    [
        (
            lambda r: _rename_rules(r, "rules.yml"),
            True,
            "acme/rules.yml: CH005 file rules.yml is not a pack file: it is not read (warning)\n"
            "    hint: pack files end in .yaml: rename it to rules.yaml\n",
        ),
        (
            lambda r: _rename_rules(r, "rule.yaml"),
            True,
            "acme/rule.yaml: CH005 file rule.yaml is not a pack file: it is not read (warning)\n"
            "    hint: did you mean 'rules.yaml'?\n",
        ),
        (
            _misplaced_test,
            True,
            "acme/tests/rules_test.yaml: CH005 file rules_test.yaml is not read: a pack's tests "
            "are the tests: of each file, the conversations in tests/conversations/ and the "
            "intent table tests/intents.yaml (warning)\n"
            "    hint: put rule cases under tests: in rules.yaml, conversations in "
            "tests/conversations/*.yaml, intent phrases in tests/intents.yaml\n",
        ),
        (
            _skill_yml,
            True,
            "acme/skills/lookup.yml: CH005 file lookup.yml is not read: only *.yaml files are "
            "(warning)\n"
            "    hint: skill contracts end in .yaml: rename it to lookup.yaml\n",
        ),
        (
            _rules_directory,
            False,
            "acme/rules.yaml: CH006 rules.yaml is a directory, not a file: it is not read\n"
            "    hint: a pack's rules.yaml is one YAML file\n",
        ),
        (
            _rules_loop,
            False,
            "acme/rules.yaml: CH006 rules.yaml is a symbolic link loop: it is not read\n"
            "    hint: point the link at a file, or replace it with the file itself\n",
        ),
        (
            _empty_rules,
            True,
            "acme/pack.yaml:1:1: CH008 pack 'acme' has no rules: every answer would pass "
            "unchecked (warning)\n"
            "    name: acme\n"
            "    ^\n"
            "    hint: write rules in rules.yaml, or extend a ruleset (extends: [...])\n",
        ),
    ],
)
def test_nothing_is_ignored_silently(
    pack: Path,
    capsys: pytest.CaptureFixture[str],
    breaks: Callable[[Path], None],
    strict_only: bool,
    expected: str,
) -> None:
    breaks(pack)
    code, out = run(capsys, "validate", "--strict", "acme")
    last = (
        "1 warning (errors under --strict); 1 pack checked\n"
        if strict_only
        else "1 error; 1 pack checked, 1 did not compile\n"
    )
    assert (code, out) == (1, expected + last)
    code, _ = run(capsys, "validate", "acme")
    assert code == (0 if strict_only else 1)


def test_a_threshold_is_not_met_by_a_pack_whose_rules_were_not_read(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "test", "acme", "--threshold", "100")[0] == 0
    _rename_rules(pack, "rules.yml")
    code, out = run(capsys, "test", "acme", "--threshold", "100")
    assert code == 1
    assert out.endswith("no rules to cover: the threshold 100% cannot be met\n")


def test_two_packs_of_one_name(pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(pack, pack.parent / "copy")
    code, out = run(capsys, "validate", "acme", "copy")
    assert code == 1
    assert out == (
        "copy/pack.yaml:1:1: CH007 pack name 'acme' is also the name of acme\n"
        "    name: acme\n"
        "    ^\n"
        "    hint: give each pack its own name: in pack.yaml\n"
        "1 error; 2 packs checked\n"
    )
