"""Ecommerce reference skills: ``order_lookup``, ``logistics_track``, ``product_price`` and
``coupon_check``, over ``data/orders.json``, ``products.json`` and ``coupons.json``.

Something not found (an order id, a SKU) is an empty result whose summary says so; a coupon that
cannot be used is a result too (``valid: false`` and the reason): the user asked a question and
"no" is its answer, not a failure of the skill.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from charter_skills._data import load, money, plain, yuan


def _orders() -> dict[str, dict[str, Any]]:
    return {o["order_id"]: o for o in load("orders")["orders"]}


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
        return {
            "results": [
                {
                    "order_id": order_id,
                    "status": order["status"],
                    "created_at": order["created_at"],
                    "amount": plain(amount),
                    "items": items,
                }
            ],
            "summary": f"订单{order_id}当前状态为{order['status']}，商品：{names}，"
            f"实付{yuan(amount)}。",
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


class ProductPrice:
    """A SKU's list price and its current promotion, whose end date the summary always states
    (the ecommerce pack's promotion-validity rule)."""

    name = "product_price"
    description = "按SKU查询商品价格和当前促销"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        sku = str(args["sku"]).upper()
        product = next((p for p in load("products")["products"] if p["sku"] == sku), None)
        if product is None:
            return {"results": [], "summary": f"没有查到商品{sku}，请核对商品编号后再试。"}
        price = money(product["price"])
        promo = product["promotion"]
        item: dict[str, Any] = {"sku": sku, "name": product["name"], "price": plain(price)}
        text = f"{product['name']}（{sku}）售价{yuan(price)}"
        if promo is None:
            item["promotion"] = None
            text += "，目前没有促销活动。"
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
        coupon = next((c for c in load("coupons")["coupons"] if c["code"] == code), None)
        reason = ""
        if coupon is None:
            reason = f"优惠券{code}不存在，请核对券码"
        elif coupon["state"] == "expired":
            reason = f"优惠券{code}已于{coupon['valid_until']}过期"
        elif coupon["state"] == "used":
            reason = f"优惠券{code}已被使用"
        elif amount < money(coupon["min_amount"]):
            need = money(coupon["min_amount"])
            reason = f"订单金额未满{yuan(need)}，还差{yuan(need - amount)}才能使用优惠券{code}"
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
