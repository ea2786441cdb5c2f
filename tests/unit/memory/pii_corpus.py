"""A generated corpus of Chinese personal data in realistic sentences (valid ID numbers with
computed check characters, mainland mobiles, Luhn-valid bank cards, street addresses), with
what must never be stored and what the finance-like test policy stores instead."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

ID_REGIONS = ("110105", "310115", "330106", "440305", "320106", "510107", "420111", "610113")
MOBILE_PREFIXES = (
    "130",
    "133",
    "135",
    "136",
    "138",
    "139",
    "150",
    "152",
    "158",
    "159",
    "177",
    "180",
    "186",
    "188",
    "189",
    "199",
)
CARD_PREFIXES = ("622202", "621700", "622848", "436742", "622588", "625807")
DIVISIONS = (
    ("浙江省杭州市西湖区", "浙江省杭州市西湖区"),
    ("广东省深圳市南山区", "广东省深圳市南山区"),
    ("江苏省南京市鼓楼区", "江苏省南京市鼓楼区"),
    ("四川省成都市武侯区", "四川省成都市武侯区"),
    ("湖北省武汉市洪山区", "湖北省武汉市洪山区"),
    ("陕西省西安市雁塔区", "陕西省西安市雁塔区"),
    ("北京市朝阳区", "北京市朝阳区"),
    ("上海市浦东新区", "上海市浦东新区"),
    ("杭州市滨江区", "浙江省杭州市滨江区"),  # the province is filled in
)
STREETS = (
    "文三路",
    "中山路",
    "建国路",
    "人民大道",
    "天目山路",
    "解放街",
    "长江路",
    "学院路",
    "城西花园",
    "新华街道",
)
TEMPLATES = {
    "id_card": ("我的身份证号码是{}，请帮我核实。", "身份证{}。", "证件号：{}，麻烦登记一下"),
    "phone": ("我的手机号是{}，有事打我。", "联系电话{}。", "以后请用{}联系我"),
    "bank_card": ("工资卡号是{}，用来还款。", "请从{}扣款", "银行卡{}绑定一下。"),
    "address": ("请把发票寄到{}，谢谢。", "我家住在{}。", "快递送到{}就行。", "收货地址改为{}"),
}


def id_number(rng: random.Random) -> str:
    """A valid 18-character ID number: ISO 7064 MOD 11-2 check character."""
    born = date(1950, 1, 1) + timedelta(days=rng.randrange(20000))
    body = rng.choice(ID_REGIONS) + born.strftime("%Y%m%d") + f"{rng.randrange(1000):03d}"
    total = sum(int(d) * pow(2, 17 - i, 11) for i, d in enumerate(body))
    return body + "0123456789X"[(12 - total % 11) % 11]


def mobile(rng: random.Random) -> str:
    return rng.choice(MOBILE_PREFIXES) + "".join(rng.choice("0123456789") for _ in range(8))


def bank_card(rng: random.Random) -> str:
    """A 16, 17 or 19-digit card number with a Luhn check digit."""
    body = rng.choice(CARD_PREFIXES)
    body += "".join(rng.choice("0123456789") for _ in range(rng.choice((16, 17, 19)) - 7))
    total = 0
    for i, d in enumerate(reversed(body)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return body + str((10 - total % 10) % 10)


def address(rng: random.Random) -> tuple[str, str, str]:
    """(address, its district, its street-level detail)."""
    written, district = rng.choice(DIVISIONS)
    if rng.random() < 0.5:
        number = f"{rng.randrange(1, 300)}号"
    else:
        number = f"{rng.randrange(1, 30)}栋{rng.choice('ABCD')}单元{rng.randrange(101, 2999)}室"
    detail = rng.choice(STREETS) + number
    return written + detail, district, detail


@dataclass(frozen=True)
class Sample:
    sentence: str
    raw: tuple[str, ...]  # what must never be stored
    expected: str | None  # the stored plaintext; None: dropped
    level: str


def corpus() -> list[Sample]:
    rng = random.Random(20240521)
    out: list[Sample] = []
    for i in range(60):
        number, tpl = id_number(rng), TEMPLATES["id_card"][i % 3]
        out.append(Sample(tpl.format(number), (number,), tpl.format("[ID]"), "L3"))
    for i in range(60):
        number, tpl = mobile(rng), TEMPLATES["phone"][i % 3]
        out.append(Sample(tpl.format(number), (number,), tpl.format("[PHONE]"), "L2"))
    for i in range(50):
        number, tpl = bank_card(rng), TEMPLATES["bank_card"][i % 3]
        out.append(Sample(tpl.format(number), (number,), None, "L3"))
    for i in range(60):
        (written, district, detail), tpl = address(rng), TEMPLATES["address"][i % 4]
        out.append(Sample(tpl.format(written), (written, detail), tpl.format(district), "L1"))
    for _ in range(30):
        ident, phone, (written, district, detail) = id_number(rng), mobile(rng), address(rng)
        sentence = "本人身份证{}，手机{}，地址{}，请更新资料。"
        out.append(
            Sample(
                sentence.format(ident, phone, written),
                (ident, phone, written, detail),
                sentence.format("[ID]", "[PHONE]", district),
                "L3",
            )
        )
    return out


CORPUS = corpus()


# ---- issue 17: full-width and compatibility forms, typos after a context word, look-alikes ----

_WIDE = str.maketrans("0123456789Xx -", "０１２３４５６７８９ＸＸ\u3000－")
_BOLD = str.maketrans({str(d): chr(0x1D7CE + d) for d in range(10)})  # 𝟎-𝟗, NFKC -> 0-9
UNKNOWN_PREFIXES = ("955880", "940012", "100008", "888800")  # no card network's prefix


def wide(text: str) -> str:
    """What a Chinese input method in full-width mode types."""
    return text.translate(_WIDE)


def luhn_card(rng: random.Random, prefix: str, length: int) -> str:
    body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
    total = 0
    for i, d in enumerate(reversed(body)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return body + str((10 - total % 10) % 10)


def bad_luhn(card: str) -> str:
    """The card with its last digit changed: the Luhn check fails."""
    return card[:-1] + str((int(card[-1]) + 1 + card.__len__() % 8) % 10)


def bad_check(number: str) -> str:
    """The ID number with a wrong check character: a typo in the last place."""
    return number[:17] + ("0" if number[17] != "0" else "1")


def beijing_id(rng: random.Random) -> str:
    """A valid ID number of a Beijing district (led by 11)."""
    number = id_number(rng)
    body = "110105" + number[6:17]
    total = sum(int(d) * pow(2, 17 - i, 11) for i, d in enumerate(body))
    return body + "0123456789X"[(12 - total % 11) % 11]


def spaced(number: str, sep: str = " ") -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


@dataclass(frozen=True)
class Labelled:
    """A sentence and the personal data in it: ``value`` as written (its span must be
    recognised as ``kind``); for a look-alike ``kind`` is None and ``value`` the number that
    must be left alone."""

    group: str
    sentence: str
    value: str
    kind: str | None


ID_WORDS = ("身份证号", "身份证号码是", "身份证：", "证件号码", "证件号 ", "公民身份号码")
CARD_WORDS = ("卡号", "银行卡号是", "信用卡号：", "工资卡", "储蓄卡 ", "借记卡号")
PHONE_WORDS = ("手机", "手机号是", "电话：", "联系电话", "手机号码 ", "电话号码是")
ORDER_WORDS = (
    "订单号",
    "单号",
    "运单号",
    "快递单号",
    "订单号是",
    "物流单号：",
    "订单编号",
    "流水号",
)


def robust_corpus(seed: int = 17) -> tuple[list[Labelled], list[Labelled]]:
    """(positives, look-alikes): 315 sentences holding personal data in a form issue 16's
    recognizers missed or that only the words before it reveal, and 180 holding numbers that
    look like personal data and are none. Deterministic."""
    rng = random.Random(seed)
    pos: list[Labelled] = []
    neg: list[Labelled] = []

    def p(group: str, template: str, value: str, kind: str) -> None:
        pos.append(Labelled(group, template.format(value), value, kind))

    def n(group: str, template: str, value: str) -> None:
        neg.append(Labelled(group, template.format(value), value, None))

    for i in range(30):  # full-width, whole and grouped
        ident, phone = id_number(rng), mobile(rng)
        card = bank_card(rng)
        p("full-width id", ("身份证{}", "证件号：{}。", "我的是{}")[i % 3], wide(ident), "id_card")
        p("full-width phone", ("手机{}", "请回电{}", "{}，有事打我")[i % 3], wide(phone), "phone")
        p("full-width card", ("卡号{}", "退款打到{}", "银行卡{}。")[i % 3], wide(card), "bank_card")
    for i in range(15):  # other compatibility forms: mathematical bold, full-width groups
        phone, card = mobile(rng), bank_card(rng)
        p("bold phone", ("手机{}", "联系我{}")[i % 2], phone.translate(_BOLD), "phone")
        p("wide spaced card", "卡号{}", wide(spaced(card)), "bank_card")
    for i in range(60):  # an ID number with a typo after an ID word
        bad = bad_check(id_number(rng))
        written = (bad, wide(bad), spaced(bad), bad.lower())[i % 4]
        p("id typo", ID_WORDS[i % len(ID_WORDS)] + "{}，请核实", written, "id_card")
    for i in range(60):  # a card failing Luhn, or with an unknown prefix, after a card word
        length = (16, 17, 18, 19)[i % 4]
        if i % 3 == 2:
            card = luhn_card(rng, UNKNOWN_PREFIXES[i % 4], length)
        else:
            card = bad_luhn(luhn_card(rng, CARD_PREFIXES[i % len(CARD_PREFIXES)], length))
        written = (card, spaced(card), wide(card))[i % 3]
        p("card typo", CARD_WORDS[i % len(CARD_WORDS)] + "{}，扣款失败", written, "bank_card")
    for i in range(45):  # a mobile after a phone word, in any width; 10x-12x too
        number = mobile(rng) if i % 3 else "1" + rng.choice("012") + mobile(rng)[2:]
        written = (number, wide(number), number[:3] + "-" + number[3:7] + "-" + number[7:])[i % 3]
        p("phone word", PHONE_WORDS[i % len(PHONE_WORDS)] + "{}", written, "phone")
    for i in range(30):  # an order word and a card word: the nearer, or Luhn, decides
        card = bank_card(rng)
        if i % 2:
            p("order and card", f"订单号DD2024050700{i:02d}，卡号{{}}", card, "bank_card")
        else:
            p("order and card", "订单的银行卡{}", card, "bank_card")

    for i in range(60):  # an order number passing Luhn with a network's prefix
        number = luhn_card(rng, ("55", "62", "43", "35", "60")[i % 5], (16, 17, 18, 19)[i % 4])
        written = (number, wide(number), number)[i % 3]
        n("order number", ORDER_WORDS[i % len(ORDER_WORDS)] + "{}，还没发货", written)
    for _ in range(30):  # after an order word and a card word, failing Luhn, order nearer
        number = bad_luhn(luhn_card(rng, "62", 17))
        n("card then order", "银行卡退款的订单号{}", number)
    for i in range(30):  # 18 digits with a bad check character and no ID word in reach
        bad = bad_check(beijing_id(rng))  # led by 1: no card network's prefix either
        template = ("编号{}请查收", "我的身份证丢了。登记号{}", "会员码：{}")[i % 3]
        n("id shape, no id word", template, bad)
    for i in range(30):  # a context word and a number too short or too long to be its kind
        template = (
            "身份证后四位{}",
            "卡号尾号{}",
            "手机尾号{}",
            "身份证有效期{}",
            "手机号{}",
        )[i % 5]
        value = (
            f"{rng.randrange(10000):04d}",
            f"{rng.randrange(10000):04d}",
            f"{rng.randrange(10000):04d}",
            f"20{rng.randrange(10, 25)}.0{rng.randrange(1, 10)}.01-20{rng.randrange(30, 45)}.01.01",
            "1" + "".join(rng.choice("0123456789") for _ in range(11)),
        )[i % 5]
        n("short or long", template, value)
    for i in range(30):  # dates, times, amounts, tracking codes
        template = (
            "下单时间{}",
            "金额{}元",
            "运单SF{}已签收",
            "时间戳{}",
            "第{}期",
        )[i % 5]
        value = (
            f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} {rng.randrange(8, 23):02d}:{rng.randrange(60):02d}",
            f"{rng.randrange(10**6, 10**8):,}.{rng.randrange(100):02d}",
            "".join(rng.choice("0123456789") for _ in range(12)),
            f"20240{rng.randrange(1, 10)}{rng.randrange(10, 29)}{rng.randrange(10**6, 10**7)}",
            str(rng.randrange(1, 300)),
        )[i % 5]
        n("date or amount", template, value)
    return pos, neg


POSITIVES, LOOK_ALIKES = robust_corpus()
