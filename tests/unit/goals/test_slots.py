"""A regex slot never takes personal data it does not declare (issue 16): a value overlapping
what a PII recognizer finds is passed over, unless the slot lists its kind (``personal:``) or
the value is as coarse as a policy keeps anyway (a city out of a street address)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from charter.compile.specs import goals as S
from charter.compile.specs.slots import SlotReader
from charter.contracts.registry import Registry
from charter.diagnostics import Location

NOW = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
ORDER = r"(?<![0-9A-Za-z])(?P<value>(?:DD)?[0-9]{12,20})(?![0-9])"
CITY = r"(?P<value>北京|上海|杭州)"
PLACE = r"寄到(?P<value>\p{Han}+?[0-9]+号)"


def read(registry: Registry, pattern: str, text: str, personal: tuple[str, ...] = ()) -> Any:
    slot = S.SlotSpec(name="v", regex=pattern, personal=personal)
    # the reader looks at slots only: no trigger, no location needed
    none: Any = None
    intent = S.IntentSpec("i", "", none, (), Location("goals.yaml"), slots=(slot,))
    spec = S.GoalsSpec((intent,), none, none, ())
    reader = SlotReader(spec, registry.extractors, registry.pii_recognizers.values())
    return reader.values(intent, text, NOW).get("v")


@pytest.mark.parametrize(
    ("pattern", "text", "personal", "expected"),
    [
        (ORDER, "退款请打到我的银行卡6222026815398387。", (), None),
        (ORDER, "退款请打到我的银行卡６２２２０２６８１５３９８３８７。", (), None),
        (ORDER, "身份证11010519491231002X", (), None),
        (ORDER, "订单DD202405070007，卡6222026815398387", (), "DD202405070007"),
        (ORDER, "订单202405070007要退款", (), "202405070007"),
        (ORDER, "卡号6222026815398387", ("bank_card",), "6222026815398387"),
        (CITY, "寄到浙江省杭州市西湖区文三路90号", (), "杭州"),
        (PLACE, "寄到浙江省杭州市西湖区文三路90号", (), None),
        (PLACE, "寄到浙江省杭州市西湖区文三路90号", ("address",), "浙江省杭州市西湖区文三路90号"),
    ],
)
def test_regex_slots_and_personal_data(
    registry: Registry, pattern: str, text: str, personal: tuple[str, ...], expected: Any
) -> None:
    assert read(registry, pattern, text, personal) == expected


# ---- slots as people say them (issue 31) ------------------------------------------------------

PAYEE = S.RoleSpec(
    kind="name", before=("给", "向", "往", "到", "收款人"), after=("那边", "卡上", "的卡", "账上")
)


def read_slot(registry: Registry, slot: S.SlotSpec, text: str, extractors: Any = None) -> Any:
    none: Any = None
    intent = S.IntentSpec("i", "", none, (), Location("goals.yaml"), slots=(slot,))
    spec = S.GoalsSpec((intent,), none, none, ())
    found = registry.extractors if extractors is None else extractors
    reader = SlotReader(spec, found, registry.pii_recognizers.values())
    return reader.values(intent, text, NOW).get(slot.name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("转800给李四", "800"),
        ("汇三千五给张三", "3500"),
        ("帮我往李四卡上打八百", "800"),
        ("一万二", "12000"),
        ("两千", "2000"),
        ("2千", "2000"),
        ("1.5万", "15000"),
        ("五百块", "500"),  # money's own, lower-case
        ("转2万5千元", "25000"),
        ("大概3000", "3000"),
        ("3000左右", "3000"),
        # approximate: no value, the slot's question is asked
        ("给李四转八百来块", None),
        ("五百多块", None),
        ("八百来", None),
        ("两三千", None),
        # no amount at all
        ("看看6666那张卡", None),
        ("尾号1234的卡给张三转", None),
        ("2024年3月5号8点", None),
        ("买三个", None),
        ("我的手机13812345678", None),
    ],
)
def test_a_money_slot_reads_amounts_as_said(
    registry: Registry, text: str, expected: str | None
) -> None:
    slot = S.SlotSpec(name="amount", extractor="money")
    assert read_slot(registry, slot, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5万", "50000"),  # bare_amounts: a number with 万 or 千
        ("2000", "2000"),  # ... or the whole text a number
        ("转800给李四", None),  # no spoken_amount: a bare number inside a sentence is not read
        ("八百", None),
    ],
)
def test_without_spoken_amount_a_money_slot_reads_bare_amounts(
    registry: Registry, text: str, expected: str | None
) -> None:
    slot = S.SlotSpec(name="amount", extractor="money")
    only_money = {"money": registry.extractors["money"]}
    assert read_slot(registry, slot, text, only_money) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("转800给李四", "李四"),
        ("给李四转800", "李四"),
        ("汇800到李四", "李四"),
        ("李四那边打800", "李四"),
        ("往李四卡上打八百", "李四"),
        ("帮我给张三汇三千五", "张三"),
        ("收款人换成李四", "李四"),
        ("收款人是王小明", "王小明"),
        ("收款人：欧阳娜娜", "欧阳娜娜"),
        ("给欧阳娜娜转500", "欧阳娜娜"),
        ("王小明那边打钱", "王小明"),
        ("麻烦李四那边打800", "李四"),
        ("给张三的卡转", "张三"),
        ("给张三五百", "张三"),
        ("向张三支付100", "张三"),
        ("给钱多多转账1000元", "钱多多"),  # 钱 is a surname
        ("到时候给李四转", "李四"),  # 时候 is no name
        # no name: a pronoun, a kinship word, oneself
        ("给我妈打两千块生活费", None),
        ("给妈妈转500", None),
        ("给自己转500", None),
        ("转500", None),
    ],
)
def test_a_role_slot_reads_a_name_on_either_side(
    registry: Registry, text: str, expected: str | None
) -> None:
    slot = S.SlotSpec(name="payee", role=PAYEE)
    assert read_slot(registry, slot, text) == expected


def test_a_role_slot_with_multiple_takes_each_name_in_order(registry: Registry) -> None:
    slot = S.SlotSpec(name="payee", role=PAYEE, multiple=True)
    assert read_slot(registry, slot, "李四那边打800，再给张三转500") == ["李四", "张三"]


ECOM_ORDER = r"(?<![0-9A-Za-z+])(?P<value>(?:DD)?[0-9]{12,15})(?![0-9])"
PRODUCT = r"(?P<value>(?:iPhone|华为)\s?(?:[A-Za-z]+\s?)?[0-9]+[A-Za-z]*)"
COUPON = r"(?<![A-Za-z0-9])(?P<value>[A-Za-z]{2,8}[0-9]{1,4})(?![A-Za-z0-9])"


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (ECOM_ORDER, "订单DD202405070007", "DD202405070007"),
        (ECOM_ORDER, "订单dd202405070007到哪了", "DD202405070007"),
        (ECOM_ORDER, "订单 DD 2024 0507 0007", "DD202405070007"),
        (ECOM_ORDER, "DD-202405070007", "DD202405070007"),
        (ECOM_ORDER, "dd-2024-0507-0007", "DD202405070007"),
        (ECOM_ORDER, "订单号202405070007", "202405070007"),
        # the strict reading found a number: another is not glued on
        (ECOM_ORDER, "订单号123456789012 345", "123456789012"),
        # a card number typed in groups is still personal data, passed over
        (ORDER, "退款打到 6222 0268 1539 8387", None),
        (COUPON, "用了券码save20", "SAVE20"),
        (COUPON, "优惠码 SAVE20", "SAVE20"),
        (ORDER, "快递到哪了", None),
        # a name read as written keeps its case, even where upper case would also match
        (PRODUCT, "4999元的华为 Mate60和iPhone 15哪个划算", "华为 Mate60"),
    ],
)
def test_identifiers_typed_loosely_are_stored_as_their_pattern_spells_them(
    registry: Registry, pattern: str, text: str, expected: str | None
) -> None:
    assert read(registry, pattern, text) == expected
