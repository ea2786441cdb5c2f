"""The finance executing skill ``invoice_issue`` called directly on fresh instances: the kinds it
takes (exactly what the finance pack's ``invoice`` intent can put in its slot), the invoices it
issues with every field, the refusals with their codes and exact words, the check digit of the
tax id (python-stdnum), and the numbering."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from stdnum.cn import uscc

from charter_skills._data import load
from charter_skills.invoices import KINDS, InvoiceIssue, check_digit_ok

ROOT = Path(__file__).resolve().parents[3]
FINANCE = ROOT / "domains" / "finance"
STAR = {"title": "上海星辰科技有限公司", "tax_id": "91310000MA1FL5LX3K"}
BROOK = {"title": "杭州小溪文化传媒有限公司", "tax_id": "91330100MA2CX1Y2P3"}


def invoice_slot_values() -> set[str]:
    """Every value the invoice intent's kind slot can hold: its regex's alternatives and its
    default."""
    goals = yaml.safe_load((FINANCE / "goals.yaml").read_text(encoding="utf-8"))
    intent = next(i for i in goals["intents"] if i["id"] == "invoice")
    slot = next(s for s in intent["slots"] if s["name"] == "kind")
    m = re.fullmatch(r"\(\?P<value>([^()]+)\)", slot["regex"])
    assert m is not None, slot["regex"]
    return {*m[1].split("|"), slot["default"]}


def test_the_contract_takes_exactly_what_the_invoice_intent_can_give() -> None:
    contract = yaml.safe_load((FINANCE / "skills" / "invoice_issue.yaml").read_text("utf-8"))
    assert contract["effect"] == "execute"
    enum = set(contract["input_schema"]["properties"]["kind"]["enum"])
    assert enum == invoice_slot_values() == set(KINDS)
    assert set(KINDS.values()) == set(contract["output_schema"]["properties"]["kind"]["enum"])


@pytest.mark.parametrize(
    ("kind", "full"),
    [
        ("电子普通发票", "电子普通发票"),
        ("电子发票", "电子普通发票"),
        ("增值税普通发票", "增值税普通发票"),
        ("普通发票", "增值税普通发票"),
        ("普票", "增值税普通发票"),
        ("增值税专用发票", "增值税专用发票"),
        ("专用发票", "增值税专用发票"),
        ("专票", "增值税专用发票"),
    ],
)
def test_short_forms_give_the_full_name(kind: str, full: str) -> None:
    out = InvoiceIssue()({**STAR, "kind": kind})
    assert (out["status"], out["kind"]) == ("issued", full)
    assert f"开具{full}，" in out["summary"]


@pytest.mark.parametrize(
    ("args", "result"),
    [
        (
            STAR,
            {
                "status": "issued",
                "invoice_no": "FP-20240501-0001",
                **STAR,
                "kind": "电子普通发票",
                "date": "2024-05-01",
                "delivery": "email",
                "summary": "已为上海星辰科技有限公司（税号91310000MA1FL5LX3K）开具电子普通发票，"
                "发票号码FP-20240501-0001，将发送至您预留的邮箱。",
            },
        ),
        (
            {**STAR, "kind": "增值税专用发票", "amount": 12000},
            {
                "status": "issued",
                "invoice_no": "FP-20240501-0001",
                **STAR,
                "kind": "增值税专用发票",
                "amount": "12000.00",
                "amount_upper": "壹万贰仟元整",
                "date": "2024-05-01",
                "delivery": "mail",
                "summary": "已为上海星辰科技有限公司（税号91310000MA1FL5LX3K）开具增值税专用发票，"
                "金额¥12,000.00（壹万贰仟元整），发票号码FP-20240501-0001，"
                "纸质发票将在3个工作日内邮寄至您预留的地址。",
            },
        ),
        (  # a company not registered may have any invoice but a special one
            {**BROOK, "kind": "普票", "amount": 880.5},
            {
                "status": "issued",
                "invoice_no": "FP-20240501-0001",
                **BROOK,
                "kind": "增值税普通发票",
                "amount": "880.50",
                "amount_upper": "捌佰捌拾元伍角",
                "date": "2024-05-01",
                "delivery": "mail",
                "summary": "已为杭州小溪文化传媒有限公司（税号91330100MA2CX1Y2P3）开具增值税普通发票，"
                "金额¥880.50（捌佰捌拾元伍角），发票号码FP-20240501-0001，"
                "纸质发票将在3个工作日内邮寄至您预留的地址。",
            },
        ),
    ],
)
def test_an_invoice_that_is_issued(args: dict[str, Any], result: dict[str, Any]) -> None:
    assert InvoiceIssue()(args) == result


@pytest.mark.parametrize(
    ("args", "kind", "code", "reason"),
    [
        (  # the tax id of the finance pack's goals.yaml and conversations: its check digit is K
            {"title": "上海星辰科技有限公司", "tax_id": "91310000MA1FL5LX3Q"},
            "电子普通发票",
            "bad_tax_id",
            "税号91310000MA1FL5LX3Q的校验位不正确，请核对营业执照上的统一社会信用代码后重新提供",
        ),
        (
            {"title": "北京云帆信息技术有限公司", "tax_id": BROOK["tax_id"], "kind": "专票"},
            "增值税专用发票",
            "tax_id_mismatch",
            "税号91330100MA2CX1Y2P3与抬头北京云帆信息技术有限公司不一致，请核对后重新提供",
        ),
        (
            {"title": "北京星辰科技有限公司", "tax_id": STAR["tax_id"]},
            "电子普通发票",
            "tax_id_mismatch",
            "税号91310000MA1FL5LX3K与抬头北京星辰科技有限公司不一致，请核对后重新提供",
        ),
        (
            {**BROOK, "kind": "专用发票"},
            "增值税专用发票",
            "not_registered",
            "杭州小溪文化传媒有限公司不在增值税一般纳税人登记名单中，不能开具增值税专用发票，"
            "可改开电子普通发票或增值税普通发票",
        ),
    ],
)
def test_an_invoice_the_rules_refuse(
    args: dict[str, Any], kind: str, code: str, reason: str
) -> None:
    assert InvoiceIssue()(args) == {
        "status": "rejected",
        "code": code,
        "reason": reason,
        "title": args["title"],
        "tax_id": args["tax_id"],
        "kind": kind,
        "summary": f"{kind}没有开具：{reason}。",
    }


@pytest.mark.parametrize(
    ("tax_id", "ok"),
    [
        ("91110000600037341L", True),  # python-stdnum's own example
        ("91310000MA1FL5LX3K", True),
        ("91310000MA1FL5LX3Q", False),
        ("91110108MA01B2C3D0", True),
        ("91110108MA01B2C3D1", False),
        ("Y1110000600037341L", False),  # a letter in front changes the sum
    ],
)
def test_the_check_digit(tax_id: str, ok: bool) -> None:
    assert check_digit_ok(tax_id) is ok
    if tax_id[:8].isdigit():  # where python-stdnum's validate applies, it agrees
        assert uscc.is_valid(tax_id) is ok


def test_the_registered_companies_have_valid_tax_ids() -> None:
    registered = load("invoices")["registered"]
    assert all(uscc.is_valid(c["tax_id"]) for c in registered)
    assert len({c["tax_id"] for c in registered}) == len(registered)


def test_numbers_count_up_per_instance_and_refusals_take_none() -> None:
    issue = InvoiceIssue()
    numbers = [
        issue(STAR).get("invoice_no"),
        issue({**BROOK, "kind": "专票"}).get("invoice_no"),  # refused
        issue(BROOK).get("invoice_no"),
    ]
    assert numbers == ["FP-20240501-0001", None, "FP-20240501-0002"]
    assert InvoiceIssue(today="2024-06-30")(STAR)["invoice_no"] == "FP-20240630-0001"


def test_another_registry_decides_the_special_invoices() -> None:
    issue = InvoiceIssue(registered={BROOK["title"]: BROOK["tax_id"]})
    assert issue({**BROOK, "kind": "专票"})["status"] == "issued"
    assert issue({**STAR, "kind": "专票"})["code"] == "not_registered"
