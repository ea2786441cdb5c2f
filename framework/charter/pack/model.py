"""The typed pack model the loader produces and the compiler consumes.

It keeps, for every rule and test case, the document and JSON pointer it came from, so that a
compile error found at character 17 of a ``check:`` string can be reported at its exact line and
column in the YAML file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from charter.diagnostics import Location
from charter.pack.yamlsrc import LocatedDoc

Pointer = tuple[str | int, ...]

DEFAULT_THRESHOLDS: Mapping[str, float | int] = {
    "uncertainty": 0.72,
    "max_retries": 2,
    "retrieval_top_k": 3,
}
DEFAULT_MESSAGES: Mapping[str, str] = {
    "safe": "抱歉，这个问题我暂时无法回答，已为您转接人工客服。",
    "escalate": "已为您转接人工客服，请稍候。",
}


DEFAULT_PATCHES_DIR = "patches"


def patches_dir(value: Any) -> str | None:
    """``learning.yaml``'s ``patches_dir`` as a relative POSIX path below the pack
    (``DEFAULT_PATCHES_DIR`` when it is not a string); None when it is the pack itself or
    leaves it."""
    if not isinstance(value, str):
        return DEFAULT_PATCHES_DIR
    text = value.replace("\\", "/")
    path = PurePosixPath(text.strip())
    parts = path.parts
    if not parts or path.is_absolute() or ".." in parts or ":" in parts[0]:
        return None  # the pack itself, outside it, or a drive (C:/patches)
    return path.as_posix()


@dataclass(frozen=True)
class Located:
    """A node of a loaded YAML document."""

    doc: LocatedDoc
    ptr: Pointer

    def loc(self, key: str | int | None = None) -> Location:
        return self.doc.loc(self.ptr if key is None else (*self.ptr, key))

    def key_loc(self, key: str | int) -> Location:
        return self.doc.key_loc((*self.ptr, key))

    def text_loc(self, key: str, start: int, end: int | None = None) -> Location:
        """Location of characters ``start:end`` of the string at ``key``."""
        return self.doc.offset_loc((*self.ptr, key), start, end)


@dataclass(frozen=True)
class RuleSource:
    id: str
    describe: str
    check: str
    on_fail: str
    origin: str  # name of the pack or ruleset that defines it
    at: Located
    when: str | None = None
    message: str = ""
    on_unfixed: str | None = None
    override: bool = False
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseSource:
    name: str
    output: str
    origin: str
    at: Located
    input: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)
    expect_pass: tuple[str, ...] = ()
    expect_fail: tuple[str, ...] = ()
    verdict: str | None = None
    fixed: str | None = None


@dataclass(frozen=True)
class PackSource:
    """A pack with extends resolved and rules merged (inherited first, overrides in place)."""

    name: str
    version: str
    kind: str
    root: Path
    description: str = ""
    locale: str = "zh-CN"
    thresholds: Mapping[str, float | int] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    messages: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_MESSAGES))
    rules: tuple[RuleSource, ...] = ()
    cases: tuple[CaseSource, ...] = ()
    extends: tuple[str, ...] = ()  # names of the packs merged in, in order
    # every file read, with its text: the compile cache is keyed by these
    files: tuple[tuple[str, str], ...] = ()
    goals: LocatedDoc | None = None  # the pack's own goals.yaml (not inherited through extends)
    memory: LocatedDoc | None = None  # the pack's own memory.yaml
    skills: tuple[LocatedDoc, ...] = ()  # the pack's skills/*.yaml contracts, by file name
    fallbacks: LocatedDoc | None = None  # the pack's own fallbacks.yaml
    faq: LocatedDoc | None = None  # the pack's own faq.yaml
    learning: LocatedDoc | None = None  # the pack's own learning.yaml
    responses: LocatedDoc | None = None  # the pack's own responses.yaml
    patches: tuple[LocatedDoc, ...] = ()  # <patches_dir>/*.yaml, by file name
    conversations: tuple[LocatedDoc, ...] = ()  # tests/conversations/*.yaml, by file name
    intents: LocatedDoc | None = None  # tests/intents.yaml: the intent test table
    # (kind, shown path) of each file that exists but did not parse, also through extends:
    # what the compiler says of its absence only follows from that (charter.diagnostics.fold)
    unparsed: tuple[tuple[str, str], ...] = ()

    def constants(self) -> dict[str, Any]:
        """What ``pack.<path>`` refers to in the DSL."""
        return {
            "name": self.name,
            "version": self.version,
            "locale": self.locale,
            "thresholds": dict(self.thresholds),
            "messages": dict(self.messages),
        }
