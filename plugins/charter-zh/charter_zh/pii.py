"""PII recognizers for the memory write pipeline, built on the plugin's extractors.

Each implements ``charter.contracts.pii.PiiRecognizer`` and reports what one extractor finds:

==============  ============  ===============  ================================================
name            kind          placeholder      from
==============  ============  ===============  ================================================
zh_id_card      id_card       ``[ID]``         ``id_card``: resident ID numbers with checksum
zh_bank_card    bank_card     ``[BANK_CARD]``  ``bank_card``: card numbers passing Luhn
zh_phone        phone         ``[PHONE]``      ``phone``: numbers valid for China
zh_email        email         ``[EMAIL]``      ``email``
zh_address      address       ``[ADDRESS]``    ``address``, generalised to the district
==============  ============  ===============  ================================================

The names carry the plugin's prefix, so another plugin may register its own ``phone`` or
``email`` recognizer beside these. What each recognizer leaves alone is what its extractor
leaves alone (see the extractors' docstrings): an order number is no phone number, a 17-digit
string no ID number.

An address is reported only when it reaches below its district (a street, a building): that is
what locates a person. ``浙江省杭州市西湖区`` alone is already as coarse as a policy keeps it, so
it is not reported; ``浙江省杭州市西湖区文三路90号`` is, with ``generalised`` =
``浙江省杭州市西湖区`` (``Address.region``: the levels the text left out are filled in when they are
certain, so ``杭州市西湖区文三路90号`` generalises to the same). A road or a building and a
number without any division (``寄到深南大道9988号``, ``charter_zh.street``) is reported too,
with no ``generalised`` form: a policy that generalises addresses redacts it.

Recognizers see every spelling a user types, wider than their extractors (which read values
a rule or a slot may use, and so refuse what is ambiguous). They scan the text as
``charter_zh.pii_text`` reads it: compatibility characters in NFKC (``１３８``, ``⑴``), full-
width spaces and dashes folded, invisible characters (``\u200b``, soft hyphen …) removed,
Chinese numerals read as digits inside a run that reads as a number (``幺三八一二三四五六七八``);
every match is reported with the span of the text as given, so a redaction replaces the
characters the user typed, the invisible ones inside included.

Digits written in groups that the extractors do not read (``110105-19491231-002X``,
``138/1234/5678``, ``6222_0268_1539_8387``, ``138，1234，5678``, ``+86 138-1234-5678``) are
read as one number when, separators removed, it is one: an ID number with its check
character and birth date, a card number passing Luhn with a network's prefix, a mobile
number (``charter_zh.pii_digits``, which also reads a number glued to a label such as ``ID``,
``tel``, ``vx`` or ``card``). A group of digits that is none of these (an order number, a date,
a version, an IP address) is left alone. A number told in pieces (``手机前三位138，后八位
12345678``) is one when the words say so (``charter_zh.pii_split``).

The words before a number count too (``charter_zh.pii_context``): after ``身份证号`` an 18-
character ID shape with a wrong check character is an ID number, after ``卡号`` a 16-19 digit
number failing Luhn is a card, after ``手机`` any 11-digit number starting with 1 is a phone;
after ``订单号`` (``单号``, ``运单号`` …) a number passing Luhn is an order number, not a card.

Recognizers are pure and cheap to build; the address data is read on the first ``recognize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from stdnum import luhn

from charter.contracts.pii import PiiMatch
from charter.contracts.rules import Extractor, Item
from charter_zh import pii_context
from charter_zh.address import AddressExtractor
from charter_zh.bank_card import BankCardExtractor, issued
from charter_zh.id_card import IdCardExtractor, id_number
from charter_zh.phone import PhoneExtractor
from charter_zh.pii_digits import squeezed, stretches
from charter_zh.pii_split import splits
from charter_zh.pii_text import view
from charter_zh.street import streets
from charter_zh.web import EmailExtractor, outside_links

_NUMBER_KINDS = ("id_card", "bank_card", "phone")


@dataclass(frozen=True)
class _Run:
    """A run of (grouped) digits: where, as written, separators removed, the kind it is by
    its checks alone, and the context words in reach before it."""

    start: int
    end: int
    written: str
    digits: str
    kind: str | None
    contexts: tuple[pii_context.Context, ...]


# The recognizers of one text run one after the other (the pipeline hands each the same
# text): its runs are computed once for all five.
@lru_cache(maxsize=64)
def _runs(scanned: str) -> tuple[tuple[_Run, ...], bool]:
    """The runs of digits of a scanned text, and whether it holds any context word."""
    mentioned = pii_context.mentions(scanned)
    runs = tuple(
        _Run(
            s.start,
            s.end,
            s.written,
            s.digits,
            s.kind,
            pii_context.before(scanned, s.start) if mentioned else (),
        )
        for s in stretches(scanned)
    )
    return runs, mentioned


def _overlaps(start: int, end: int, items: list[Item]) -> bool:
    return any(start < i.end and i.start < end for i in items)


def _said(kind: str, digits: str, contexts: tuple[pii_context.Context, ...]) -> bool:
    """Whether the context words before a number make it personal data of ``kind`` although
    the number fails that kind's checks (see ``charter_zh.pii_context``)."""
    if not contexts:
        return False
    if kind == "id_card":
        return pii_context.nearest(contexts) == "id_card" and pii_context.id_shape(digits)
    if kind == "phone":
        national = digits[3:] if digits.startswith("+86") else digits
        if len(national) == 13 and national.startswith("86"):
            national = national[2:]
        return pii_context.nearest(contexts) == "phone" and pii_context.mobile_shape(national)
    valid = (
        digits.isdigit()
        and issued(digits)
        and luhn.is_valid(digits)
        and not (len(digits) == 18 and id_number(digits) is not None)
    )
    return pii_context.is_card(contexts, digits, valid)


def _item(start: int, end: int, text: str) -> Item:
    return Item(start, end, text[start:end], text[start:end], None, None, {})


class ExtractorRecognizer:
    """A PII recognizer reporting the items of one extractor as matches of one kind, and the
    grouped digits of that kind the extractor does not read (see the module docstring)."""

    def __init__(self, name: str, kind: str, placeholder: str, extractor: Extractor) -> None:
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.extractor = extractor
        self.examples: tuple[str, ...] = ()  # see EXAMPLES
        self.label = kind  # see LABELS

    def recognize(self, text: str) -> tuple[PiiMatch, ...]:
        """Matches in order, never overlapping, with the spans of ``text`` as given."""
        scan = view(text)
        items = self.found(scan.text)
        found: list[PiiMatch] = []
        for item in items:
            start, end = scan.original(item.start, item.end)
            found.append(PiiMatch(start, end, text[start:end], self.kind, self.generalised(item)))
        return tuple(found)

    def found(self, scanned: str) -> list[Item]:
        """The items of personal data in a scanned text (``charter_zh.pii_text``), in order."""
        items = [item for item in self.extractor.extract(scanned) if self.keeps(item)]
        if self.kind not in _NUMBER_KINDS:
            return items
        items = self._numbers(scanned, items)
        told = [
            _item(s.start, s.end, scanned)
            for s in splits(scanned)
            if s.kind == self.kind and not _overlaps(s.start, s.end, items)
        ]
        if told:
            items = sorted(items + outside_links(scanned, told), key=lambda i: i.start)
        return items

    def _numbers(self, scanned: str, items: list[Item]) -> list[Item]:
        """The extractor's items, the grouped digits of this kind, and what the context words
        before a number decide (``charter_zh.pii_context``), in order."""
        kind = self.kind
        runs, mentioned = _runs(scanned)
        found = list(items)
        grouped = [
            _item(r.start, r.end, scanned)
            for r in runs
            if r.kind == kind and not _overlaps(r.start, r.end, found)
        ]
        found += outside_links(scanned, grouped)
        if mentioned:
            if kind == "bank_card":  # an order word may say a Luhn-valid number is no card
                found = [
                    i
                    for i in found
                    if pii_context.is_card(
                        pii_context.before(scanned, i.start), squeezed(i.text), True
                    )
                ]
            said = [
                _item(r.start, r.end, scanned)
                for r in runs
                if not _overlaps(r.start, r.end, found) and _said(kind, r.digits, r.contexts)
            ]
            found += outside_links(scanned, said)
        found.sort(key=lambda i: i.start)
        return found

    def keeps(self, item: Item) -> bool:
        """Whether the item is personal data (every item, unless a subclass says otherwise)."""
        return True

    def generalised(self, item: Item) -> str | None:
        """The coarser form a policy may keep; None: the kind can only be redacted."""
        return None


class AddressRecognizer(ExtractorRecognizer):
    """Addresses with a street-level detail, generalised to their district."""

    def __init__(self) -> None:
        super().__init__("zh_address", "address", "[ADDRESS]", AddressExtractor())

    def keeps(self, item: Item) -> bool:
        return bool(item.value.detail)

    def found(self, scanned: str) -> list[Item]:
        """The extractor's addresses, and the street addresses written without a district
        (``charter_zh.street``) outside them."""
        items = super().found(scanned)
        roads = [
            Item(a, b, scanned[a:b], None, None, None, {})
            for a, b in streets(scanned)
            if not _overlaps(a, b, items)
        ]
        if not roads:
            return items
        return sorted(items + outside_links(scanned, roads), key=lambda i: i.start)

    def generalised(self, item: Item) -> str | None:
        if item.value is None:
            return None  # a street address without its district: nothing coarser to keep
        region: str = item.value.region
        return region or None


# sentences holding one value of each kind, as users write them: validation tries slot regexes
# on them (CH308, a slot that would capture personal data)
EXAMPLES: dict[str, tuple[str, ...]] = {
    "id_card": (
        "身份证号11010519491231002X",
        "证件号码330106199001011240",
        "身份证110105 19491231 002X",
    ),
    "bank_card": (
        "退款请打到我的银行卡6222026815398387。",
        "卡号6222021234567890128",
        "卡号4111111111111111",
        "卡号6222 0268 1539 8387",
    ),
    "phone": ("手机13812345678", "电话+8613812345678", "电话138-1234-5678"),
    "email": ("邮箱zhang.san@example.com",),
    "address": ("寄到浙江省杭州市西湖区文三路90号",),
}


# what a reply calls each kind (为保护您的信息安全，银行卡号不会用作订单号。)
LABELS = {
    "id_card": "身份证号",
    "bank_card": "银行卡号",
    "phone": "手机号",
    "email": "邮箱地址",
    "address": "详细地址",
}


def recognizers() -> tuple[ExtractorRecognizer, ...]:
    """The five recognizers of the plugin, newly built."""
    built = (
        ExtractorRecognizer("zh_id_card", "id_card", "[ID]", IdCardExtractor()),
        ExtractorRecognizer("zh_bank_card", "bank_card", "[BANK_CARD]", BankCardExtractor()),
        ExtractorRecognizer("zh_phone", "phone", "[PHONE]", PhoneExtractor()),
        ExtractorRecognizer("zh_email", "email", "[EMAIL]", EmailExtractor()),
        AddressRecognizer(),
    )
    for r in built:
        r.examples = EXAMPLES[r.kind]
        r.label = LABELS[r.kind]
    return built
