"""One Diagnostic type for every layer: YAML, schema, DSL, compile and plugin problems.

Codes are stable: tests, editors and CI annotations key on them. Each code is listed in
``CODES`` with a one-line summary, and ``docs/diagnostics.md`` is checked against it.
"""

from __future__ import annotations

import difflib
import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


CODES: Mapping[str, str] = {
    # reading files
    "CH001": "YAML syntax error",
    "CH002": "tab character used for indentation",
    "CH003": "duplicate key in a mapping",
    "CH004": "file or directory not found or unreadable",
    "CH005": "a file or directory in a pack is not read",
    "CH006": "a pack file is not a regular file",
    "CH007": "two packs have the same name",
    "CH008": "the pack has no rules",
    "CH009": "a pack name or path names more than one pack",
    # shape of a pack file (JSON Schema)
    "CH010": "value has the wrong type",
    "CH011": "required key is missing",
    "CH012": "unknown key (ignored)",
    "CH013": "value is not allowed here",
    # composing packs
    "CH020": "unknown extends target",
    "CH021": "cycle in extends",
    "CH022": "rule id defined twice",
    "CH023": "rule overrides an inherited rule without override: true",
    "CH024": "override: true but there is nothing to override",
    "CH025": "a plugin the pack requires is not installed",
    "CH026": "the pack requires another Charter version",
    # pack test cases
    "CH030": "test case names an unknown rule",
    "CH031": "test case expectation cannot hold",
    # the rule DSL
    "CH100": "DSL syntax error",
    "CH101": "unknown subject",
    "CH102": "unknown extractor",
    "CH103": "unknown predicate",
    "CH104": "unknown repair",
    "CH105": "invalid regular expression",
    "CH106": "type error in an expression",
    "CH107": "wrong arguments for a predicate or repair",
    "CH108": "unknown pack constant",
    # whole-rule analysis
    "CH110": "rule requires and forbids the same thing",
    "CH111": "rule can never fire",
    "CH112": "a regular expression can backtrack catastrophically",
    "CH113": "DSL expression too long",
    "CH114": "DSL expression nested too deeply",
    "CH115": "DSL expression has too many terms",
    "CH116": "DSL string or regular expression too long",
    # goals.yaml
    "CH300": "a template, deliverable or inherits names an unknown slot",
    "CH301": "a deliverable names no slot",
    "CH302": "the triggers of two intents overlap",
    "CH303": "unknown parent intent, or a parent cycle",
    "CH304": "intent id defined twice",
    "CH306": "a stage of an intent is malformed (what completes it, its slots, its by: intent)",
    "CH307": "a skill binding moves a field its keep: does not keep",
    "CH308": "a slot's regex captures personal data",
    "CH309": "unknown kind of personal data",
    "CH305": "planner test names an unknown intent",
    "CH319": "a slot's role: has no words, a blank word, or a type other than text",
    # memory.yaml
    "CH310": "a PII rule names a kind no installed recognizer finds",
    "CH311": "memory lifecycle tiers out of order",
    "CH312": "the narrative channel names an embedder no plugin registers",
    "CH313": "a slot fact rule or a statement names an unknown memory type",
    "CH314": "a statement phrase is malformed",
    "CH315": "a statement's roles disagree with roles: for its key",
    "CH317": "one slot name is carried from memory under two fact keys",
    "CH320": "a skill's input or output schema is not valid JSON Schema",
    "CH321": "a skill constraint reads an argument the input schema does not declare",
    "CH322": "a fallback names an unknown protocol, skill or FAQ",
    "CH323": "no installed plugin implements a skill contract",
    "CH324": "a skill declared twice, or in a file named otherwise",
    "CH325": "a fallback condition or action that does not parse",
    "CH326": "a skill message for a property the input schema does not declare",
    "CH327": "an intent calls an executing skill without confirm: true",
    "CH328": "a stage calls an executing skill (a stage checks, the intent acts)",
    "CH329": "a skill case's now: is not an ISO date-time with a UTC offset",
    "CH330": "FAQ id defined twice",
    "CH331": "a FAQ question has no searchable words",
    # learning.yaml and patches/*.yaml
    "CH340": "a patch names an unknown intent",
    "CH341": "a parameter mapping sets a slot its intent does not have",
    "CH342": "a parameter mapping's value does not read as a constant or current_<unit> ± N",
    "CH343": "a parameter mapping's entity names an unknown extractor",
    "CH344": "patch id defined twice",
    "CH345": "a calibration confuses a concept with itself",
    "CH346": "a parameter mapping sets a number slot to something else",
    "CH347": "two parameter mappings of one phrase and intent set the same slot",
    "CH348": "patches_dir is not a directory inside the pack",
    "CH349": "a patch is deployed and rejected",
    # responses.yaml and the reply: of skill contracts (the responses stage)
    "CH350": "responses for an unknown intent",
    "CH351": "template syntax error",
    "CH352": "a template names a field its event or result does not have",
    "CH353": "a template names an unknown formatter",
    "CH354": "an alternative of a template has no text (or both text and each)",
    "CH355": "an intent's confirmation question is written twice",
    "CH356": "a template cannot pass its own pack's rules",
    "CH357": "a template could not be checked: no sample value makes it apply",
    # tests/conversations/*.yaml
    "CH360": "conversation name defined twice",
    "CH361": "a conversation names an unknown intent",
    "CH362": "a conversation names a slot its intent does not have",
    "CH363": "a conversation expects a skill no contract declares",
    "CH364": "unknown verdict, answered_by or event kind in a conversation",
    "CH365": "invalid regular expression in a conversation's matches",
    "CH366": "a conversation's time is not an ISO date-time with a UTC offset",
    "CH367": "a conversation's expectation cannot hold",
    "CH368": "an outage of a skill no contract declares",
    "CH369": "a conversation expects a response template the pack does not declare",
    "CH370": "a pack's conversations cannot run on this machine",
    "CH380": "an intent has too few examples",
    "CH381": "an example sits closer to another intent than to its own",
    "CH382": "the intents' examples cannot be embedded",
    "CH383": "a safety intent has slots, a skill, stages or a confirmation",
    "CH384": "one utterance written for two intents, or for an intent and out of scope",
    "CH385": "an intent test phrase names an unknown intent",
    "CH386": "an intent test phrase names an unknown dialogue act",
    "CH387": "an intent test phrase expects an act with nothing pending, or expects nothing",
    "CH388": "an intent test phrase is one of the pack's own examples",
    "CH389": "an intent test phrase expects a slot its intent does not have",
    # plugins and internal
    "CH200": "a plugin failed to import",
    "CH201": "a plugin implements a hook that does not exist or with wrong parameters",
    "CH202": "a name is registered by two plugins",
    "CH203": "a plugin hook returned the wrong type",
    "CH204": "a plugin raised inside a hook",
    "CH205": "a plugin was disabled",
    "CH206": "invalid plugin configuration",
    # the runtime configuration (charter.toml, [tool.charter], environment)
    "CH400": "the configuration file cannot be read or is not valid TOML",
    "CH401": "unknown configuration key (ignored)",
    "CH402": "configuration value has the wrong type",
    "CH403": "configuration value is not allowed",
    "CH404": "invalid database or server URL",
    "CH405": "port out of range",
    "CH406": "a secret written in the configuration file",
    "CH407": "a tenant's token variable is not set",
    "CH408": "tenant defined twice",
    "CH409": "a required configuration key is missing",
    "CH900": "internal error",
}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location
    hint: str = ""

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
        }


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
    seen: set[Diagnostic] = set()
    unique = []
    for d in diagnostics:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return sorted(unique, key=Diagnostic.sort_key)


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
    return "\n".join(out) + ("\n" if out else "")


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
