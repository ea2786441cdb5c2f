"""One Diagnostic type for every layer: YAML, schema, DSL, compile and plugin problems."""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from charter.diagnostics.codes import CODES


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    """A point (and optional end) in a source file; line and column are 1-based."""

    path: str
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.col}"
        return self.path


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location
    hint: str = ""
    # what only follows from this problem (a file that did not parse, a plugin that did not
    # import), folded under it by ``charter.diagnostics.fold``
    consequences: tuple[Diagnostic, ...] = ()

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code!r}")

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.col, self.code, self.message)

    def headline(self) -> str:
        return f"{self.location}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        loc = self.location
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
            "path": loc.path,
            "line": loc.line,
            "col": loc.col,
            "end_line": loc.end_line,
            "end_col": loc.end_col,
        } | (
            {"consequences": [c.as_dict() for c in self.consequences]} if self.consequences else {}
        )


def error(code: str, message: str, location: Location, hint: str = "") -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, location, hint)


def warning(code: str, message: str, location: Location, hint: str = "") -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, location, hint)


class DiagnosticError(Exception):
    """Raised where a layer cannot go on; carries every problem found so far."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.headline() for d in self.diagnostics))


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """A hint naming the closest candidate, or listing the few there are."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    if pool and len(pool) <= 12:
        return "expected one of: " + ", ".join(pool)
    return ""


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each problem once, by location. A root reached twice (a ruleset that two packs extend
    and that did not parse) keeps the consequences of both."""
    unique: dict[Diagnostic, list[Diagnostic]] = {}
    for d in diagnostics:
        unique.setdefault(replace(d, consequences=()), []).extend(d.consequences)
    merged = [
        replace(d, consequences=tuple(sort_diagnostics(more))) if more else d
        for d, more in unique.items()
    ]
    return sorted(merged, key=Diagnostic.sort_key)
