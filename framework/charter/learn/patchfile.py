"""Patch files as ``charter learn`` writes them: YAML reviewed like code.

``render`` writes a whole file: a header saying where it came from, ``parameter_mappings``
then ``calibrations``, each sorted by id, every key in a fixed order, Chinese as it is, lists of
names in flow style (``learned_from: [R-000001]``).

``plan`` merges what was learned into the patch files already there without rewriting them:
the files are read node by node (with their positions), and the text is edited in place, so
hand edits and comments stay. A patch whose id some file of the directory already has is kept
as it is there (a person may have edited it); only its ``learned_from`` grows by the new log
ids. New ids are added at the end of their section of ``learned.yaml`` (the section is added
when the file has none; the file is written when there is none). ``diff`` shows the changes as
a unified diff, ``apply`` writes them.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from charter.compile.specs.learn import Calibration, ParameterMapping

LEARNED_FILE = "learned.yaml"
HEADER = (
    "# 由 charter learn 根据反思日志生成：像代码一样审阅后提交\n"
    "# Written by `charter learn` from the reflection log: review it like code, then commit it.\n"
)
MAPPINGS, CALIBRATIONS = "parameter_mappings", "calibrations"
_NOT_FIRST = set("-?:,[]{}#&*!|>'\"%@` ")
_FLOW = set(",[]{}")

Patch = ParameterMapping | Calibration


class PatchFileError(Exception):
    """A patch file that cannot be read or merged into; the message names the file."""


@dataclass(frozen=True)
class Change:
    """One file to write: ``old`` is None for a new file."""

    path: Path
    old: str | None
    new: str
    added: tuple[str, ...] = ()  # ids of new patches
    updated: tuple[str, ...] = ()  # ids whose learned_from grew


# ---- writing YAML ---------------------------------------------------------------------------


def scalar(value: Any, *, flow: bool = False) -> str:
    """A value as YAML: plain when it reads back as itself, else double-quoted (JSON)."""
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    text = str(value)
    if _plain(text, flow):
        return text
    return json.dumps(text, ensure_ascii=False)


def _plain(text: str, flow: bool) -> bool:
    if not text or text != text.strip() or text[0] in _NOT_FIRST or "\n" in text:
        return False
    if ": " in text or " #" in text or text.endswith(":") or (flow and _FLOW & set(text)):
        return False
    try:
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False


def _names(names: Sequence[str]) -> str:
    return "[" + ", ".join(scalar(n, flow=True) for n in names) + "]"


def _item(patch: Patch, indent: int) -> str:
    pad = " " * indent
    rows: list[str] = [f"id: {scalar(patch.id)}"]
    if isinstance(patch, ParameterMapping):
        rows.append(f"intent: {scalar(patch.intent)}")
        if patch.entity is not None:
            rows.append(f"entity: {scalar(patch.entity)}")
        rows.append(f"phrase: {scalar(patch.phrase)}")
        rows.append("set:")
        rows += [f"  {scalar(name)}: {scalar(expr.source())}" for name, expr in patch.values]
    else:
        rows.append(f"confused_pair: {_names(patch.confused_pair)}")
        rows.append(f"discriminator: {scalar(patch.discriminator)}")
        if patch.example:
            rows.append(f"example: {scalar(patch.example)}")
        if patch.intent is not None:
            rows.append(f"intent: {scalar(patch.intent)}")
    rows.append(f"learned_from: {_names(patch.learned_from)}")
    return "".join(f"{pad}{'- ' if n == 0 else '  '}{row}\n" for n, row in enumerate(rows))


def _items(patches: Sequence[Patch], indent: int = 2) -> str:
    return "".join(_item(p, indent) for p in sorted(patches, key=lambda p: p.id))


def render(mappings: Sequence[Patch], calibrations: Sequence[Patch]) -> str:
    """A whole patch file."""
    sections = [
        f"{name}:\n{_items(patches)}"
        for name, patches in ((MAPPINGS, mappings), (CALIBRATIONS, calibrations))
        if patches
    ]
    return HEADER + "\n".join(sections)


# ---- reading what is there ------------------------------------------------------------------


@dataclass
class _Found:
    path: Path
    item: yaml.MappingNode
    learned_from: yaml.Node | None
    key: yaml.Node | None  # learned_from's key
    ids: list[str] = field(default_factory=list)


@dataclass
class _File:
    path: Path
    text: str
    root: yaml.MappingNode | None
    edits: list[tuple[int, int, int, str]] = field(default_factory=list)  # start, order, end, new
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    def section(self, name: str) -> tuple[yaml.Node, yaml.Node] | None:
        if self.root is None:
            return None
        return next(((k, v) for k, v in self.root.value if k.value == name), None)

    def edited(self) -> str:
        text = self.text
        for start, _, end, new in sorted(self.edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text


def _read(path: Path) -> _File:
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text += "\n"
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise PatchFileError(f"{path}: not valid YAML{where}: {problem}") from exc
    if root is not None and not isinstance(root, yaml.MappingNode):
        raise PatchFileError(f"{path}: expected parameter_mappings: and calibrations: at the top")
    return _File(path, text, root)


def _existing(files: Sequence[_File]) -> dict[str, _Found]:
    found: dict[str, _Found] = {}
    for f in files:
        for name in (MAPPINGS, CALIBRATIONS):
            section = f.section(name)
            if section is None or not isinstance(section[1], yaml.SequenceNode):
                continue
            for item in section[1].value:
                if not isinstance(item, yaml.MappingNode):
                    continue
                fields = {k.value: (k, v) for k, v in item.value}
                pid = fields.get("id", (None, None))[1]
                if not isinstance(pid, yaml.ScalarNode) or pid.value in found:
                    continue
                key, value = fields.get("learned_from", (None, None))
                ids = _ids(value)
                found[pid.value] = _Found(f.path, item, value, key, ids)
    return found


def _ids(node: yaml.Node | None) -> list[str]:
    if isinstance(node, yaml.SequenceNode):
        return [str(n.value) for n in node.value if isinstance(n, yaml.ScalarNode)]
    return [str(node.value)] if isinstance(node, yaml.ScalarNode) and node.value else []


# ---- editing in place -----------------------------------------------------------------------


def _end(node: yaml.Node) -> int:
    """Where the text of a node ends (a block collection's end mark lies at the next token)."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        key, value = node.value[-1]
        empty = isinstance(value, yaml.ScalarNode) and value.value == "" and value.style is None
        return _end(key if empty else value)
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _end(node.value[-1])
    return int(node.end_mark.index)


def _line_after(text: str, index: int) -> int:
    if index > 0 and text[index - 1] == "\n":
        return index
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _after_colon(text: str, key: yaml.Node) -> int:
    return text.index(":", key.end_mark.index) + 1


def _grow(f: _File, found: _Found, ids: Sequence[str]) -> None:
    """Add log ids to an existing patch's learned_from."""
    new = _names([*found.ids, *ids])
    node = found.learned_from
    if node is None:
        at = _line_after(f.text, _end(found.item))
        f.edits.append((at, 0, at, f"{' ' * found.item.start_mark.column}learned_from: {new}\n"))
    elif found.key is not None and (
        (isinstance(node, yaml.ScalarNode) and node.value == "")
        or (isinstance(node, yaml.SequenceNode) and not node.flow_style)
    ):  # nothing, or a block list: the new list after the colon
        at = _after_colon(f.text, found.key)
        f.edits.append((at, 0, _end(node) if node.value else at, f" {new}"))
    else:
        f.edits.append((node.start_mark.index, 0, _end(node), new))


def _append(f: _File, name: str, order: int, patches: Sequence[Patch]) -> None:
    """Add new patches at the end of a section, or the section at the end of the file."""
    section = f.section(name)
    if section is None:
        blank = "\n" if f.text.strip() and not f.text.endswith("\n\n") else ""
        at = len(f.text)
        f.edits.append((at, order, at, f"{blank}{name}:\n{_items(patches)}"))
        return
    key, value = section
    if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
        at = _line_after(f.text, _end(value))
        f.edits.append((at, order, at, _items(patches, value.start_mark.column)))
    elif (isinstance(value, yaml.SequenceNode) and not value.value) or (
        isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null")
    ):  # [] or nothing: the items take the place of the value
        at = _after_colon(f.text, key)
        end = value.end_mark.index if value.value != "" else at
        f.edits.append((at, order, end, "\n" + _items(patches).rstrip("\n")))
    else:
        raise PatchFileError(
            f"{f.path}: charter learn adds to {name} written as a block list (- id: …), "
            "not to this one"
        )


def plan(
    directory: Path,
    mappings: Sequence[ParameterMapping],
    calibrations: Sequence[Calibration],
    *,
    target: str = LEARNED_FILE,
) -> list[Change]:
    """The files that change when the patches are merged into ``directory`` (none when every
    patch is there already, learned from the same entries)."""
    paths = sorted(p for p in directory.glob("*.yaml") if p.is_file()) if directory.is_dir() else []
    files = {p: _read(p) for p in paths}
    there = _existing(list(files.values()))
    new: dict[str, list[Patch]] = {MAPPINGS: [], CALIBRATIONS: []}
    learned: list[Patch] = [*mappings, *calibrations]
    for patch in learned:
        found = there.get(patch.id)
        if found is None:
            new[MAPPINGS if isinstance(patch, ParameterMapping) else CALIBRATIONS].append(patch)
            continue
        more = [r for r in patch.learned_from if r not in found.ids]
        if more:
            _grow(files[found.path], found, more)
            files[found.path].updated.append(patch.id)
    changes: list[Change] = []
    path = directory / target
    if (new[MAPPINGS] or new[CALIBRATIONS]) and path not in files:
        added = tuple(p.id for name in new for p in sorted(new[name], key=lambda p: p.id))
        changes.append(Change(path, None, render(new[MAPPINGS], new[CALIBRATIONS]), added))
    elif new[MAPPINGS] or new[CALIBRATIONS]:
        f = files[path]
        for order, name in enumerate((MAPPINGS, CALIBRATIONS)):
            if new[name]:
                _append(f, name, order + 1, new[name])
                f.added.extend(sorted(p.id for p in new[name]))
    for f in files.values():
        if f.edits:
            old = f.path.read_text(encoding="utf-8")
            changes.append(Change(f.path, old, f.edited(), tuple(f.added), tuple(f.updated)))
    return sorted(changes, key=lambda c: c.path)


def diff(changes: Sequence[Change], shown: Callable[[Path], str] = str) -> str:
    """The changes as one unified diff (``--- /dev/null`` for a new file)."""
    out: list[str] = []
    for c in changes:
        name = shown(c.path)
        old = c.old.splitlines(keepends=True) if c.old is not None else []
        lines = difflib.unified_diff(
            old,
            c.new.splitlines(keepends=True),
            "/dev/null" if c.old is None else _side("a", name),
            _side("b", name),
        )
        out += [
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        ]
    return "".join(out)


def _side(prefix: str, name: str) -> str:
    """``a/patches/learned.yaml`` as git writes it; an absolute path as it is."""
    return name if name.startswith("/") else f"{prefix}/{name}"


def apply(changes: Sequence[Change]) -> None:
    for c in changes:
        c.path.parent.mkdir(parents=True, exist_ok=True)
        c.path.write_text(c.new, encoding="utf-8")


def undo(changes: Sequence[Change]) -> None:
    """Put the files back as they were before ``apply``."""
    for c in changes:
        if c.old is None:
            c.path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # the directory, when apply made it
                c.path.parent.rmdir()
        else:
            c.path.write_text(c.old, encoding="utf-8")
