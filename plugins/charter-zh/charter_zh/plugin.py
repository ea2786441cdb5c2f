"""The ``zh`` plugin: registers the nine Chinese extractors through ``charter_register_extractors``.

Extractors are built once at import (regexes compiled, drug lexicon loaded into its automaton),
so the hook itself is cheap and returns the same instances on every call.
"""

from __future__ import annotations

from collections.abc import Sequence

from charter.hookspecs import hookimpl
from charter.protocols import Extractor
from charter_zh.dates import DateExtractor
from charter_zh.lexicon import DrugExtractor
from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor
from charter_zh.percent import PercentExtractor
from charter_zh.phone import PhoneExtractor
from charter_zh.tax_doc import TaxDocExtractor
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
)


@hookimpl
def charter_register_extractors() -> Sequence[Extractor]:
    return list(EXTRACTORS)
