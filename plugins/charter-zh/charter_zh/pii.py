"""PII recognizers for the memory write pipeline, built on the plugin's extractors.

Each implements ``charter.extensions.PiiRecognizer`` and reports what one extractor finds:

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
certain, so ``杭州市西湖区文三路90号`` generalises to the same).

Recognizers are pure and cheap to build; the address data is read on the first ``recognize``.
"""

from __future__ import annotations

from charter.extensions import PiiMatch
from charter.protocols import Extractor, Item
from charter_zh.address import AddressExtractor
from charter_zh.bank_card import BankCardExtractor
from charter_zh.id_card import IdCardExtractor
from charter_zh.phone import PhoneExtractor
from charter_zh.web import EmailExtractor


class ExtractorRecognizer:
    """A PII recognizer reporting the items of one extractor as matches of one kind."""

    def __init__(self, name: str, kind: str, placeholder: str, extractor: Extractor) -> None:
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.extractor = extractor

    def recognize(self, text: str) -> tuple[PiiMatch, ...]:
        """Matches in order, never overlapping (the extractor's items are)."""
        kind = self.kind
        return tuple(
            PiiMatch(item.start, item.end, item.text, kind, self.generalised(item))
            for item in self.extractor.extract(text)
            if self.keeps(item)
        )

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

    def generalised(self, item: Item) -> str | None:
        region: str = item.value.region
        return region or None


def recognizers() -> tuple[ExtractorRecognizer, ...]:
    """The five recognizers of the plugin, newly built."""
    return (
        ExtractorRecognizer("zh_id_card", "id_card", "[ID]", IdCardExtractor()),
        ExtractorRecognizer("zh_bank_card", "bank_card", "[BANK_CARD]", BankCardExtractor()),
        ExtractorRecognizer("zh_phone", "phone", "[PHONE]", PhoneExtractor()),
        ExtractorRecognizer("zh_email", "email", "[EMAIL]", EmailExtractor()),
        AddressRecognizer(),
    )
