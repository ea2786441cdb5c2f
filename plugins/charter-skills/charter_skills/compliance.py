"""Finance query skill ``compliance_check``: the regulatory check of a transfer, before the user
is asked to confirm it (seed 000 §5.3: 监管合规检查作为独立子目标，状态为 compliant /
non_compliant). The finance pack runs it as a stage of its transfer intent; a transfer it finds
non-compliant is never confirmed nor executed.

Two demo rules, judged over the fictional payees and risk list of ``data/payees.json``; their
references (``AML-07``, ``KYC-03``) are the demo's own numbering, not clauses of any real
regulation:

- AML-07: a payee (by name or card) on the fraud-risk list is not paid online;
- KYC-03: a transfer above ``new_payee_limit`` to a payee not among the saved ones needs the
  customer's identity checked at a counter.

Every result names the checks it ran; a non-compliant one also its reference and the reason,
which the summary tells with the amount in digits and capitals (the pack's
amount-upper-and-lower rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from charter_skills._data import both, load, money

CHECKS = ["涉诈风险名单", "新收款人大额转账"]


class ComplianceCheck:
    name = "compliance_check"
    description = "转账前的监管合规检查：涉诈风险名单、新收款人大额转账"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        data = load("payees")
        payee, amount = str(args["payee"]), money(args["amount"])
        card = str(args["payee_card"]) if args.get("payee_card") else None
        risky = {r["name"] for r in data["risk_list"]} | {r["card"] for r in data["risk_list"]}
        saved = {p["name"] for p in data["payees"]}
        limit = money(data["new_payee_limit"])
        base = {"payee": payee, "checks": list(CHECKS)}
        if payee in risky or (card is not None and card in risky):
            return {
                **base,
                "status": "non_compliant",
                "regulatory_reference": "AML-07",
                "reason": "收款账户在涉诈风险名单上",
                "summary": f"向{payee}的转账未通过监管合规检查：收款账户在涉诈风险名单上"
                "（监管条款AML-07），不能在线办理，请携带本人身份证件到银行柜台办理。",
            }
        if payee not in saved and amount > limit:
            return {
                **base,
                "status": "non_compliant",
                "regulatory_reference": "KYC-03",
                "reason": f"向新收款人单笔转账超过{both(limit)}",
                "summary": f"向{payee}的转账未通过监管合规检查：向新收款人单笔转账超过"
                f"{both(limit)}需要到银行柜台核验身份（监管条款KYC-03）；"
                f"也可以先转{both(limit)}以内的金额。",
            }
        return {
            **base,
            "status": "compliant",
            "summary": f"向{payee}的转账已通过监管合规检查（涉诈风险名单、新收款人大额转账）。",
        }
