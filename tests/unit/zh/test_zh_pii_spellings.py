"""Issue 33, item 3: every common spelling of personal data, redacted whole by the charter-zh
recognizers, one table per form with the exact text a policy that redacts everything stores;
and the look-alikes of each form, stored as written.

ID 11010519491231002X, card 6222026815398387 and card 6222021234567890128 pass their checks;
13812345678 and 18612345678 are mobiles.
"""

from __future__ import annotations

import pytest

from charter.contracts.pii import PiiMatch, redact
from charter_zh.pii import recognizers

RECOGNIZERS = recognizers()
PLACEHOLDERS = {r.kind: r.placeholder for r in RECOGNIZERS}


def masked(text: str) -> str:
    matches: list[PiiMatch] = [m for r in RECOGNIZERS for m in r.recognize(text)]
    return redact(text, matches, PLACEHOLDERS)


FORMS: dict[str, list[tuple[str, str]]] = {
    "glued to a label": [
        ("我的ID11010519491231002X，麻烦登记", "我的ID[ID]，麻烦登记"),
        ("id:11010519491231002x", "id:[ID]"),
        ("加我vx13812345678", "加我vx[PHONE]"),
        ("VX:138 1234 5678", "VX:[PHONE]"),
        ("有事打tel13812345678", "有事打tel[PHONE]"),
        ("Tel.13812345678", "Tel.[PHONE]"),
        ("wx18612345678，备注买家", "wx[PHONE]，备注买家"),
        ("退款到card6222026815398387", "退款到card[BANK_CARD]"),
        ("cardNo6222026815398387", "cardNo[BANK_CARD]"),
        ("No.6222 0268 1539 8387", "No.[BANK_CARD]"),
    ],
    "any separator": [
        ("手机138/1234/5678", "手机[PHONE]"),
        ("手机138_1234_5678", "手机[PHONE]"),
        ("手机138，1234，5678", "手机[PHONE]"),
        ("手机138.1234.5678", "手机[PHONE]"),
        ("电话138 / 1234 / 5678", "电话[PHONE]"),
        ("身份证110105/19491231/002X", "身份证[ID]"),
        ("身份证1101_0519_4912_3100_2X", "身份证[ID]"),
        ("身份证1101-0519-4912-3100-2X", "身份证[ID]"),
        ("卡号6222_0268_1539_8387", "卡号[BANK_CARD]"),
        ("卡号622202/6815398387", "卡号[BANK_CARD]"),
        ("我要2，138/1234/5678是我电话", "我要2，[PHONE]是我电话"),
        ("13812345678、186/1234/5678都能打", "[PHONE]、[PHONE]都能打"),
    ],
    "Chinese numerals": [
        ("手机幺三八一二三四五六七八", "手机[PHONE]"),
        ("电话一三八一二三四五六七八", "电话[PHONE]"),
        ("号码是幺八六 幺两三四 五六七八", "号码是[PHONE]"),
        ("身份证一一〇一〇五一九四九一二三一〇〇二X", "身份证[ID]"),
        ("身份证一一零一零五一九四九一二三一零零二X", "身份证[ID]"),
        ("卡号六二二二〇二六八一五三九八三八七", "卡号[BANK_CARD]"),
        ("手机１３８一二三四５６７８", "手机[PHONE]"),
    ],
    "split across the sentence": [
        ("手机前三位138，后八位12345678，有事打我", "手机前三位[PHONE]，有事打我"),
        ("我手机号前七位是1381234，后四位是5678", "我手机号前七位是[PHONE]"),
        ("电话前三位138，中间四位1234，最后四位5678", "电话前三位[PHONE]"),
        ("手机前三位幺三八，后八位一二三四五六七八", "手机前三位[PHONE]"),
        ("卡号前六位622202，后面是6815398387", "卡号前六位[BANK_CARD]"),
        ("身份证前六位110105，中间八位19491231，后四位002X", "身份证前六位[ID]"),
        ("身份证号前十位是1101051949，后八位是1231002X", "身份证号前十位是[ID]"),
        ("前三位138，后八位12345678", "前三位[PHONE]"),  # no word: the mobile's checks say
    ],
    "invisible characters": [
        ("手机138\u200b1234\u200b5678", "手机[PHONE]"),
        ("手机\u200b13812345678\u200b", "手机\u200b[PHONE]\u200b"),  # outside: left as typed
        ("电话138\u00ad1234\u00ad5678", "电话[PHONE]"),
        ("身份证1101051949\u20601231002X", "身份证[ID]"),
        ("卡号6222\ufeff0268\u200c1539\u200d8387", "卡号[BANK_CARD]"),
        ("手机138 \u200b1234 5678", "手机[PHONE]"),
        ("手机１３８\u200b１２３４５６７８", "手机[PHONE]"),
    ],
    "a road without its district": [
        ("寄到深南大道9988号", "寄到[ADDRESS]"),
        ("住在梅林路18号3栋2单元501室", "住在[ADDRESS]"),
        ("送到文三路华星大厦12楼", "送到[ADDRESS]"),
        ("收货地址改成淮海中路100号", "收货地址改成[ADDRESS]"),
        ("我家住阳光花园3栋1201室，快递放门口", "我家住[ADDRESS]，快递放门口"),
        ("地址：南锣鼓巷8号", "地址：[ADDRESS]"),
        ("寄到深南大道9988号，电话13812345678", "寄到[ADDRESS]，电话[PHONE]"),
        ("寄到浙江省杭州市西湖区文三路90号", "寄到[ADDRESS]"),  # with its district, as before
    ],
}

LOOK_ALIKES: dict[str, list[str]] = {
    "glued to a label": [
        "订单SO2026051200012345已发货",  # SO: an order code's letters, no label
        "顺丰单号SF1381234567812",
        "商品编码ID-4455有货吗",
        "SKU13812345678缺货",
        "13812345678abc",
    ],
    "any separator": [
        "预约在2026/12/07上午",
        "2026_12_07到期",
        "退款金额1,234.56，请查收",
        "升级到v1.3.8.1234.5678以后闪退",  # one digit between points: a version
        "服务器IP是139.196.12.100，连不上",
        "编号13812345678-02",  # a suffix after a hyphen: a code
        "2 138 1234 5678",  # a stray digit across a space
        "下单时间2026-12-07 13:45",
    ],
    "Chinese numerals": [
        "他把经过一五一十地说了",
        "人三三两两地走了",
        "跟着数一二三四五六七",
        "花了一万三千八百块",
        "二〇二六年十二月七号",
        "单号是一三五七九",
    ],
    "split across the sentence": [
        "订单号前八位20260512，后八位00012345",  # an order word
        "验证码前三位123，后三位456",  # no word, and no number by its checks
        "身份证后四位002X",  # one piece
        "手机前三位138，后四位5678",  # a phone word and seven digits
        "卡号前六位622202，后四位8387",  # a card word and ten digits
    ],
    "invisible characters": [
        "好\u200b的\u200b，谢谢",
        "订单号\u200b2026051200012345",
    ],
    "a road without its district": [
        "坐地铁5号线到人民广场",
        "第3单元的作业还没写",
        "中山路那家店12号开门",
        "中山路",
        "他是3号选手",
    ],
}


@pytest.mark.parametrize(
    ("text", "stored"),
    [row for rows in FORMS.values() for row in rows],
    ids=[f"{form}-{i}" for form, rows in FORMS.items() for i in range(len(rows))],
)
def test_every_spelling_is_redacted_whole(text: str, stored: str) -> None:
    assert masked(text) == stored


@pytest.mark.parametrize(
    "text",
    [text for texts in LOOK_ALIKES.values() for text in texts],
    ids=[f"{form}-{i}" for form, texts in LOOK_ALIKES.items() for i in range(len(texts))],
)
def test_look_alikes_are_stored_as_written(text: str) -> None:
    assert masked(text) == text


def test_a_match_spans_the_characters_as_typed() -> None:
    """The span of a match is that of the text given: the invisible characters inside and the
    full-width digits are the user's, and replaced with the rest."""
    (phone,) = [m for r in RECOGNIZERS for m in r.recognize("加我vx１３８\u200b1234\u200b5678吧")]
    assert (phone.start, phone.end, phone.kind) == (4, 17, "phone")
    assert phone.text == "１３８\u200b1234\u200b5678"
