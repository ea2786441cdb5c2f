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
