"""A generated corpus of personal data as users type it (issues 16 and 33): resident ID
numbers, mobiles, bank cards and street addresses, each in every spelling seen leaking —
half-width, full-width, dashed, spaced, grouped in fours, 6-8-4; glued to a label, grouped
by any separator, in Chinese numerals, split across the sentence, with invisible characters
inside, a road without its district — inside the sentences a customer writes.

Everything is deterministic (a seeded ``random.Random``): the same corpus on every machine.
``leaked`` finds a value as written, and with its separators removed, its digits read as
ASCII and invisible characters dropped, so a value stored as ``6222 0268 …``, ``6222026…``
or ``六二二二…`` is caught alike.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

import ahocorasick
from stdnum import luhn
from stdnum.cn import ric

from charter_zh.pii_text import INVISIBLE
from tests.unit.memory.pii_spellings import spellings

_FULL = str.maketrans("0123456789Xx -", "０１２３４５６７８９ＸＸ\u3000－")
_REGIONS = ("110105", "310104", "330106", "440305", "510107", "420102", "320102", "500103")
_CARD_PREFIXES = ("622202", "621700", "622848", "623058", "436742", "524094", "622588")
_MOBILE_PREFIXES = ("138", "139", "150", "186", "177", "199", "135", "158")
_ADDRESSES = (
    "浙江省杭州市西湖区文三路{n}号",
    "北京市朝阳区建国路{n}号",
    "上海市徐汇区漕溪北路{n}号",
    "广东省深圳市南山区科技园{n}栋",
    "四川省成都市武侯区人民南路{n}号",
    "杭州市西湖区五常街道{n}号",
)
# the sentences personal data arrives in, per kind; {v} is the value as written
_SENTENCES = {
    "id_card": (
        "我的身份证号是{v}",
        "身份证{v}，帮我查一下",
        "证件号码：{v}",
        "实名认证用的是{v}，订单查不到了",
    ),
    "phone": (
        "我的手机号是{v}",
        "联系电话{v}，快递员打这个",
        "请回电{v}",
        "手机{v}，退款到账了吗",
    ),
    "bank_card": (
        "退款请打到我的银行卡{v}。",
        "我的卡号是{v}",
        "向张三转账5000元，卡号{v}",
        "银行卡{v}被扣款了",
    ),
    "address": (
        "收货地址改成{v}",
        "我住在{v}，快递送错了",
        "寄到{v}",
        "地址是{v}，帮我查下物流",
    ),
}


@dataclass(frozen=True)
class Statement:
    kind: str
    spelling: str
    value: str  # the value as written in the text
    digits: str  # the value with every separator removed (half-width): what must not leak
    text: str


def _id_number(rng: random.Random) -> str:
    body = (
        f"{rng.choice(_REGIONS)}{rng.randint(1950, 2004)}{rng.randint(1, 12):02d}"
        f"{rng.randint(1, 28):02d}{rng.randint(0, 999):03d}"
    )
    return body + ric.calc_check_digit(body + "0")  # stdnum wants the check digit's place


def _card(rng: random.Random) -> str:
    prefix = rng.choice(_CARD_PREFIXES)
    length = rng.choice((16, 19))
    body = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix) - 1))
    return body + luhn.calc_check_digit(body)


def _mobile(rng: random.Random) -> str:
    return rng.choice(_MOBILE_PREFIXES) + f"{rng.randint(0, 99_999_999):08d}"


def _groups(value: str, sizes: tuple[int, ...], sep: str) -> str:
    out, pos = [], 0
    for size in sizes:
        if pos >= len(value):
            break
        out.append(value[pos : pos + size])
        pos += size
    if pos < len(value):
        out.append(value[pos:])
    return sep.join(out)


def _fours(value: str, sep: str) -> str:
    return sep.join(value[i : i + 4] for i in range(0, len(value), 4))


def _spellings(kind: str, value: str) -> dict[str, str]:
    if kind == "id_card":
        forms = {
            "plain": value,
            "dashed-6-8-4": _groups(value, (6, 8, 4), "-"),
            "spaced-6-8-4": _groups(value, (6, 8, 4), " "),
            "grouped-fours": _fours(value, " "),
            "dashed-fours": _fours(value, "-"),
            "lower-x": value.lower(),
        }
    elif kind == "phone":
        forms = {
            "plain": value,
            "dashed-3-4-4": _groups(value, (3, 4, 4), "-"),
            "spaced-3-4-4": _groups(value, (3, 4, 4), " "),
            "country-code": "+86 " + value,
            "grouped-fours": _fours(value, " "),
        }
    elif kind == "bank_card":
        forms = {
            "plain": value,
            "spaced-fours": _fours(value, " "),
            "dashed-fours": _fours(value, "-"),
            "double-spaced": _fours(value, "  "),
            "dotted-fours": _fours(value, "."),
        }
    else:
        forms = {"plain": value}
    out = dict(forms)
    for name, form in forms.items():
        out[f"full-width {name}"] = form.translate(_FULL)
    return out


def corpus(seed: int = 16) -> tuple[Statement, ...]:
    """Every kind in every spelling, in every sentence of its kind: 4 kinds, 2-12 spellings
    each, 4 sentences, 3 values per pair (6 addresses): 432 statements; then the spellings of
    issue 33 (``tests.unit.memory.pii_spellings``: glued to a label, any separator, Chinese
    numerals, split across the sentence, invisible characters, a road without a district),
    4 of each kind and form: 92 statements."""
    rng = random.Random(seed)
    make = {"id_card": _id_number, "phone": _mobile, "bank_card": _card}
    out: list[Statement] = []
    for kind, sentences in _SENTENCES.items():
        for sentence in sentences:
            for _ in range(3 if kind != "address" else 6):
                if kind == "address":
                    template = rng.choice(_ADDRESSES)
                    value = template.format(n=rng.randint(10, 999))
                else:
                    value = make[kind](rng)
                for spelling, written in _spellings(kind, value).items():
                    digits = value.upper() if kind != "address" else value
                    out.append(
                        Statement(kind, spelling, written, digits, sentence.format(v=written))
                    )
    for sp in spellings(seed + 17, per_form=4):
        spelling = sp.form.removesuffix(f" {sp.kind}")
        out.append(Statement(sp.kind, spelling, sp.written, sp.value, sp.sentence))
    return tuple(out)


def leaked(haystack: str, statements: tuple[Statement, ...]) -> list[Statement]:
    """The statements whose value is in ``haystack``: as written, or with its separators
    removed (the haystack's own separators and full-width digits folded first)."""
    written, keys = _automata(statements)
    folded = _fold(haystack)
    squeezed = "".join(ch for ch in folded if ch not in " -./_，、")
    hits: set[int] = set()
    for automaton, text in ((written, haystack), (keys, folded), (keys, squeezed)):
        for _, found in automaton.iter(text):
            hits.update(found)
    return [s for i, s in enumerate(statements) if i in hits]


@functools.cache
def _automata(statements: tuple[Statement, ...]) -> tuple[Any, Any]:
    """One Aho-Corasick automaton of the values as written, one of the keys (digits, or an
    address's street): a haystack is read once, not once per statement (a sweep searches
    thousands of rows for hundreds of statements)."""
    written, keys = ahocorasick.Automaton(), ahocorasick.Automaton()
    for i, s in enumerate(statements):
        key = s.digits if s.kind != "address" else _street(s.digits)
        for automaton, word in ((written, s.value), (keys, key)):
            found = automaton.get(word, ())
            automaton.add_word(word, (*found, i))
    written.make_automaton()
    keys.make_automaton()
    return written, keys


def _street(address: str) -> str:
    """The part of an address below its district: what locates a person."""
    for mark in ("区", "市"):
        if mark in address:
            return address.rsplit(mark, 1)[1]
    return address


_HALF = str.maketrans(
    "０１２３４５６７８９Ｘｘ\u3000－〇零一二两三四五六七八九幺",
    "0123456789XX -0012234567891",
)


def _fold(text: str) -> str:
    """Full-width and Chinese-numeral digits as ASCII, invisible characters removed."""
    return INVISIBLE.sub("", text).translate(_HALF).upper()
