"""Chinese extractors for Charter.

Nine extractors, registered by ``charter_zh.plugin`` through the ``charter`` entry-point group:
``money``, ``money_upper``, ``percent``, ``date``, ``url``, ``email``, ``phone``, ``tax_doc`` and
``drug``. Each module's docstring says what its extractors deliberately leave out.
"""

from __future__ import annotations

__version__ = "0.1.0"
