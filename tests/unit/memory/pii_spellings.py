"""Issue 33, item 3: the spellings of personal data an outside test found stored in clear, and
the look-alikes that must stay as written. Generated (a seeded ``random.Random``): valid ID
numbers (GB 11643 check character), Luhn-valid card numbers with real issuer prefixes, mobiles
with real prefixes and street addresses without a district, inside the sentences customers
write.

Each positive is a ``Spelled``: its kind, its form (the group recall is counted by), the
sentence, the characters as written that must be recognised as one match of that kind, and
the value (digits, or the address) that must never be stored. ``tests/unit/memory`` measures
recall per form on it; ``tests/security/pii_corpus`` sends it through every shipped pack.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.unit.memory.pii_corpus import Labelled, bank_card, id_number, mobile

# digit -> the Chinese numerals people write for it, the first the everyday one
CN_NUMERALS = {
    "0": "零〇",
    "1": "一幺",
    "2": "二两",
    "3": "三",
    "4": "四",
    "5": "五",
    "6": "六",
    "7": "七",
    "8": "八",
    "9": "九",
}
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
SEPARATORS = ("/", "_", "，", ".", "-", " ", " / ", "，")
GLUED = {
    "id_card": ("ID", "id:", "Id", "ID:", "No."),
    "phone": ("vx", "VX:", "tel", "Tel.", "TEL", "v", "wx", "mobile"),
    "bank_card": ("card", "Card:", "No.", "NO", "card no."),
}
GROUPINGS = {
    "id_card": ((6, 8, 4), (6, 4, 4, 4), (3, 3, 4, 4, 4), (4, 4, 4, 4, 2), (6, 6, 6)),
    "phone": ((3, 4, 4), (4, 4, 3), (3, 3, 5), (3, 8), (7, 4), (2, 3, 3, 3)),
    "bank_card": ((4, 4, 4, 4, 4), (6, 13), (4, 6, 9), (6, 6, 7), (3, 4, 4, 4, 4)),
}
SENTENCES = {
    "id_card": (
        "我的身份证号是{}，麻烦登记一下",
        "实名认证用{}，一直提示失败",
        "证件：{}，请核对",
        "帮我查下{}这个证件名下的订单",
    ),
    "phone": (
        "有事加我{}，随时联系",
        "我的联系方式{}，快递员打这个",
        "麻烦回电{}",
        "号码是{}，退款到账了吗",
    ),
    "bank_card": (
        "退款打到{}就行",
        "我的银行卡{}被扣款了",
        "还款用的是{}，请核实",
        "转账到{}，收款人张三",
    ),
}
SPLIT = {
    "phone": (
        ((3, 8), "手机前三位{}，后八位{}，有事打我"),
        ((7, 4), "我手机号前七位是{}，后四位是{}"),
        ((3, 4, 4), "电话号码前三位{}，中间四位{}，最后四位{}"),
        ((3, 8), "联系电话前面是{}，后面是{}"),
    ),
    "id_card": (
        ((6, 8, 4), "身份证前六位{}，中间八位{}，后四位{}"),
        ((10, 8), "身份证号前十位是{}，后八位是{}，麻烦核实"),
        ((6, 12), "证件号码前六位{}，后面是{}"),
    ),
    "bank_card": (
        ((6, 0), "卡号前六位{}，后面是{}"),
        ((4, 0), "银行卡前四位{}，剩下的是{}"),
        ((6, 0), "信用卡号前面是{}，后面是{}，帮我查一下"),
    ),
}
ROADS = (
    "深南大道",
    "梅林路",
    "文三路",
    "天目山路",
    "中山北路",
    "解放大道",
    "学府街",
    "建设巷",
    "淮海中路",
    "长安街",
    "南锣鼓巷",
    "科技南路",
)
BUILDINGS = ("华星大厦", "万达广场", "阳光花园", "金地公寓", "幸福家园", "世贸大厦")
ADDRESS_SENTENCES = (
    "寄到{}",
    "我住在{}，快递放门口就行",
    "送到{}，谢谢",
    "收货地址改成{}",
    "麻烦把发票寄到{}。",
    "地址：{}，帮我查下物流",
)


@dataclass(frozen=True)
class Spelled:
    kind: str
    form: str
    sentence: str
    written: str  # the characters of the sentence that are the value, as typed
    value: str  # the value itself (digits, or the address): never to be stored

    def labelled(self) -> Labelled:
        return Labelled(self.form, self.sentence, self.written, self.kind)


def chinese(digits: str, rng: random.Random, style: str) -> str:
    """``digits`` in Chinese numerals: ``plain`` 一/〇, ``yao`` 幺/零 (as read out on the
    phone), ``mixed`` each digit's spelling drawn (两 for 2 too)."""
    out = []
    for d in digits:
        if d not in CN_NUMERALS:
            out.append(d)  # the X of an ID number
            continue
        forms = CN_NUMERALS[d]
        if style == "plain":
            out.append(forms[0] if d != "0" else "〇")
        elif style == "yao":
            out.append(forms[-1] if d in "01" else forms[0])
        else:
            out.append(rng.choice(forms))
    return "".join(out)


def grouped(value: str, sizes: tuple[int, ...], sep: str) -> str:
    out, pos = [], 0
    for size in sizes:
        if pos >= len(value):
            break
        out.append(value[pos : pos + size])
        pos += size
    if pos < len(value):
        out.append(value[pos:])
    return sep.join(out)


def invisible(value: str, rng: random.Random, count: int) -> str:
    """``value`` with ``count`` invisible characters at distinct places inside it."""
    places = sorted(rng.sample(range(1, len(value)), count), reverse=True)
    for at in places:
        value = value[:at] + rng.choice(INVISIBLE) + value[at:]
    return value


def pieces(value: str, sizes: tuple[int, ...]) -> list[str]:
    """``value`` cut in pieces of ``sizes`` (0: the rest)."""
    out, pos = [], 0
    for size in sizes:
        end = len(value) if size == 0 else pos + size
        out.append(value[pos:end])
        pos = end
    if pos < len(value):
        out[-1] += value[pos:]
    return out


def _number_forms(kind: str, value: str, rng: random.Random, i: int) -> dict[str, tuple[str, str]]:
    """Each new form (split forms aside): (what the sentence holds, the value as written in
    it; a glued label is no part of the value)."""
    label = GLUED[kind][i % len(GLUED[kind])]
    sizes = GROUPINGS[kind][i % len(GROUPINGS[kind])]
    sep = SEPARATORS[i % len(SEPARATORS)]
    forms = {
        "separated": grouped(value, sizes, sep),
        "chinese": chinese(value, rng, ("plain", "yao", "mixed")[i % 3]),
        "chinese grouped": grouped(chinese(value, rng, "mixed"), sizes, (" ", "-", "，")[i % 3]),
        "invisible": invisible(value, rng, 1 + i % 3),
        "invisible grouped": invisible(grouped(value, sizes, " "), rng, 1 + i % 2),
    }
    return {"glued": (label + value, value)} | {form: (w, w) for form, w in forms.items()}


def _split(kind: str, value: str, i: int) -> tuple[str, str]:
    """(sentence, the span from the first piece's first digit to the last piece's end)."""
    sizes, template = SPLIT[kind][i % len(SPLIT[kind])]
    parts = pieces(value, sizes)
    sentence = template.format(*parts)
    start = sentence.index(parts[0])
    end = sentence.index(parts[-1], start + len(parts[0])) + len(parts[-1])
    return sentence, sentence[start:end]


def _address(rng: random.Random, i: int) -> str:
    road = ROADS[i % len(ROADS)]
    shape = i % 4
    if shape == 0:
        return f"{road}{rng.randrange(1, 9999)}号"
    if shape == 1:
        return (
            f"{road}{rng.randrange(1, 300)}号{rng.randrange(1, 30)}栋"
            f"{rng.randrange(1, 6)}单元{rng.randrange(101, 2999)}室"
        )
    if shape == 2:
        return f"{road}{rng.choice(BUILDINGS)}{rng.randrange(2, 40)}楼"
    return f"{rng.choice(BUILDINGS)}{rng.randrange(1, 30)}栋{rng.randrange(101, 2999)}室"


def spellings(seed: int = 33, per_form: int = 12) -> list[Spelled]:
    """``per_form`` samples of each kind in each form, and of each address shape."""
    rng = random.Random(seed)
    make = {"id_card": id_number, "phone": mobile, "bank_card": bank_card}
    out: list[Spelled] = []
    for kind, new in make.items():
        for i in range(per_form):
            value = new(rng)
            template = SENTENCES[kind][i % len(SENTENCES[kind])]
            for form, (held, written) in _number_forms(kind, value, rng, i).items():
                sentence = template.format(held)
                out.append(Spelled(kind, f"{form} {kind}", sentence, written, value))
            sentence, span = _split(kind, value, i)
            out.append(Spelled(kind, f"split {kind}", sentence, span, value))
    for i in range(per_form * 2):
        written = _address(rng, i)
        template = ADDRESS_SENTENCES[i % len(ADDRESS_SENTENCES)]
        out.append(Spelled("address", "road address", template.format(written), written, written))
    return out


def look_alikes(seed: int = 330) -> list[Labelled]:
    """Numbers and places written like the new forms that are no personal data."""
    rng = random.Random(seed)
    out: list[Labelled] = []

    def n(group: str, template: str, value: str) -> None:
        out.append(Labelled(group, template.format(value), value, None))

    for i in range(10):
        digits = "".join(rng.choice("0123456789") for _ in range(10))
        n("order code", ("订单SO2026{}已发货", "我的单号是SO2026{}")[i % 2], digits)
        n(
            "product code",
            ("商品编码ID-{}有货吗", "型号No.{}的说明书")[i % 2],
            str(rng.randrange(1000, 9999)),
        )
        day = f"2026{('/', '_', '.', '-')[i % 4]}{rng.randrange(1, 13):02d}{('/', '_', '.', '-')[i % 4]}{rng.randrange(1, 29):02d}"
        n("date", ("预约在{}上午", "{}到期")[i % 2], day)
        amount = f"{rng.randrange(1, 999)},{rng.randrange(1000):03d}.{rng.randrange(100):02d}"
        n("amount", ("总共{}元", "退款金额{}，请查收")[i % 2], amount)
        tracking = "".join(rng.choice("0123456789") for _ in range(12))
        n("tracking", ("顺丰单号SF{}", "快递单号：YT{}")[i % 2], tracking)
        version = f"{rng.randrange(1, 20)}.{rng.randrange(0, 40)}.{rng.randrange(0, 9999)}"
        n("version", ("升级到v{}以后闪退", "App版本{}")[i % 2], version)
        ip = f"{rng.randrange(100, 223)}.{rng.randrange(0, 255)}.{rng.randrange(0, 255)}.{rng.randrange(1, 255)}"
        n("ip address", "服务器IP是{}，连不上", ip)
    for phrase, template in (
        ("一五一十", "他把经过{}地说了"),
        ("一三五七九", "单号是{}"),
        ("三三两两", "人{}地走了"),
        ("一二三四五六七", "跟着数{}"),
        ("初一十五", "{}都要上香"),
        ("九九八十一", "{}难"),
        ("一〇八", "水浒{}将"),
        ("五四三二一", "倒数{}"),
        ("二〇二六年", "{}十二月七号"),
        ("一万三千八百", "花了{}块"),
    ):
        n("chinese words", template, phrase)
    for template, value in (
        ("订单号前八位{}，后八位00012345", "20260512"),
        ("验证码前三位{}，后三位456", "123"),
        ("密码前六位{}，后面是8888", "123456"),
        ("快递单号前面是{}，后面是77889900", "SF1234"),
        ("手机尾号{}", "5678"),
        ("身份证后四位{}", "002X"),
    ):
        n("split words", template, value)
    for template, value in (
        ("坐地铁{}到人民广场", "5号线"),
        ("第{}的作业还没写", "3单元"),
        ("中山路那家店{}开门", "12号"),
        ("我们约在{}见", "星期三"),
        ("他是{}选手", "3号"),
        ("这个路口{}红绿灯", "有3个"),
    ):
        n("address words", template, value)
    return out


SPELLINGS = spellings()
SPELLING_LOOK_ALIKES = look_alikes()
