"""Finance executing skill ``transfer`` (``effect: execute``): a transfer to a payee, over the
demo accounts of ``data/accounts.json`` and the payees, limits and risk list of
``data/payees.json``.

A transfer the rules refuse is a result, ``status: rejected`` with a ``code`` and a ``reason``
the user can act on (another card, the payee's card number, the counter); only a transfer that
goes through gets a number, ``TR-<yyyymmdd>-<nnnn>`` of today, counted per instance like
``AppointmentBook``'s bookings.

"Today" is the turn's day when its clock was set (``day_of``: ``charter chat --now``, a
conversation's ``now:``), else the accounts' ``as_of`` (2024-05-01). The demo accounts are
today's, whatever day that is: their balances, and what each card already sent today
(``transferred_today``), counted against the daily limit of a transfer made today — not of one
scheduled for a later day. A transfer dated before today is refused (``past_date``); one dated
after it is scheduled.

The demo data is never changed: every call is judged against the packaged balances and the
amount each card already sent today, so a test's outcome does not depend on the calls before
it; only the numbers advance. Running at most once per goal is the framework's business (its
execution ledger, keyed by the goal id): this class runs whenever it is called. Whatever can
raise (a missing argument, an amount cn2an cannot write) raises before a number is taken, so
a call that raised did nothing.

Every amount a text states is written twice, digits and capitals (``¥5,000.00（伍仟元整）``),
as the finance pack's ``amount-upper-and-lower`` rule requires; the payee's card number is
never repeated in full, only its last four digits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from stdnum import luhn

from charter.contracts.skills import SkillContext
from charter_skills._data import Serial, both, day_of, load, money, plain, upper
from charter_skills.finance import Account


@dataclass(frozen=True)
class Payee:
    name: str
    bank: str
    card: str


@dataclass(frozen=True)
class TransferRules:
    """What decides a transfer: the limits (yuan), the saved payees, the risk list (names and
    card numbers), the cards and what each already sent today, the primary card, and the day
    the data is for (the day a skill without the turn's clock takes for today)."""

    single_limit: Decimal
    daily_limit: Decimal
    payees: tuple[Payee, ...]
    risk_names: frozenset[str]
    risk_cards: frozenset[str]
    accounts: tuple[Account, ...]
    sent_today: Mapping[str, Decimal]
    primary: str
    today: str  # YYYY-MM-DD

    @classmethod
    def packaged(cls) -> TransferRules:
        accounts, payees = load("accounts"), load("payees")
        return cls(
            single_limit=money(payees["single_limit"]),
            daily_limit=money(payees["daily_limit"]),
            payees=tuple(Payee(**p) for p in payees["payees"]),
            risk_names=frozenset(r["name"] for r in payees["risk_list"]),
            risk_cards=frozenset(r["card"] for r in payees["risk_list"]),
            accounts=tuple(Account(**a) for a in accounts["accounts"]),
            sent_today={k: money(v) for k, v in accounts["transferred_today"].items()},
            primary=str(accounts["primary"]),
            today=str(accounts["as_of"]),
        )


@dataclass(frozen=True)
class _Refusal:
    code: str
    reason: str


class Transfer:
    """Transfer ``amount`` yuan to ``payee`` from the card ending in ``card_tail`` (default:
    the primary card), today (the turn's day, ``day_of``) or on ``date``. A payee not saved
    needs ``payee_card``."""

    name = "transfer"
    description = "向收款人转账（常用收款人或提供银行卡号的收款人），可指定付款卡和预约日期"

    def __init__(self, rules: TransferRules | None = None) -> None:
        self.rules = rules or TransferRules.packaged()
        self._serial = Serial("TR")

    def fresh(self) -> Transfer:
        """This skill in its first state (its numbering from 1): each conversation test gets
        one, so the numbers it pins do not depend on what ran before."""
        return Transfer(self.rules)

    def __call__(
        self, args: Mapping[str, Any], *, context: SkillContext | None = None
    ) -> dict[str, Any]:
        today = day_of(context, self.rules.today)
        payee = str(args["payee"])
        amount = money(args["amount"])
        tail = str(args.get("card_tail") or self.rules.primary)
        card = args.get("payee_card")
        card = str(card) if card else None
        day = str(args.get("date") or today)
        account = next((a for a in self.rules.accounts if a.tail == tail), None)
        refusal = self._refusal(payee, amount, account, tail, card, day, today)
        if refusal is not None:
            return {
                "status": "rejected",
                "code": refusal.code,
                "reason": refusal.reason,
                "payee": payee,
                "amount": plain(amount),
                "summary": f"向{payee}的转账没有办理：{refusal.reason}。",
            }
        assert account is not None  # a missing card is a refusal
        said = both(amount)  # before the number: whatever raises, raises before the effect
        words = upper(amount)
        balance_after = money(account.balance) - amount
        to = f"{payee}（收款卡尾号{card[-4:]}）" if card else payee
        scheduled = day != today
        number = self._serial.take(today)
        if scheduled:
            summary = (
                f"已预约于{day}向{to}转账{said}，付款卡尾号{tail}，交易流水号{number}，"
                "届时自动转出，请在当天保持卡内余额充足。"
            )
        else:
            summary = f"已向{to}转账{said}，付款卡尾号{tail}，交易流水号{number}。"
        result: dict[str, Any] = {
            "status": "done",
            "transfer_no": number,
            "payee": payee,
            "amount": plain(amount),
            "amount_upper": words,
            "card_tail": tail,
            "balance_after": plain(balance_after),
            "date": day,
            "scheduled": scheduled,
            "summary": summary,
        }
        if card:
            result["payee_card_tail"] = card[-4:]
        return result

    def _refusal(
        self,
        payee: str,
        amount: Decimal,
        account: Account | None,
        tail: str,
        card: str | None,
        day: str,
        today: str,
    ) -> _Refusal | None:
        """Why the rules refuse this transfer on ``today``, the first reason in the order a
        teller checks: the card, the date, the risk list, the payee's card, the limits, the
        balance."""
        rules = self.rules
        if account is None:
            return _Refusal("unknown_card", f"没有找到尾号{tail}的付款卡，请核对卡号后四位")
        if day < today:
            return _Refusal(
                "past_date", f"转账日期{day}早于今天（{today}），请选择今天或之后的日期"
            )
        if payee in rules.risk_names or (card is not None and card in rules.risk_cards):
            return _Refusal(
                "risk", "风险提示，该收款账户存在交易风险，需携带本人身份证件到银行柜台办理"
            )
        if card is not None and not luhn.is_valid(card):
            return _Refusal(
                "bad_card", f"尾号{card[-4:]}的收款卡号校验不通过，请核对卡号后重新提供"
            )
        if card is None and all(p.name != payee for p in rules.payees):
            return _Refusal("unknown_payee", f"{payee}不在您的常用收款人中，请提供收款人的银行卡号")
        if amount > rules.single_limit:
            return _Refusal(
                "single_limit",
                f"单笔转账金额不能超过{both(rules.single_limit)}，大额转账请到银行柜台办理",
            )
        sent = rules.sent_today.get(tail, Decimal(0)) if day == today else Decimal(0)
        if sent + amount > rules.daily_limit:
            left = max(rules.daily_limit - sent, Decimal(0))
            when = "今日" if day == today else f"{day}当日"
            return _Refusal(
                "daily_limit",
                f"超出尾号{tail}的卡单日转账限额{both(rules.daily_limit)}，"
                f"{when}剩余额度{both(money(left))}",
            )
        balance = money(account.balance)
        if balance < amount:
            available = max(balance, Decimal(0))
            return _Refusal(
                "insufficient_balance",
                f"尾号{tail}的卡余额不足，可用余额{both(money(available))}",
            )
        return None
