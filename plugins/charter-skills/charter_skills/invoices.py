"""Finance executing skill ``invoice_issue`` (``effect: execute``): an invoice made out to a
company, over ``data/invoices.json`` (the issuing day and the companies registered as general
VAT taxpayers, 一般纳税人).

``kind`` takes the full names and the short forms the finance pack's ``invoice`` intent can put
in its slot (专票, 普票, 电子发票…); the result always gives the full name. The contract checks
the tax id's form (18 characters of the code's alphabet); its check digit is checked here with
``python-stdnum`` (``stdnum.cn.uscc``), and a wrong one is a refusal the user can correct, like
a title that is not registered for a 增值税专用发票 or a tax id that is not the registered
company's. Only an invoice that is issued gets a number, ``FP-<yyyymmdd>-<nnnn>``, counted per
instance; as in ``transfer``, everything that can raise runs before the number is taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from stdnum.cn import uscc

from charter.contracts.skills import SkillContext
from charter_skills._data import Serial, both, day_of, load, money, plain, upper

ELECTRONIC = "电子普通发票"
GENERAL = "增值税普通发票"
SPECIAL = "增值税专用发票"
# every value the contract's enum admits, as the full name it stands for
KINDS = {
    ELECTRONIC: ELECTRONIC,
    "电子发票": ELECTRONIC,
    GENERAL: GENERAL,
    "普通发票": GENERAL,
    "普票": GENERAL,
    SPECIAL: SPECIAL,
    "专用发票": SPECIAL,
    "专票": SPECIAL,
}
DELIVERY = {
    ELECTRONIC: ("email", "将发送至您预留的邮箱"),
    GENERAL: ("mail", "纸质发票将在3个工作日内邮寄至您预留的地址"),
    SPECIAL: ("mail", "纸质发票将在3个工作日内邮寄至您预留的地址"),
}


def check_digit_ok(tax_id: str) -> bool:
    """Is the 18th character the check digit of the first 17 (GB 32100-2015)?"""
    return uscc.calc_check_digit(tax_id[:17]) == tax_id[17:]


@dataclass(frozen=True)
class Refusal:
    code: str
    reason: str


class InvoiceIssue:
    """Issue a ``kind`` invoice (default 电子普通发票) to ``title`` with ``tax_id``, for
    ``amount`` yuan when given, dated the turn's day when its clock was set, else the demo
    data's ``as_of`` (``day_of``)."""

    name = "invoice_issue"
    description = "为企业开具电子普通发票、增值税普通发票或增值税专用发票"

    def __init__(self, registered: Mapping[str, str] | None = None, today: str | None = None):
        data = load("invoices")
        self.registered = (
            dict(registered)
            if registered is not None
            else {c["title"]: c["tax_id"] for c in data["registered"]}
        )
        self.today = today or str(data["as_of"])
        self._serial = Serial("FP")

    def fresh(self) -> InvoiceIssue:
        """This skill in its first state (its numbering from 1): each conversation test gets
        one, so the numbers it pins do not depend on what ran before."""
        return InvoiceIssue(self.registered, self.today)

    def refusal(self, title: str, tax_id: str, kind: str) -> Refusal | None:
        """Why this invoice cannot be issued: a wrong check digit, a tax id that is not the
        registered company's (or a registered tax id under another title), a special invoice
        for a company not registered as a general taxpayer."""
        if not check_digit_ok(tax_id):
            return Refusal(
                "bad_tax_id",
                f"税号{tax_id}的校验位不正确，请核对营业执照上的统一社会信用代码后重新提供",
            )
        known = self.registered.get(title)
        if (known is not None and known != tax_id) or (
            known is None and tax_id in self.registered.values()
        ):
            return Refusal("tax_id_mismatch", f"税号{tax_id}与抬头{title}不一致，请核对后重新提供")
        if kind == SPECIAL and known is None:
            return Refusal(
                "not_registered",
                f"{title}不在增值税一般纳税人登记名单中，不能开具增值税专用发票，"
                "可改开电子普通发票或增值税普通发票",
            )
        return None

    def __call__(
        self, args: Mapping[str, Any], *, context: SkillContext | None = None
    ) -> dict[str, Any]:
        today = day_of(context, self.today)
        title = str(args["title"])
        tax_id = str(args["tax_id"])
        kind = KINDS[str(args.get("kind") or ELECTRONIC)]
        amount: Decimal | None = money(args["amount"]) if args.get("amount") is not None else None
        refused = self.refusal(title, tax_id, kind)
        if refused is not None:
            return {
                "status": "rejected",
                "code": refused.code,
                "reason": refused.reason,
                "title": title,
                "tax_id": tax_id,
                "kind": kind,
                "summary": f"{kind}没有开具：{refused.reason}。",
            }
        said = f"，金额{both(amount)}" if amount is not None else ""
        words = upper(amount) if amount is not None else None
        delivery, how = DELIVERY[kind]
        number = self._serial.take(today)
        result: dict[str, Any] = {
            "status": "issued",
            "invoice_no": number,
            "title": title,
            "tax_id": tax_id,
            "kind": kind,
            "date": today,
            "delivery": delivery,
            "summary": f"已为{title}（税号{tax_id}）开具{kind}{said}，发票号码{number}，{how}。",
        }
        if amount is not None:
            result["amount"] = plain(amount)
            result["amount_upper"] = words
        return result
