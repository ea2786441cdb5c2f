"""A pack a plugin distribution ships, addressable as ``--domain NAME``
(``charter_register_packs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackRef:
    """A pack directory inside a plugin distribution, addressable as ``--domain NAME``.

    ``name`` defaults to the ``name:`` of the directory's ``pack.yaml`` when the hook returns a
    bare path.
    """

    name: str
    path: Path
