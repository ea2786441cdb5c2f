"""Chinese extractors for Charter.

Thirteen extractors, registered by ``charter_zh.plugin`` through the ``charter`` entry-point
group: ``money``, ``money_upper``, ``percent``, ``date``, ``url``, ``email``, ``phone``,
``tax_doc``, ``drug``, ``id_card``, ``bank_card``, ``address`` and ``time``; and five PII
recognizers built on them (``charter_zh.pii``: ID numbers, bank cards, phones, e-mail and street
addresses, for the memory write pipeline). Each module's docstring says what its extractors
deliberately leave out. ``charter_zh.times.resolve`` resolves time expressions such as
``去年一季度`` or ``明天10点前`` against a reference date.
"""

from __future__ import annotations

__version__ = "0.1.0"
