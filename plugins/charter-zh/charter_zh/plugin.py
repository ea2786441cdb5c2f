"""The ``zh`` plugin: sixteen Chinese extractors, one predicate, five PII recognizers and
seven formatters.

``charter_register_extractors`` returns ``EXTRACTORS``; ``charter_register_predicates`` the
hallucination interceptor's ``backed_by_memory`` (``charter_zh.claims``);
``charter_register_pii_recognizers``
returns ``PII_RECOGNIZERS`` (``charter_zh.pii``: ID numbers, bank cards, phones, e-mail
addresses, street addresses); ``charter_register_formatters`` the response-template formatters
``money``, ``money_upper``, ``amount``, ``yuan``, ``percent``, ``date`` and ``when``
(``charter_zh.formatters``). All are built once at import (regexes compiled, drug lexicon
loaded into its automaton), so the hooks are cheap and return the same instances on every call.
The one large table, China's administrative divisions for ``address``, is read on the first
``extract`` that needs it, not at import.
"""

from __future__ import annotations

from collections.abc import Sequence

from charter.contracts.pii import PiiRecognizer
from charter.contracts.rules import Extractor, Formatter, Predicate
from charter.plugins.hookspecs import hookimpl
from charter_zh.address import AddressExtractor
from charter_zh.bank_card import BankCardExtractor
from charter_zh.card_tail import CardTailExtractor
from charter_zh.claims import BackedByMemory, UserClaimExtractor
from charter_zh.dates import DateExtractor
from charter_zh.formatters import FORMATTERS
from charter_zh.id_card import IdCardExtractor
from charter_zh.lexicon import DrugExtractor
from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor
from charter_zh.percent import PercentExtractor
from charter_zh.phone import PhoneExtractor
from charter_zh.pii import recognizers
from charter_zh.spoken import SpokenAmountExtractor
from charter_zh.tax_doc import TaxDocExtractor
from charter_zh.times import TimeExtractor
from charter_zh.web import EmailExtractor, UrlExtractor

EXTRACTORS: tuple[Extractor, ...] = (
    MoneyExtractor(),
    MoneyUpperExtractor(),
    PercentExtractor(),
    DateExtractor(),
    UrlExtractor(),
    EmailExtractor(),
    PhoneExtractor(),
    TaxDocExtractor(),
    DrugExtractor(),
    IdCardExtractor(),
    BankCardExtractor(),
    AddressExtractor(),
    TimeExtractor(),
    UserClaimExtractor(),
    SpokenAmountExtractor(),
    CardTailExtractor(),
)
PREDICATES: tuple[Predicate, ...] = (BackedByMemory(),)

PII_RECOGNIZERS: tuple[PiiRecognizer, ...] = recognizers()


@hookimpl
def charter_register_extractors() -> Sequence[Extractor]:
    return list(EXTRACTORS)


@hookimpl
def charter_register_predicates() -> Sequence[Predicate]:
    return list(PREDICATES)


@hookimpl
def charter_register_pii_recognizers() -> Sequence[PiiRecognizer]:
    return list(PII_RECOGNIZERS)


@hookimpl
def charter_register_formatters() -> Sequence[Formatter]:
    return list(FORMATTERS)
