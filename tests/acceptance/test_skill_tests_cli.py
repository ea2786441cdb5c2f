"""Acceptance (issue 32, item 3): skill tests explain themselves, through the CLI, on a pack
written the way a pack author reported it — a contract over the reference ``account_balance``
(charter-skills) whose output schema says the balance is a number (the skill gives an exact
decimal string), and whose input schema does not require the card's tail (the skill reads it).

* ``charter test`` says why a case failed under its FAIL line: the contract violation or the
  exception (type, message, where it was raised), the arguments and what the skill returned
  (it said only ``status: expected "ok", got "failed"``); so do ``--format json`` and the
  JUnit file;
* a case pins the reply the agent tells with ``expect: {reply: ...}`` (``message`` is the
  result's summary as the skill wrote it);
* ``charter skills call`` runs in an empty folder, without a database (it said ``no database
  at charter.db``), and leaves nothing there.
"""

from __future__ import annotations

import inspect
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., Any]

CONTRACT = """\
name: account_balance
description: 按银行卡号后四位查询演示账户的余额
input_schema:
  type: object
  additionalProperties: false
  properties:
    account_tail: {type: string, pattern: "^[0-9]{4}$"}
output_schema:
  type: object
  required: [results, summary]
  properties:
    results:
      type: array
      items:
        type: object
        properties:
          account_tail: {type: string}
          balance: {type: %s}
    summary: {type: string}
reply:
  - when: found == 0
    text: 没有查到卡号后四位为{args.account_tail}的账户。
  - each: 尾号{account_tail}的账户余额为{balance}元。
tests:
  - name: 查余额
    args: {account_tail: "1234"}
    expect: {status: ok, reply: 尾号1234的账户余额为12345.60元。}
  - name: 没给卡号
    args: {}
    expect: {status: ok}
"""

OUTPUT = (
    '{"results": [{"account_tail": "1234", "account_type": "活期储蓄", "as_of": "2024-05-01", '
    '"balance": "12345.60", "balance_upper": "壹万贰仟叁佰肆拾伍元陆角", "currency": "CNY"}], '
    '"summary": "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），'
    '数据截至2024-05-01。"}'
)


def write_pack(root: Path, balance_type: str) -> Path:
    pack = root / "acme"
    (pack / "skills").mkdir(parents=True)
    (pack / "pack.yaml").write_text("name: acme\nversion: 0.1.0\n", encoding="utf-8")
    (pack / "skills" / "account_balance.yaml").write_text(CONTRACT % balance_type, encoding="utf-8")
    return pack


def reads_the_tail() -> tuple[str, int]:
    """The file and line where the reference skill reads ``args["account_tail"]``."""
    from charter_skills.finance import AccountBalance

    lines, start = inspect.getsourcelines(AccountBalance.__call__)
    line = next(n for n, text in enumerate(lines, start) if 'args["account_tail"]' in text)
    return Path(inspect.getsourcefile(AccountBalance) or "").name, line


def test_a_failing_skill_test_says_why(run_cli: Run, tmp_path: Path) -> None:
    pack = write_pack(tmp_path, "number")
    got = run_cli("test", str(pack))
    assert (got.code, got.err) == (1, "")
    lines = got.out.splitlines()
    where = pack / "skills" / "account_balance.yaml"
    assert lines[:6] == [
        f"FAIL acme/account_balance: 查余额 ({where}:25:5)",
        '    status: expected "ok", got "failed"',
        '    reply: expected "尾号1234的账户余额为12345.60元。", got (none)',
        "    failure: contract_violation: output schema: results.balance: '12345.60' is not of "
        "type 'number'",
        '    args: {"account_tail": "1234"}',
        f"    output: {OUTPUT}",
    ]
    name, line = reads_the_tail()
    assert lines[6:9] == [
        f"FAIL acme/account_balance: 没给卡号 ({where}:28:5)",
        '    status: expected "ok", got "failed"',
        "    failure: error: KeyError: 'account_tail'",
    ]
    assert lines[9].startswith("      raised at ")
    assert lines[9].endswith(f"{name}:{line}, in __call__")
    assert lines[10:] == [
        "    args: {}",
        "    output: (none)",
        "rule coverage: 100.0% of 0 rules (each seen passing and failing)",
        "0 passed, 2 failed",
    ]


def test_json_and_junit_say_why(run_cli: Run, tmp_path: Path) -> None:
    pack = write_pack(tmp_path, "number")
    junit = tmp_path / "junit.xml"
    got = run_cli("test", str(pack), "--format", "json", "--junit-xml", str(junit))
    assert got.code == 1
    first, second = json.loads(got.out)["cases"]
    assert first["call"] == {
        "args": {"account_tail": "1234"},
        "inject": None,
        "status": "failed",
        "failure": {
            "kind": "contract_violation",
            "detail": "output schema: results.balance: '12345.60' is not of type 'number'",
            "raised_at": None,
        },
        "returned": True,
        "output": json.loads(OUTPUT),
        "fallback": None,
        "text": "output schema: results.balance: '12345.60' is not of type 'number'",
        "reply": None,
    }
    assert second["call"]["failure"]["detail"] == "KeyError: 'account_tail'"
    assert second["call"]["failure"]["raised_at"].endswith(
        f"{reads_the_tail()[0]}:{reads_the_tail()[1]}, in __call__"
    )
    assert (second["call"]["returned"], second["call"]["output"]) == (False, None)
    failures = (
        ET.parse(junit).getroot().findall(".//testsuite[@name='acme/account_balance']//failure")
    )
    assert [f.get("message") for f in failures] == [
        'status: expected "ok", got "failed" (failure: contract_violation: output schema: '
        "results.balance: '12345.60' is not of type 'number')",
        'status: expected "ok", got "failed" (failure: error: KeyError: \'account_tail\')',
    ]
    assert f"output: {OUTPUT}" in (failures[0].text or "").splitlines()


def test_a_fixed_contract_passes_and_pins_its_reply(run_cli: Run, tmp_path: Path) -> None:
    pack = write_pack(tmp_path, "string")
    text = (pack / "skills" / "account_balance.yaml").read_text(encoding="utf-8")
    fixed = text.replace("  - name: 没给卡号\n    args: {}\n    expect: {status: ok}\n", "")
    fixed += (
        "  - name: 查无此卡\n"
        '    args: {account_tail: "9999"}\n'
        "    expect: {status: ok, reply: 没有查到卡号后四位为9999的账户。}\n"
        "  - name: 把摘要当回复\n"
        '    args: {account_tail: "1234"}\n'
        "    expect: {status: ok, message: 尾号1234的账户余额为12345.60元。}\n"
    )
    (pack / "skills" / "account_balance.yaml").write_text(fixed, encoding="utf-8")
    got = run_cli("test", str(pack))
    assert got.code == 1
    assert got.out.splitlines()[1:5] == [
        '    message: expected "尾号1234的账户余额为12345.60元。", got "尾号1234的活期储蓄账户余额为'
        '¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"',
        "      diff: (-expected +got) 尾号1234的{+活期储蓄+}账户余额为[-12345.60元-]{+¥12,345.60（"
        "壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01+}。",
        "      hint: message is the result's summary as the skill wrote it; this text is the "
        "reply told (the contract's reply:): expect it with reply:",
        '    args: {"account_tail": "1234"}',
    ]
    assert got.out.splitlines()[-1] == "2 passed, 1 failed"


def test_an_unknown_expectation_is_reported(run_cli: Run, tmp_path: Path) -> None:
    pack = write_pack(tmp_path, "string")
    path = pack / "skills" / "account_balance.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("reply: 尾号1234", "told: 尾号1234"),
        encoding="utf-8",
    )
    got = run_cli("validate", str(pack))
    assert "CH012 unknown key 'told' (warning)" in got.out
    assert "hint: expected one of: action, failure, message, reply, results, status" in got.out


def test_skills_call_in_an_empty_folder(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = write_pack(tmp_path / "packs", "string")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    got = run_cli(
        "skills", "call", "account_balance", "--domain", str(pack), "--args",
        '{"account_tail": "1234"}',
    )  # fmt: skip
    assert (got.code, got.err) == (0, "")
    assert got.out == (
        "account_balance: ok\n"
        "  answer: 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），"
        "数据截至2024-05-01。\n"
    )
    assert list(empty.iterdir()) == []
    # --db still names the database to keep tickets and breaker state in: it must exist
    got = run_cli(
        "skills", "call", "account_balance", "--domain", str(pack), "--db",
        f"sqlite:///{empty / 'charter.db'}",
    )  # fmt: skip
    assert (got.code, got.out) == (1, "")
    assert got.err.startswith(f"charter skills call: no database at {empty / 'charter.db'}")
