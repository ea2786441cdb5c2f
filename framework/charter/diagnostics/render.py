"""Diagnostics as text (with the source line and a caret), JSON, GitHub annotations, SARIF."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from charter.diagnostics.codes import CODES
from charter.diagnostics.model import Diagnostic


@dataclass
class SourceCache:
    """Source texts by path, so a renderer can show the offending line."""

    texts: dict[str, str] = field(default_factory=dict)

    def line(self, path: str, line: int) -> str | None:
        if path not in self.texts:
            try:
                self.texts[path] = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self.texts[path] = ""
        lines = self.texts[path].splitlines()
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


def _display_width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


SOURCE_WINDOW = 200  # characters of a source line shown under a diagnostic, at most
SOURCE_BEFORE = 80  # of which before the column, when the line is longer


def render_text(diagnostics: Sequence[Diagnostic], sources: SourceCache | None = None) -> str:
    """``path:line:col: CODE message``, the source line, a caret under the column, the hint.

    The caret is placed by display width so that it sits under the right character even after
    full-width CJK text.
    """
    sources = sources or SourceCache()
    out: list[str] = []
    for d in diagnostics:
        label = "" if d.is_error else " (warning)"
        out.append(f"{d.headline()}{label}")
        loc = d.location
        src = sources.line(loc.path, loc.line) if loc.line else None
        if src is not None:
            src = src.expandtabs(1)
            start = max(loc.col - 1, 0)
            spans = loc.end_line == loc.line and loc.end_col > loc.col
            end = loc.end_col - 1 if spans else start + 1
            # a line of a pack may be megabytes long (a fuzzed literal): show a window of it
            lo = max(0, start - SOURCE_BEFORE)
            hi = min(len(src), max(start + 1, lo + SOURCE_WINDOW))
            shown = ("…" if lo else "") + src[lo:hi] + ("…" if hi < len(src) else "")
            prefix = ("…" if lo else "") + src[lo:start]
            width = max(_display_width(src[start : min(end, hi)]), 1)
            out.append(f"    {shown}")
            out.append("    " + " " * _display_width(prefix) + "^" * width)
        if d.hint:
            out.append(f"    hint: {d.hint}")
        if d.consequences:
            out.append(f"    {_more(d)} (--all-consequences lists them)")
    return "\n".join(out) + ("\n" if out else "")


def _more(d: Diagnostic) -> str:
    """What a root says of the problems folded under it."""
    n = len(d.consequences)
    return f"and {n} consequence{'' if n == 1 else 's'}"


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([d.as_dict() for d in diagnostics], ensure_ascii=False, indent=2) + "\n"


def _gh_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands, which annotate the pull request's diff."""
    out = []
    for d in diagnostics:
        kind = "error" if d.is_error else "warning"
        loc = d.location
        props = [f"file={_gh_escape(loc.path, prop=True)}"]
        if loc.line:
            props += [f"line={loc.line}", f"col={loc.col}"]
        props.append(f"title={d.code}")
        message = d.message + (f" ({d.hint})" if d.hint else "")
        message += f" ({_more(d)})" if d.consequences else ""
        out.append(f"::{kind} {','.join(props)}::{_gh_escape(message)}")
    return "\n".join(out) + ("\n" if out else "")


# Charter's published home: the only address the project gives (its page shows README.md,
# which leads to every page of docs/). SARIF viewers open helpUri as a link, so it must be
# absolute: a relative "docs/diagnostics.md" resolved against the scanned repository, not
# against Charter's documentation.
DOCS_URL = "https://pypi.org/project/charter/"


def render_sarif(diagnostics: Sequence[Diagnostic], tool_version: str) -> str:
    """SARIF 2.1.0, for code-scanning dashboards."""
    used = sorted({d.code for d in diagnostics})
    rules = [
        {"id": code, "shortDescription": {"text": CODES[code]}, "helpUri": DOCS_URL}
        for code in used
    ]
    results = []
    for d in diagnostics:
        loc = d.location
        region: dict[str, int] = {}
        if loc.line:
            region = {"startLine": loc.line, "startColumn": loc.col}
            if loc.end_line:
                region |= {"endLine": loc.end_line, "endColumn": loc.end_col}
        physical: dict[str, Any] = {"artifactLocation": {"uri": loc.path}}
        if region:
            physical["region"] = region
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        text += f" ({_more(d)})" if d.consequences else ""
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": used.index(d.code),
                "level": "error" if d.is_error else "warning",
                "message": {"text": text},
                "locations": [{"physicalLocation": physical}],
            }
        )
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "charter",
                        "version": tool_version,
                        "informationUri": DOCS_URL,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
