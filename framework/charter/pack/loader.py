"""Load a pack directory: read and validate its files, resolve ``extends``, merge rules by id.

Everything found wrong is reported (and loading goes on where it can), so that one
``charter validate`` run lists every problem of every file.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from charter._version import __version__
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.pack.layout import audit
from charter.pack.model import (
    DEFAULT_MESSAGES,
    DEFAULT_THRESHOLDS,
    CaseSource,
    Located,
    PackSource,
    RuleSource,
    patches_dir,
)
from charter.pack.schema import validate
from charter.pack.yamlsrc import LocatedDoc, load_yaml


def display_path(path: Path) -> str:
    """Paths in diagnostics are relative to the working directory when they are below it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(absolute)


@dataclass
class _Loaded:
    source: PackSource
    rules_at: dict[str, Location] = field(default_factory=dict)


_Read = tuple[LocatedDoc | None, tuple[Diagnostic, ...]]
# Process-wide: a ruleset extended by several packs is parsed and validated once. Keyed by the
# shown path and the kind, holding the bytes it was read from, so an edited file is read again
# (however quickly it was edited) and each file keeps one entry.
_READS: dict[tuple[str, str], tuple[bytes, _Read]] = {}
_MAX_READS = 1024


def _read_file(name: str, kind: str) -> _Read:
    """``load_yaml`` and ``validate`` of one file, remembered while its bytes stay the same."""
    try:
        raw = Path(name).read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raw, text = b"", None  # load_yaml reports it
    hit = _READS.get((name, kind))
    if text is not None and hit is not None and hit[0] == raw:
        return hit[1]
    doc, diags = load_yaml(name, text)
    if doc is not None:
        diags = [*diags, *validate(doc, kind)]
    result = doc, tuple(diags)
    if text is not None:
        if len(_READS) >= _MAX_READS:
            del _READS[next(iter(_READS))]
        _READS[(name, kind)] = raw, result
    return result


@dataclass
class Loader:
    """Loads packs, remembering each one so a ruleset extended twice is read once."""

    installed_plugins: Mapping[str, str] = field(default_factory=dict)
    named_packs: Mapping[str, Path] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _done: dict[Path, _Loaded | None] = field(default_factory=dict)
    # each extends being followed, where it is written; and those that close a cycle
    _edges: dict[tuple[Path, Path], Location] = field(default_factory=dict)
    _cut: set[tuple[Path, Path]] = field(default_factory=set)

    def load(self, path: Path) -> PackSource | None:
        loaded = self._load(path.resolve(), [])
        return loaded.source if loaded else None

    # ---- one directory ----------------------------------------------------------------------

    def _read(self, path: Path, kind: str) -> LocatedDoc | None:
        doc, diags = _read_file(display_path(path), kind)
        self.diagnostics.extend(diags)
        return doc

    def _read_all(
        self, directory: Path, pattern: str, kind: str, files: list[tuple[str, str]]
    ) -> tuple[LocatedDoc, ...]:
        """The files of ``directory`` matching ``pattern``, by name (each added to ``files``)."""
        paths = sorted(p for p in directory.glob(pattern) if p.is_file())
        docs = [self._read(path, kind) for path in paths]
        files.extend((doc.path, doc.text) for doc in docs if doc is not None)
        return tuple(doc for doc in docs if doc is not None)

    def _load(self, root: Path, stack: list[Path]) -> _Loaded | None:
        if root in self._done:
            return self._done[root]
        pack_file = root / "pack.yaml"
        if not pack_file.is_file():
            self.diagnostics.append(
                error(
                    "CH004",
                    "no pack.yaml in this directory",
                    Location(display_path(root)),
                    "a pack is a directory with pack.yaml and rules.yaml; see docs/authoring.md",
                )
            )
            self._done[root] = None
            return None
        self._done[root] = None  # provisional, guards against cycles we failed to detect
        seen = len(self.diagnostics)
        pack_doc = self._read(pack_file, "pack")
        meta: dict[str, Any] = pack_doc.data if pack_doc and isinstance(pack_doc.data, dict) else {}
        name = _str(meta.get("name")) or root.name
        files: list[tuple[str, str]] = []
        if pack_doc:
            files.append((pack_doc.path, pack_doc.text))

        self._check_requires(meta, pack_doc)
        inherited: list[RuleSource] = []
        inherited_at: dict[str, Location] = {}
        extends_names: list[str] = []
        for i, target in enumerate(_list(meta.get("extends"))):
            if not isinstance(target, str) or pack_doc is None:
                continue
            at = pack_doc.loc(("extends", i))
            parent_root = self._resolve_extends(root, target, at)
            if parent_root is None:
                continue
            if parent_root in stack or parent_root == root:
                self._cycle([*stack, root], parent_root, at)
                continue
            self._edges[(root, parent_root)] = at
            parent = self._load(parent_root, [*stack, root])
            if parent is None or (root, parent_root) in self._cut:
                continue  # a pack of a cycle inherits nothing through it
            extends_names += [*parent.source.extends, parent.source.name]
            files.extend(f for f in parent.source.files if f not in files)
            for rule in parent.source.rules:
                if any(r.id == rule.id and r.origin == rule.origin for r in inherited):
                    continue  # the same ruleset reached twice (diamond)
                clash = next((r for r in inherited if r.id == rule.id), None)
                if clash is not None:
                    self.diagnostics.append(
                        error(
                            "CH022",
                            f"rule id '{rule.id}' is defined by both '{clash.origin}' "
                            f"and '{rule.origin}'",
                            at,
                            "override it in this pack with override: true to choose one",
                        )
                    )
                    continue
                inherited.append(rule)
                inherited_at[rule.id] = parent.rules_at.get(rule.id, rule.at.loc())

        rules, cases, rules_at = list(inherited), [], dict(inherited_at)
        rules_file = root / "rules.yaml"
        if rules_file.is_file():
            rules_doc = self._read(rules_file, "rules")
            if rules_doc is not None:
                files.append((rules_doc.path, rules_doc.text))
                own = self._rules(rules_doc, name, inherited_at, rules_at, rules)
                rules = own
                cases = self._cases(rules_doc, name)

        # the pack's own files, not inherited through extends
        docs = {
            kind: next(iter(self._read_all(root, f"{kind}.yaml", kind, files)), None)
            for kind in ("goals", "memory", "fallbacks", "faq", "learning", "responses")
        }
        skills = self._read_all(root / "skills", "*.yaml", "skill", files)
        learning = _dict(docs["learning"].data if docs["learning"] is not None else None)
        where = patches_dir(learning.get("patches_dir"))  # None: CH348 in the learning stage
        patches = self._read_all(root / where, "*.yaml", "patches", files) if where else ()
        conversations = self._read_all(
            root / "tests" / "conversations", "*.yaml", "conversations", files
        )
        unread = audit(root, display_path(root), where)
        self.diagnostics.extend(unread)
        # a pack of goals or skills alone may leave the answers to the rulesets of the packs
        # that use it; a rules.yaml without rules, or a pack.yaml alone, is a mistake
        bare = not (skills or conversations or patches or any(docs.values()))
        # (not when something already explains it: a rules.yaml that does not parse, a cycle,
        # a rules.yml not read)
        failed = bool(unread) or any(d.is_error for d in self.diagnostics[seen:])
        if not rules and pack_doc is not None and (rules_file.exists() or bare) and not failed:
            self.diagnostics.append(
                warning(
                    "CH008",
                    f"pack '{name}' has no rules: every answer would pass unchecked",
                    pack_doc.loc(()),
                    "write rules in rules.yaml, or extend a ruleset (extends: [...])",
                )
            )

        source = PackSource(
            name=name,
            version=_str(meta.get("version")) or "0",
            kind=_str(meta.get("kind")) or "domain",
            root=root,
            description=_str(meta.get("description")),
            locale=_str(meta.get("locale")) or "zh-CN",
            thresholds=_thresholds(meta.get("thresholds")),
            messages={**DEFAULT_MESSAGES, **_dict(meta.get("messages"))},
            rules=tuple(rules),
            cases=tuple(cases),
            extends=tuple(dict.fromkeys(extends_names)),
            files=tuple(files),
            goals=docs["goals"],
            memory=docs["memory"],
            skills=skills,
            fallbacks=docs["fallbacks"],
            faq=docs["faq"],
            learning=docs["learning"],
            responses=docs["responses"],
            patches=patches,
            conversations=conversations,
        )
        loaded = _Loaded(source, rules_at)
        self._done[root] = loaded
        return loaded

    # ---- pieces -----------------------------------------------------------------------------

    def _cycle(self, chain: list[Path], back: Path, at: Location) -> None:
        """CH021 once per cycle, whichever of its packs loading started from: at the extends
        of its first pack by path. Every pack of the cycle is then loaded without the extends
        of the cycle, so none of them reports rules clashing with another's (CH023)."""
        members = chain[chain.index(back) :]
        edges = list(zip(members, [*members[1:], back], strict=True))
        self._edges[edges[-1]] = at
        self._cut.update(edges)
        first = min(range(len(members)), key=lambda i: display_path(members[i]))
        turn = [*members[first:], *members[:first]]
        names = " -> ".join(p.name for p in [*turn, turn[0]])
        self.diagnostics.append(
            error(
                "CH021",
                f"extends cycle: {names}",
                self._edges[edges[first]],
                "a pack may not extend itself, directly or through others",
            )
        )

    def _resolve_extends(self, root: Path, target: str, at: Location) -> Path | None:
        """A path relative to the pack, or to any directory above it, or a registered name."""
        candidates = [root / target, *(parent / target for parent in root.parents)]
        candidates += [parent / "rulesets" / target for parent in [root, *root.parents]]
        for c in candidates:
            try:
                if (c / "pack.yaml").is_file():
                    return c.resolve()
            except OSError:  # a name too long for the file system is simply not a pack
                continue
        if target in self.named_packs:
            return self.named_packs[target].resolve()
        known = sorted(self.named_packs) + _nearby_rulesets(root)
        self.diagnostics.append(
            error(
                "CH020",
                f"unknown extends target '{target}'",
                at,
                did_you_mean(target, known)
                or "give a path to a directory with a pack.yaml, "
                "relative to this pack or a directory above it",
            )
        )
        return None

    def _check_requires(self, meta: Mapping[str, Any], doc: LocatedDoc | None) -> None:
        req = _dict(meta.get("requires"))
        if doc is None:
            return
        for i, plugin in enumerate(_list(req.get("plugins"))):
            if isinstance(plugin, str) and plugin not in self.installed_plugins:
                self.diagnostics.append(
                    error(
                        "CH025",
                        f"required plugin '{plugin}' is not installed",
                        doc.loc(("requires", "plugins", i)),
                        f"pip install {plugin}",
                    )
                )
        spec = req.get("charter")
        if isinstance(spec, str):
            at = doc.loc(("requires", "charter"))
            try:
                ok = Version(__version__) in SpecifierSet(spec)
            except InvalidSpecifier:
                return  # the schema's format check reports it (CH013)
            if not ok:
                self.diagnostics.append(
                    error(
                        "CH026",
                        f"pack requires charter {spec}, but {__version__} is installed",
                        at,
                        f"pip install 'charter{spec}'",
                    )
                )

    def _rules(
        self,
        doc: LocatedDoc,
        origin: str,
        inherited_at: Mapping[str, Location],
        rules_at: dict[str, Location],
        inherited: list[RuleSource],
    ) -> list[RuleSource]:
        merged = list(inherited)
        data = doc.data if isinstance(doc.data, dict) else {}
        own_seen: dict[str, Location] = {}
        for i, raw in enumerate(_list(data.get("rules"))):
            if not isinstance(raw, dict):
                continue
            rid, check, on_fail = raw.get("id"), raw.get("check"), raw.get("on_fail")
            if not (isinstance(rid, str) and isinstance(check, str) and isinstance(on_fail, str)):
                continue  # the schema stage reported it
            id_loc = doc.loc(("rules", i, "id"))
            if rid in own_seen:
                first = own_seen[rid]
                self.diagnostics.append(
                    error(
                        "CH022",
                        f"rule id '{rid}' defined twice (first at line {first.line})",
                        id_loc,
                        "rename one of them, or merge them into one rule",
                    )
                )
                continue
            own_seen[rid] = id_loc
            when = raw.get("when")
            unfixed = raw.get("on_unfixed")
            rule = RuleSource(
                id=rid,
                describe=_str(raw.get("describe")),
                check=check,
                on_fail=on_fail,
                origin=origin,
                at=Located(doc, ("rules", i)),
                when=when if isinstance(when, str) else None,
                message=_str(raw.get("message")),
                on_unfixed=unfixed if isinstance(unfixed, str) else None,
                override=raw.get("override") is True,
                tags=tuple(t for t in _list(raw.get("tags")) if isinstance(t, str)),
            )
            pos = next((k for k, r in enumerate(merged) if r.id == rid), None)
            if pos is None:
                if rule.override:
                    self.diagnostics.append(
                        warning(
                            "CH024",
                            f"rule '{rid}' has override: true but no inherited rule '{rid}'",
                            doc.key_loc(("rules", i, "override")),
                            "remove override: true, or check the id and the pack's extends",
                        )
                    )
                merged.append(rule)
            elif not rule.override:
                parent = merged[pos]
                self.diagnostics.append(
                    error(
                        "CH023",
                        f"rule '{rid}' is already defined by '{parent.origin}' "
                        f"({inherited_at.get(rid, parent.at.loc())})",
                        id_loc,
                        "add override: true to replace the inherited rule, or choose another id",
                    )
                )
                continue  # the inherited rule stays, and so does where it is defined
            else:
                merged[pos] = rule
            rules_at[rid] = id_loc
        return merged

    def _cases(self, doc: LocatedDoc, origin: str) -> list[CaseSource]:
        data = doc.data if isinstance(doc.data, dict) else {}
        # a rule left out for its schema error (CH010, CH011) is no unknown rule (CH030)
        unloaded = {
            raw["id"]
            for raw in _list(data.get("rules"))
            if isinstance(raw, dict)
            and isinstance(raw.get("id"), str)
            and not (isinstance(raw.get("check"), str) and isinstance(raw.get("on_fail"), str))
        }

        def named(raw: dict[str, Any], key: str) -> tuple[str, ...]:
            return tuple(r for r in _list(raw.get(key)) if isinstance(r, str) and r not in unloaded)

        out = []
        for i, raw in enumerate(_list(data.get("tests"))):
            if not isinstance(raw, dict) or not isinstance(raw.get("output"), str):
                continue
            verdict, fixed = raw.get("verdict"), raw.get("fixed")
            out.append(
                CaseSource(
                    name=_str(raw.get("name")) or f"case {i + 1}",
                    output=raw["output"],
                    origin=origin,
                    at=Located(doc, ("tests", i)),
                    input=_str(raw.get("input")),
                    context=_dict(raw.get("context")),
                    expect_pass=named(raw, "pass"),
                    expect_fail=named(raw, "fail"),
                    verdict=verdict if isinstance(verdict, str) else None,
                    fixed=fixed if isinstance(fixed, str) else None,
                )
            )
        return out


def _nearby_rulesets(root: Path) -> list[str]:
    out: list[str] = []
    for parent in [root, *root.parents]:
        d = parent / "rulesets"
        if d.is_dir():
            out += [
                f"rulesets/{p.name}" for p in sorted(d.iterdir()) if (p / "pack.yaml").is_file()
            ]
    return out


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _list(v: Any) -> Sequence[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


# what pack.json allows for each threshold; a value outside (CH010 / CH013 said so) is replaced
# by the default, so that the stages after the schema never read a string or a huge number
_THRESHOLD_RANGE: Mapping[str, tuple[type, float, float]] = {
    "uncertainty": (float, 0.0, 1.0),
    "max_retries": (int, 0, 10),
    "retrieval_top_k": (int, 1, 50),
}


def _thresholds(v: Any) -> dict[str, float | int]:
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in _dict(v).items():
        kind, low, high = _THRESHOLD_RANGE.get(key, (float, -math.inf, math.inf))
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if kind is int and not isinstance(value, int):
            number = False
        if number and math.isfinite(value) and low <= value <= high:
            out[key] = value
    return out


def load_pack(
    path: Path,
    *,
    installed_plugins: Mapping[str, str] | None = None,
    named_packs: Mapping[str, Path] | None = None,
) -> tuple[PackSource | None, list[Diagnostic]]:
    loader = Loader(dict(installed_plugins or {}), dict(named_packs or {}))
    source = loader.load(path)
    return source, loader.diagnostics
