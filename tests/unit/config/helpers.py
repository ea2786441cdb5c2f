"""What the configuration tests share besides fixtures."""

from __future__ import annotations

from collections.abc import Callable

from charter.config import Config
from charter.diagnostics import Diagnostic

Load = Callable[..., tuple[Config, list[Diagnostic]]]


def headlines(diags: list[Diagnostic]) -> list[str]:
    """``file:line:col: CODE message``, `` (warning)`` appended as the text renderer does."""
    return [d.headline() + ("" if d.is_error else " (warning)") for d in diags]
