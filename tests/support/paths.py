"""Where things are in the repository."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ROOT / "domains"
SHIPPED_PACKS = ("finance", "ecommerce", "medical")
