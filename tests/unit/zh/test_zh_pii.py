"""The PII recognizers of ``charter_zh.pii``: one table of positives and one of negatives per
kind. ID and card numbers are synthetic (check digits computed here); phone numbers and
addresses are made up.
"""

from __future__ import annotations

import pytest

import charter_zh.plugin
from charter.contracts.pii import PiiMatch, PiiRecognizer, redact
from charter.plugins.host import build_registry, make_plugin_manager
from charter_zh.pii import recognizers

BY_KIND = {r.kind: r for r in recognizers()}

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def id_number(body: str) -> str:
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, _WEIGHTS, strict=True)) % 11]


def luhn_sum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10


def card(body: str) -> str:
    return next(body + c for c in "0123456789" if luhn_sum(body + c) == 0)


def bad_card(body: str) -> str:
    return next(body + c for c in "0123456789" if luhn_sum(body + c) != 0)


ID1 = id_number("11010519491231002")
ID2 = id_number("33010619900101124")
ID3 = id_number("44030519851015456")
ID4 = id_number("51010720000229789")
ID5 = id_number("65010219761203001")
BAD_ID = ID2[:17] + ("0" if ID2[17] != "0" else "1")
CARD19 = card("622202123456789012")
CARD16 = card("622848001234567")
VISA = card("411111111111111")
MASTER = card("555555555555444")
CARD17 = card("6217000000123456")
BAD_CARD = bad_card("622202123456789012")


def bold(number: str) -> str:
    """Mathematical bold digits (𝟔𝟐𝟐𝟐…), which NFKC reads as the ASCII ones."""
    return number.translate({ord(d): 0x1D7CE + int(d) for d in "0123456789"})


BOLD_CARD = bold(CARD16)


def spaced(number: str, sep: str = " ") -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


def full(text: str) -> str:
    """Full-width digits, X, spaces and hyphens: what a Chinese input method types."""
    return text.translate(str.maketrans("0123456789X -+", "０１２３４５６７８９Ｘ\u3000－＋"))


# kind -> rows of (text, matched texts in order)
POSITIVE: dict[str, list[tuple[str, list[str]]]] = {
    "id_card": [
        (f"身份证号{ID1}", [ID1]),
        (f"身份证号码：{ID2}。", [ID2]),
        (f"{ID3}", [ID3]),
        (f"证件号 {ID4}，姓名张三", [ID4]),
        (f"（{ID5}）", [ID5]),
        (f"身份证{ID1.lower()}", [ID1.lower()]),
        (f"{ID2[:6]} {ID2[6:14]} {ID2[14:]}", [f"{ID2[:6]} {ID2[6:14]} {ID2[14:]}"]),
        (f"本人{ID1}，配偶{ID3}", [ID1, ID3]),
        (f"ID: {ID4}", [ID4]),
        (f"号码\n{ID5}\n", [ID5]),
        (f"“{ID2}”", [ID2]),
        (f"😀{ID3}", [ID3]),
        (f"身份证号是{ID4}吗", [ID4]),
        (f"见https://a.example.com {ID5}", [ID5]),
        (f"客户{ID1}，电话13812345678", [ID1]),
        # every spelling a user types, beyond what the extractor reads (issue 16)
        (f"身份证{full(ID2)}", [full(ID2)]),
        (f"身份证{ID2[:6]}-{ID2[6:14]}-{ID2[14:]}", [f"{ID2[:6]}-{ID2[6:14]}-{ID2[14:]}"]),
        (f"证件号{spaced(ID3)}号", [spaced(ID3)]),
        (f"证件号{spaced(ID4, '-')}", [spaced(ID4, "-")]),
        (f"身份证{full(spaced(ID5))}", [full(spaced(ID5))]),
        # a typo after a word naming an ID number (issue 17): the words say what it is
        (f"身份证号{BAD_ID}", [BAD_ID]),
        ("身份证号110101199003071234", ["110101199003071234"]),
        (f"证件号码：{full(BAD_ID)}。", [full(BAD_ID)]),
        (f"身份证号是 {ID3[:17]}", [ID3[:17]]),  # a digit left out
        ("公民身份号码330106900101124", ["330106900101124"]),  # an old 15-digit number
        (
            f"身份证号{BAD_ID[:6]} {BAD_ID[6:14]} {BAD_ID[14:]}",
            [f"{BAD_ID[:6]} {BAD_ID[6:14]} {BAD_ID[14:]}"],
        ),
        (f"⑴身份证号{bold(ID4)}", [bold(ID4)]),  # NFKC: ⑴ is (1), 𝟓𝟏𝟎… is 510…
        (f"ID{ID2}", [ID2]),  # glued to a label (issue 33)
    ],
    "bank_card": [
        (f"卡号{CARD19}", [CARD19]),
        (f"卡号：{CARD16}。", [CARD16]),
        (f"{VISA}", [VISA]),
        (f"信用卡 {MASTER} 到期", [MASTER]),
        (f"{spaced(CARD19)}", [spaced(CARD19)]),
        (f"卡号{spaced(VISA, '-')}", [spaced(VISA, "-")]),
        (f"{CARD17}", [CARD17]),
        (f"{spaced(CARD17)}", [spaced(CARD17)]),
        (f"主卡{VISA}，副卡{CARD19}", [VISA, CARD19]),
        (f"（{MASTER}）", [MASTER]),
        (f"尾号见{spaced(CARD16)}", [spaced(CARD16)]),
        (f"银行卡号是{CARD19}吗？", [CARD19]),
        (f"{CARD16}\n", [CARD16]),
        (f"还款卡{card('222100000000000')}", [card("222100000000000")]),
        (f"JCB {card('352800000000000')}", [card("352800000000000")]),
        (f"卡号{full(CARD19)}", [full(CARD19)]),
        (f"卡号{spaced(CARD16, '.')}", [spaced(CARD16, ".")]),
        (f"卡号{spaced(VISA, '  ')}", [spaced(VISA, "  ")]),
        (
            f"{VISA[:4]} {VISA[4:8]}-{VISA[8:12]} {VISA[12:]}",
            [f"{VISA[:4]} {VISA[4:8]}-{VISA[8:12]} {VISA[12:]}"],
        ),
        (f"退款打到{full(spaced(CARD16, '-'))}", [full(spaced(CARD16, "-"))]),
        # a card failing Luhn, or with no network's prefix, after a card word (issue 17)
        (f"卡号{BAD_CARD}", [BAD_CARD]),
        (f"银行卡号是：{spaced(BAD_CARD)}", [spaced(BAD_CARD)]),
        (f"工资卡{card('955880123456789012')}", [card("955880123456789012")]),
        (f"订单号DD20240507，卡号{CARD16}", [CARD16]),  # a digit between: 订单号 is not in reach
        (f"订单的银行卡{BAD_CARD}", [BAD_CARD]),  # both words: the card word is the nearer
        (f"银行卡退款的订单号{CARD16}", [CARD16]),  # both words: a Luhn-valid number is a card
        (f"卡号{BOLD_CARD}", [BOLD_CARD]),
        (f"NO{VISA}", [VISA]),  # glued to a label (issue 33)
    ],
    "phone": [
        ("手机13812345678", ["13812345678"]),
        ("电话：138-1234-5678。", ["138-1234-5678"]),
        ("+86 138 1234 5678", ["+86 138 1234 5678"]),
        ("座机010-12345678", ["010-12345678"]),
        ("(0755)12345678", ["(0755)12345678"]),
        ("（0755）12345678", ["（0755）12345678"]),
        ("客服热线400-123-4567", ["400-123-4567"]),
        ("+8613812345678", ["+8613812345678"]),
        ("0086 13812345678", ["0086 13812345678"]),
        ("手机号：138 1234 5678。", ["138 1234 5678"]),
        ("联系电话：021-87654321转8001", ["021-87654321"]),
        ("15912345678和18612345678", ["15912345678", "18612345678"]),
        ("微信同号19912345678", ["19912345678"]),
        ("(010) 6552 9988", ["(010) 6552 9988"]),
        ("电话021 6123 4567", ["021 6123 4567"]),
        ("手机:13812345678/13912345678", ["13812345678", "13912345678"]),
        ("手机１３８１２３４５６７８", ["１３８１２３４５６７８"]),
        ("电话１３８－１２３４－５６７８", ["１３８－１２３４－５６７８"]),
        ("＋８６　１３８　１２３４　５６７８", ["＋８６　１３８　１２３４　５６７８"]),
        # after a phone word, any 11 digits led by 1 (issue 17)
        ("手机10012345678", ["10012345678"]),
        ("联系电话：120-1234-5678", ["120-1234-5678"]),
        ("手机号＋８６　１１０　１２３４　５６７８", ["＋８６　１１０　１２３４　５６７８"]),
        ("ID13812345678", ["13812345678"]),  # glued to a label (issue 33)
        ("v13812345678", ["13812345678"]),
    ],
    "email": [
        ("邮箱a@example.com", ["a@example.com"]),
        ("联系Zhang.San@Example.COM。", ["Zhang.San@Example.COM"]),
        ("user+tag@mail.example.cn", ["user+tag@mail.example.cn"]),
        ("first_last@sub.example.org，", ["first_last@sub.example.org"]),
        ("13812345678@qq.com", ["13812345678@qq.com"]),
        ("x-y@my-domain.com.cn", ["x-y@my-domain.com.cn"]),
        ("a@b.co和c@d.io", ["a@b.co", "c@d.io"]),
        ("（service@shop.example.com）", ["service@shop.example.com"]),
        ("发到：hr@company.com.cn；", ["hr@company.com.cn"]),
        ("e-mail: test.user@example.travel", ["test.user@example.travel"]),
        ("😀user@example.com😀", ["user@example.com"]),
        ("客服邮箱support@example.com，电话13812345678", ["support@example.com"]),
        ("user123@163.com", ["user123@163.com"]),
        ("info@example.com.", ["info@example.com"]),
        ("a.b.c@example.co.uk", ["a.b.c@example.co.uk"]),
    ],
    "address": [
        ("浙江省杭州市西湖区文三路90号", ["浙江省杭州市西湖区文三路90号"]),
        ("请寄到北京朝阳区建国路8号，谢谢", ["北京朝阳区建国路8号"]),
        ("上海市浦东新区世纪大道100号", ["上海市浦东新区世纪大道100号"]),
        ("住址：江苏省南京市鼓楼区中山路1号2栋301室。", ["江苏省南京市鼓楼区中山路1号2栋301室"]),
        ("杭州市西湖区文三路90号3栋2单元302", ["杭州市西湖区文三路90号3栋2单元302"]),
        (
            "收货地址：广东省深圳市南山区粤海街道科技园中区1栋A座1201室，电话13812345678",
            ["广东省深圳市南山区粤海街道科技园中区1栋A座1201室"],
        ),
        ("浙江杭州市余杭区五常街道文一西路969号", ["浙江杭州市余杭区五常街道文一西路969号"]),
        ("北京市海淀区中关村大街27号", ["北京市海淀区中关村大街27号"]),
        ("我在朝阳区建国路8号", ["朝阳区建国路8号"]),
        ("广东省东莞市虎门镇", ["广东省东莞市虎门镇"]),
        ("江苏省苏州工业园区星湖街328号", ["江苏省苏州工业园区星湖街328号"]),
        ("广州市天河区 体育西路103号", ["广州市天河区 体育西路103号"]),
        ("上海市南京西路1号", ["上海市南京西路1号"]),
        ("湖北省武汉市洪山区珞喻路1037号", ["湖北省武汉市洪山区珞喻路1037号"]),
        ("四川省成都市武侯区人民南路四段9号", ["四川省成都市武侯区人民南路四段9号"]),
        (
            "旧址杭州市西湖区文三路90号，新址上海市徐汇区漕溪北路88号",
            ["杭州市西湖区文三路90号", "上海市徐汇区漕溪北路88号"],
        ),
        ("杭州文三路90号", ["杭州文三路90号"]),  # a road and a number, no district (issue 33)
        ("南京西路1号", ["南京西路1号"]),
    ],
}

# What each address is generalised to, in the order of POSITIVE["address"].
GENERALISED = [
    ["浙江省杭州市西湖区"],
    ["北京市朝阳区"],
    ["上海市浦东新区"],
    ["江苏省南京市鼓楼区"],
    ["浙江省杭州市西湖区"],
    ["广东省深圳市南山区"],
    ["浙江省杭州市余杭区"],
    ["北京市海淀区"],
    ["朝阳区"],  # 朝阳区 is in 北京 and in 长春: the city stays unsaid
    ["广东省东莞市"],  # 东莞 has no districts
    ["江苏省苏州市"],
    ["广东省广州市天河区"],
    ["上海市"],
    ["湖北省武汉市洪山区"],
    ["四川省成都市武侯区"],
    ["浙江省杭州市西湖区", "上海市徐汇区"],
    [None],  # no district: nothing coarser than the address itself
    [None],
]

NEGATIVE: dict[str, list[str]] = {
    "id_card": [
        ID2[:17],  # 17 digits
        f"{ID2}7",  # 19 digits
        BAD_ID,  # wrong check character
        id_number("33010619900230124"),  # 30 February
        id_number("33010619901301124"),  # month 13
        id_number("99010619900101124"),  # no province 99
        id_number("33010618991231124"),  # born 1899
        f"SO{ID2}",  # glued to letters that are no label: an order code
        f"{ID2}abc",
        f"订单号2024051{ID2}88",  # inside a longer digit run
        f"{ID2}-01",
        f"https://example.com/u/{ID2}",
        f"{ID2}@example.com",
        "330106900101124",  # an old 15-digit number
        "订单号2023051812345678",
        "手机13812345678",
        # no ID word in reach: a sentence ended, a number between, or it came after
        f"我的身份证丢了。{BAD_ID}",
        f"身份证号码第2位是{BAD_ID}",
        f"{BAD_ID}是我的身份证号",
        f"订单号{BAD_ID}",
        "身份证有效期2020.05.01-2040.05.01",  # an ID word, and no ID shape
        f"身份证号{ID2}7",  # 19 digits is no ID shape
    ],
    "bank_card": [
        bad_card("622202123456789012"),  # fails Luhn
        f"订单号{bad_card('622848001234567')}",
        "订单号2023051812345678",  # passes Luhn, starts with a date
        card("955880000000000"),  # prefix 9: no card network
        card("123456789012345"),
        card("27210000000000"),  # 15 digits
        card("62220212345678901234"),  # 21 digits
        f"{VISA}0",
        f"SO{VISA}",
        f"{VISA}-12",
        f"{spaced(VISA)} 1234",
        f"https://pay.example.com/card/{VISA}",
        f"{VISA}@example.com",
        ID1,  # an ID number, not a card
        "手机13812345678",
        # an order word in reach: an order number, whatever its checksum (issue 17)
        "订单号55921074533213885",
        f"订单号{CARD16}",
        f"运单号：{VISA}",
        f"快递单号 {spaced(CARD19)}",
        f"订单号是{full(CARD19)}",
        f"银行卡退款的订单号{BAD_CARD}",  # both words: Luhn fails and the order word is nearer
        f"卡号尾号{CARD16[-4:]}",
        f"卡号{CARD16[:15]}",  # 15 digits: too short for a card
    ],
    "phone": [
        "订单号2023051812345678",  # an order number is not a phone number
        "SKU13812345678",
        "1381234567",  # ten digits
        "138123456789",  # twelve
        "95588",  # a short code
        "12345",
        "2024-05-01",
        "20240501",
        f"身份证{ID1}",
        f"卡号{CARD19}",
        spaced(CARD19),
        "13812345678@qq.com",  # the local part of an e-mail address
        "https://x.cn/13812345678",
        "13812345678-02",
        "A13812345678",
        "金额1,381,234,567元",
        "2 138 1234 5678",
        "下单时间2024-05-27 14:09",  # a date and an hour, not 020-24052714
        "手机尾号5678",
        "手机号1381234567",  # ten digits, even after a phone word
        "电话打不通。10012345678",  # the phone word's sentence ended
    ],
    "email": [
        "a@localhost",
        "@example.com",
        "user@",
        "user@@example.com",
        "user@example",
        "user@example.c",
        "user@exa_mple.com",
        '"john doe"@example.com',
        "user@[127.0.0.1]",
        "a..b@example.com",
        "user@example.com1",
        "user@-example.com",
        "请@我",
        "user at example dot com",
        "user@例子.公司",
        "a@b@c.com",
        "user@example..com",
    ],
    "address": [
        "浙江省杭州市西湖区",  # a region without a street is as coarse as a policy keeps it
        "我在杭州市西湖区工作",
        "我在杭州工作",
        "浙江省",
        "西湖区",
        "浙江杭州",
        "杭州文三路",  # a road without a number
        "南京西路",
        "中山大学",
        "长沙发货很快",
        "去年去了北京和上海",
        "郊区的房子",
        "西湖区附近的小区",
        "湖南卫视",
        "北京市北京市",
        "浙江省杭州市西湖区的文三路",  # 的: the detail never starts
    ],
}


def _expected(text: str, written: list[str]) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    pos = 0
    for w in written:
        start = text.index(w, pos)
        spans.append((start, start + len(w), w))
        pos = start + len(w)
    return spans


_POSITIVE_ROWS = [
    (kind, text, written) for kind, rows in POSITIVE.items() for text, written in rows
]
_NEGATIVE_ROWS = [(kind, text) for kind, texts in NEGATIVE.items() for text in texts]


@pytest.mark.parametrize(("kind", "text", "written"), _POSITIVE_ROWS)
def test_recognizes(kind: str, text: str, written: list[str]) -> None:
    matches = BY_KIND[kind].recognize(text)
    assert [(m.start, m.end, m.text) for m in matches] == _expected(text, written)
    assert all(m.kind == kind for m in matches)
    if kind != "address":
        assert all(m.generalised is None for m in matches)


@pytest.mark.parametrize(("kind", "text"), _NEGATIVE_ROWS)
def test_leaves_alone(kind: str, text: str) -> None:
    assert BY_KIND[kind].recognize(text) == ()


@pytest.mark.parametrize(
    ("text", "generalised"),
    [(text, g) for (text, _), g in zip(POSITIVE["address"], GENERALISED, strict=True)],
)
def test_addresses_are_generalised_to_the_district(text: str, generalised: list[str]) -> None:
    assert [m.generalised for m in BY_KIND["address"].recognize(text)] == generalised


def test_tables_are_large_enough() -> None:
    for kind in ("id_card", "bank_card", "phone", "email", "address"):
        assert len(POSITIVE[kind]) >= 15, kind
        assert len(NEGATIVE[kind]) >= 15, kind


def test_recognizers_satisfy_the_protocol() -> None:
    found = {(r.name, r.kind, r.placeholder) for r in recognizers()}
    assert found == {
        ("zh_id_card", "id_card", "[ID]"),
        ("zh_bank_card", "bank_card", "[BANK_CARD]"),
        ("zh_phone", "phone", "[PHONE]"),
        ("zh_email", "email", "[EMAIL]"),
        ("zh_address", "address", "[ADDRESS]"),
    }
    for recognizer in recognizers():
        assert isinstance(recognizer, PiiRecognizer)
        assert recognizer.recognize("") == ()


def test_registered_through_the_plugin_host() -> None:
    pm, diags = make_plugin_manager(load_entry_points=False)
    assert diags == []
    pm.register(charter_zh.plugin, name="zh")
    registry, more = build_registry(pm)
    assert more == []
    assert set(registry.pii_recognizers) == {
        "zh_id_card",
        "zh_bank_card",
        "zh_phone",
        "zh_email",
        "zh_address",
    }
    # the hook returns the same instances every time
    assert charter_zh.plugin.charter_register_pii_recognizers() == list(
        charter_zh.plugin.PII_RECOGNIZERS
    )


def test_redacting_a_memory_before_it_is_stored() -> None:
    text = (
        f"我叫张三，身份证{ID1}，手机138-1234-5678，邮箱zhang.san@example.com，"
        f"工资卡{spaced(CARD19)}，住浙江省杭州市西湖区文三路90号3栋。"
    )
    matches: list[PiiMatch] = []
    for recognizer in recognizers():
        matches.extend(recognizer.recognize(text))
    placeholders = {r.kind: r.placeholder for r in recognizers()}
    assert redact(text, matches, placeholders) == (
        "我叫张三，身份证[ID]，手机[PHONE]，邮箱[EMAIL]，工资卡[BANK_CARD]，住[ADDRESS]。"
    )
    (address,) = [m for m in matches if m.kind == "address"]
    assert address.generalised == "浙江省杭州市西湖区"
