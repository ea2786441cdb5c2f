"""Ecommerce reference skills: ``order_lookup``, ``logistics_track``, ``product_price`` and
``coupon_check``, over ``data/orders.json``, ``products.json`` and ``coupons.json``, and the
executing skill ``return_request`` (``effect: execute``) over the orders.

Something not found (an order id, a SKU) is an empty result whose summary says so; a coupon that
cannot be used is a result too (``valid: false`` and the reason): the user asked a question and
"no" is its answer, not a failure of the skill. So is a return the rules refuse (``status:
rejected`` with a ``code`` and a ``reason``).

An order paid with a coupon says so (``coupon``: its code and the discount; the amount is what
was paid). The after-sales request of such an order handles the coupon once: an exchange ships
the replacement under it (it is not redeemed again), a return refunds what was paid and gives
the coupon back to the account while it is still valid.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from charter.contracts.skills import SkillContext
from charter_skills._data import Serial, day_of, load, money, plain, yuan

RETURN_DAYS = 7  # the return window, counted from the day the order was signed for
# every kind the contract admits, as the request it makes (退货退款 is a return)
RETURN_KINDS = {"退货": "退货", "退货退款": "退货", "换货": "换货"}
# what to do instead, by the status of an order that was not signed for
NOT_DELIVERED_HINTS = {
    "已发货": "，请在签收后再申请",
    "待发货": "，未发货的订单可在“我的订单”中直接取消，款项会原路退回",
    "待付款": "，未付款的订单可在“我的订单”中直接取消",
}


def _orders() -> dict[str, dict[str, Any]]:
    return {o["order_id"]: o for o in load("orders")["orders"]}


def _coupons() -> dict[str, dict[str, Any]]:
    return {c["code"]: c for c in load("coupons")["coupons"]}


class OrderLookup:
    name = "order_lookup"
    description = "按订单号查询订单状态、商品和金额"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        order_id = str(args["order_id"])
        order = _orders().get(order_id)
        if order is None:
            return {"results": [], "summary": f"没有查到订单{order_id}，请核对订单号后再试。"}
        amount = money(order["amount"])
        items = [
            {
                "sku": i["sku"],
                "name": i["name"],
                "quantity": i["quantity"],
                "price": plain(money(i["price"])),
            }
            for i in order["items"]
        ]
        names = "、".join(f"{i['name']}×{i['quantity']}" for i in items)
        result: dict[str, Any] = {
            "order_id": order_id,
            "status": order["status"],
            "created_at": order["created_at"],
            "amount": plain(amount),
            "items": items,
        }
        paid = f"实付{yuan(amount)}"
        coupon = order.get("coupon")
        if coupon is not None:
            # the coupon stays with the order's goal (goals.yaml keep:), for its after-sales
            off = money(coupon["discount"])
            result["coupon"] = {"code": coupon["code"], "discount": plain(off)}
            paid += f"（券码{coupon['code']}抵扣{yuan(off)}）"
        return {
            "results": [result],
            "summary": f"订单{order_id}当前状态为{order['status']}，商品：{names}，{paid}。",
        }


class LogisticsTrack:
    """The carrier and the tracking events of an order, oldest first; an order not shipped yet
    (or cancelled) has no events, and the summary gives its status instead."""

    name = "logistics_track"
    description = "按订单号查询承运快递和物流轨迹"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        order_id = str(args["order_id"])
        order = _orders().get(order_id)
        if order is None:
            return {"events": [], "summary": f"没有查到订单{order_id}，请核对订单号后再试。"}
        logistics = order["logistics"]
        if logistics is None:
            return {
                "order_id": order_id,
                "events": [],
                "summary": f"订单{order_id}当前状态为{order['status']}，暂无物流信息。",
            }
        events = [{"time": e["time"], "description": e["description"]} for e in logistics["events"]]
        last = events[-1]
        return {
            "order_id": order_id,
            "carrier": logistics["carrier"],
            "tracking_no": logistics["tracking_no"],
            "events": events,
            "summary": f"订单{order_id}由{logistics['carrier']}承运（运单号"
            f"{logistics['tracking_no']}），最新进展：{last['time']} {last['description']}。",
        }


_SKU = re.compile(r"SKU-[A-Z][0-9]{3}")


class ProductPrice:
    """A SKU's list price and its current promotion, whose end date the summary always states
    (the ecommerce pack's promotion-validity rule)."""

    name = "product_price"
    description = "按SKU或商品名称查询商品价格和当前促销"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        products = load("products")["products"]
        given = str(args.get("sku") or args.get("name") or "")
        if args.get("sku") or _SKU.fullmatch(given.upper()):  # a name that is an SKU is one
            sku = given.upper()
            product = next((p for p in products if p["sku"] == sku), None)
            if product is None:
                return {"results": [], "summary": f"没有查到商品{sku}，请核对商品编号后再试。"}
        else:
            name = str(args["name"])
            # the catalogue's name, or a shorter way of saying it (蓝牙耳机 for 无线蓝牙耳机)
            product = next((p for p in products if p["name"] == name), None) or next(
                (p for p in products if name in p["name"]), None
            )
            if product is None:
                return {
                    "results": [],
                    "summary": f"没有查到名为{name}的商品，请核对商品名称，"
                    "或告诉我商品编号（例如SKU-A100）。",
                }
            sku = str(product["sku"])
        price = money(product["price"])
        promo = product["promotion"]
        item: dict[str, Any] = {"sku": sku, "name": product["name"], "price": plain(price)}
        text = f"{product['name']}（{sku}）售价{yuan(price)}"
        if promo is None:
            item["promotion"] = None
            # no 促销 here: the promotion-validity rule wants a validity for any 促销 mentioned
            text += "，目前没有参加活动，以商品页显示的价格为准。"
        else:
            promo_price = money(promo["price"])
            item["promotion"] = {
                "name": promo["name"],
                "price": plain(promo_price),
                "valid_until": promo["valid_until"],
            }
            text += (
                f"，当前活动“{promo['name']}”活动价{yuan(promo_price)}，"
                f"有效期至{promo['valid_until']}。"
            )
        return {"results": [item], "summary": text}


def _discount(coupon: Mapping[str, Any], amount: Decimal) -> Decimal:
    if coupon["kind"] == "fixed":
        return min(money(coupon["value"]), amount)
    off = money(amount * (1 - Decimal(coupon["value"])))
    cap = coupon.get("max_discount")
    return min(off, money(cap)) if cap is not None else off


class CouponCheck:
    """Whether ``coupon_code`` applies to an order of ``order_amount`` yuan: the discount and
    the amount to pay when it does, the reason when it does not."""

    name = "coupon_check"
    description = "校验优惠券能否用于指定金额的订单，并计算优惠金额"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        code = str(args["coupon_code"]).upper()
        amount = money(args["order_amount"])
        coupon = _coupons().get(code)
        # a text that names a 优惠券 also says until when it is valid (the ecommerce pack's
        # promotion-validity rule); a code without a date is called a 券码
        reason = ""
        if coupon is None:
            reason = f"券码{code}不存在，请核对券码"
        elif coupon["state"] == "expired":
            reason = f"优惠券{code}已于{coupon['valid_until']}过期"
        elif coupon["state"] == "used":
            reason = f"券码{code}已被使用，同一张券只能使用一次"
        elif amount < money(coupon["min_amount"]):
            need = money(coupon["min_amount"])
            reason = (
                f"订单金额未满{yuan(need)}，还差{yuan(need - amount)}才能使用优惠券{code}"
                f"（有效期至{coupon['valid_until']}）"
            )
        if coupon is None or reason:
            return {
                "valid": False,
                "coupon_code": code,
                "discount": "0.00",
                "payable": plain(amount),
                "reason": reason,
                "summary": f"{reason}。",
            }
        off = _discount(coupon, amount)
        return {
            "valid": True,
            "coupon_code": code,
            "discount": plain(off),
            "payable": plain(amount - off),
            "reason": "",
            "valid_until": coupon["valid_until"],
            "summary": f"优惠券{code}可以使用，本单优惠{yuan(off)}，优惠后应付"
            f"{yuan(amount - off)}，券有效期至{coupon['valid_until']}。",
        }


class ReturnRequest:
    """Ask for a return (退货, refunding what was paid) or an exchange (换货, for ``size`` when
    given) of a signed-for order, within 7 days of ``delivered_at``. "Today" is the turn's day
    when its clock was set, else the orders' ``as_of`` (``day_of``). Only an accepted request
    gets a number, ``SH-<yyyymmdd>-<nnnn>``, counted per instance; the demo data is never
    changed, and
    whatever can raise runs before the number is taken.

    The coupon an order was paid with is redeemed once: an exchange ships under it again
    (``coupon_handling: reused``); a return refunds the amount paid (after the discount: the
    discount is not paid out) and gives the coupon back while it is valid on "today"
    (``returned``), not once it has expired (``forfeited``). The order's record says which
    coupon that is. ``coupon_code`` is the coupon the after-sales goal inherited from the
    order it was looked up with: checked against the record, and when the order was not paid
    with it the summary says so (``coupon_not_used``) — a code carried over from another
    order is never applied to this one."""

    name = "return_request"
    description = "为签收7天内的订单提交退货或换货申请"

    def __init__(self, today: str | None = None) -> None:
        self.today = today or str(load("orders")["as_of"])
        self._serial = Serial("SH")

    def fresh(self) -> ReturnRequest:
        """This skill in its first state (its numbering from 1): each conversation test gets
        one, so the numbers it pins do not depend on what ran before."""
        return ReturnRequest(self.today)

    def refusal(self, order_id: str, kind: str, today: str | None = None) -> tuple[str, str] | None:
        """(code, reason) when this order cannot be returned or exchanged ``today`` (default
        the demo's day)."""
        today = today or self.today
        order = _orders().get(order_id)
        if order is None:
            return "not_found", f"没有查到订单{order_id}，请核对订单号后再试"
        status = order["status"]
        if status != "已签收":
            hint = NOT_DELIVERED_HINTS.get(status, "")
            return (
                "not_delivered",
                f"订单{order_id}当前状态为{status}，只有已签收的订单才能申请{kind}{hint}",
            )
        signed = date.fromisoformat(order["delivered_at"])
        deadline = signed + timedelta(days=RETURN_DAYS)
        if date.fromisoformat(today) > deadline:
            return (
                "expired",
                f"订单{order_id}于{signed.isoformat()}签收，已超过{RETURN_DAYS}天的退换货期限"
                f"（截至{deadline.isoformat()}），如商品有质量问题，请联系人工客服处理",
            )
        return None

    def __call__(
        self, args: Mapping[str, Any], *, context: SkillContext | None = None
    ) -> dict[str, Any]:
        today = day_of(context, self.today)
        order_id = str(args["order_id"])
        kind = RETURN_KINDS[str(args["kind"])]
        cause = str(args["reason"]) if args.get("reason") else None
        size = str(args["size"]) if args.get("size") and kind == "换货" else None
        refused = self.refusal(order_id, kind, today)
        if refused is not None:
            code, reason = refused
            return {
                "status": "rejected",
                "code": code,
                "reason": reason,
                "order_id": order_id,
                "kind": kind,
                "summary": f"{kind}申请没有提交：{reason}。",
            }
        order = _orders()[order_id]
        given = str(args["coupon_code"]).upper() if args.get("coupon_code") else None
        notes = [f"换成{size}"] if size else []
        notes += [f"原因：{cause}"] if cause else []
        said = f"（{'，'.join(notes)}）" if notes else ""
        refund = money(order["amount"]) if kind == "退货" else None
        coupon = order.get("coupon")
        if refund is not None:
            then = f"退款{yuan(refund)}将在商家收到退货后原路退回"
            if coupon is not None:
                then += (
                    f"（按实付金额退款，券码{coupon['code']}抵扣的"
                    f"{yuan(money(coupon['discount']))}不退现金）"
                )
        else:
            then = "商家收到后将为您发出新商品"
        after, fields = self._coupon(order, kind, given, today)
        number = self._serial.take(today)
        result: dict[str, Any] = {
            "status": "accepted",
            "request_no": number,
            "order_id": order_id,
            "kind": kind,
            "summary": f"已为订单{order_id}提交{kind}申请{said}，售后申请号{number}。"
            f"审核通过后请按页面提示寄回商品，{then}。{after}",
        }
        if refund is not None:
            result["refund"] = plain(refund)
        if size:
            result["size"] = size
        if cause:
            result["return_reason"] = cause
        result.update(fields)
        return result

    def _coupon(
        self, order: Mapping[str, Any], kind: str, given: str | None, today: str
    ) -> tuple[str, dict[str, Any]]:
        """What the request does with the order's coupon: the sentences for the summary (each
        ending in 。) and the result's fields. A text that names a 优惠券 says until when it is
        valid (the pack's promotion-validity rule); a code alone is a 券码."""
        order_id = order["order_id"]
        coupon = order.get("coupon")
        code = coupon["code"] if coupon is not None else None
        said = ""
        fields: dict[str, Any] = {}
        if given is not None and given != code:
            said += f"订单{order_id}支付时没有使用券码{given}，本次售后不涉及这张券。"
            fields["coupon_not_used"] = given
        if coupon is None:
            return said, fields
        fields |= {"coupon_code": code, "coupon_discount": plain(money(coupon["discount"]))}
        if kind == "换货":
            fields["coupon_handling"] = "reused"
            return said + f"换货商品沿用原订单的券码{code}，不会重复核销。", fields
        valid_until = str(_coupons()[coupon["code"]]["valid_until"])
        if date.fromisoformat(today) <= date.fromisoformat(valid_until):
            fields["coupon_handling"] = "returned"
            said += f"优惠券{code}将在退款完成后退回您的账户，有效期至{valid_until}。"
        else:
            fields["coupon_handling"] = "forfeited"
            said += f"优惠券{code}已于{valid_until}过期，不予退回。"
        return said, fields
