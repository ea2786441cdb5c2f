"""One Diagnostic type for every layer: YAML, schema, DSL, compile and plugin problems.

``codes`` lists every stable code, ``model`` is the Diagnostic and its helpers, ``render``
prints them, ``fold`` puts what follows from a problem under it.
"""

from __future__ import annotations

from charter.diagnostics.codes import CODES
from charter.diagnostics.fold import count, fold, unfold
from charter.diagnostics.model import (
    Diagnostic,
    DiagnosticError,
    Location,
    Severity,
    did_you_mean,
    error,
    sort_diagnostics,
    warning,
)
from charter.diagnostics.render import (
    DOCS_URL,
    SOURCE_BEFORE,
    SOURCE_WINDOW,
    SourceCache,
    render_github,
    render_json,
    render_sarif,
    render_text,
)

__all__ = [
    "CODES",
    "DOCS_URL",
    "SOURCE_BEFORE",
    "SOURCE_WINDOW",
    "Diagnostic",
    "DiagnosticError",
    "Location",
    "Severity",
    "SourceCache",
    "count",
    "did_you_mean",
    "error",
    "fold",
    "render_github",
    "render_json",
    "render_sarif",
    "render_text",
    "sort_diagnostics",
    "unfold",
    "warning",
]
