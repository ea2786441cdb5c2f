"""Charter: deterministic rules, goals, memory and skills around a small local LLM."""

from __future__ import annotations

__version__ = "0.1.0"

from charter.diagnostics import Diagnostic, DiagnosticError, Location, Severity
from charter.protocols import Extractor, Item, Predicate, Repair, RepairArg, RepairInput
from charter.registry import Registry

__all__ = [
    "Diagnostic",
    "DiagnosticError",
    "Extractor",
    "Item",
    "Location",
    "Predicate",
    "Registry",
    "Repair",
    "RepairArg",
    "RepairInput",
    "Severity",
    "__version__",
]
