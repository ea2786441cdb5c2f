"""Load a pack directory: read and validate its files, resolve ``extends``, merge rules by id.

Everything found wrong is reported (and loading goes on where it can), so that one
``charter validate`` run lists every problem of every file. The pieces: ``reading`` (one
file, once), ``extends`` (following extends), ``rules`` (a rules.yaml's rules and cases). A
file is read through its typed model (``charter.pack.typed``), which stands a default in for
what the schema rejected, so that a pack.yaml with a wrong value still names its parents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from charter._version import __version__
from charter.diagnostics import Diagnostic, Location, error, warning
from charter.pack.extends import Edge, cycle_error, inherit, resolve_extends
from charter.pack.layout import INTENTS_FILE, audit
from charter.pack.model import PackSource, RuleSource, patches_dir
from charter.pack.reading import display_path, read_file
from charter.pack.rules import read_cases, read_rules
from charter.pack.typed.learning import LearningFile
from charter.pack.typed.pack import PackFile
from charter.pack.typed.rules import RulesFile
from charter.pack.yamlsrc import LocatedDoc

__all__ = ["Loader", "display_path", "load_pack"]


@dataclass
class _Loaded:
    source: PackSource
    rules_at: dict[str, Location] = field(default_factory=dict)


@dataclass
class Loader:
    """Loads packs, remembering each one so a ruleset extended twice is read once."""

    installed_plugins: Mapping[str, str] = field(default_factory=dict)
    named_packs: Mapping[str, Path] = field(default_factory=dict)
    # installed, but failed to import or disabled: the plugin's own CH200 says why
    unloaded_plugins: Mapping[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _done: dict[Path, _Loaded | None] = field(default_factory=dict)
    # each extends being followed, where it is written; and those that close a cycle
    _edges: dict[Edge, Location] = field(default_factory=dict)
    _cut: set[Edge] = field(default_factory=set)
    # the files that exist but did not parse, by shown path: their kind
    _unparsed: dict[str, str] = field(default_factory=dict)

    def load(self, path: Path) -> PackSource | None:
        loaded = self._load(path.resolve(), [])
        return loaded.source if loaded else None

    # ---- one directory ----------------------------------------------------------------------

    def _read(self, path: Path, kind: str) -> LocatedDoc | None:
        shown = display_path(path)
        doc, diags = read_file(shown, kind)
        self.diagnostics.extend(diags)
        if doc is None:
            self._unparsed[shown] = kind
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
        meta = PackFile.read(pack_doc.data if pack_doc is not None else None)
        name = meta.name or root.name
        files: list[tuple[str, str]] = []
        if pack_doc:
            files.append((pack_doc.path, pack_doc.text))

        self._check_requires(meta, pack_doc)
        unparsed: list[tuple[str, str]] = []
        inherited, inherited_at, extends_names = self._extends(
            root, stack, meta, pack_doc, files, unparsed
        )

        rules, cases, rules_at = list(inherited), [], dict(inherited_at)
        rules_file = root / "rules.yaml"
        if rules_file.is_file():
            rules_doc = self._read(rules_file, "rules")
            if rules_doc is not None:
                files.append((rules_doc.path, rules_doc.text))
                own = RulesFile.read(rules_doc.data)
                rules = read_rules(
                    rules_doc, own, name, inherited_at, rules_at, rules, self.diagnostics
                )
                cases = read_cases(rules_doc, own, name)

        # the pack's own files, not inherited through extends
        docs = {
            kind: next(iter(self._read_all(root, f"{kind}.yaml", kind, files)), None)
            for kind in ("goals", "memory", "fallbacks", "faq", "learning", "responses")
        }
        skills = self._read_all(root / "skills", "*.yaml", "skill", files)
        learning = LearningFile.read(
            docs["learning"].data if docs["learning"] is not None else None
        )
        where = patches_dir(learning.patches_dir)  # None: CH348 in the learning stage
        patches = self._read_all(root / where, "*.yaml", "patches", files) if where else ()
        conversations = self._read_all(
            root / "tests" / "conversations", "*.yaml", "conversations", files
        )
        intents = next(iter(self._read_all(root / "tests", INTENTS_FILE, "intents", files)), None)
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

        here = display_path(root)
        mine = "" if here == "." else here + "/"
        unparsed += [(k, p) for p, k in self._unparsed.items() if p.startswith(mine)]
        source = PackSource(
            name=name,
            version=meta.version or "0",
            kind=meta.kind or "domain",
            root=root,
            description=meta.description,
            locale=meta.locale or "zh-CN",
            thresholds=meta.thresholds,
            messages=meta.messages,
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
            intents=intents,
            unparsed=tuple(unparsed),
        )
        loaded = _Loaded(source, rules_at)
        self._done[root] = loaded
        return loaded

    # ---- pieces -----------------------------------------------------------------------------

    def _extends(
        self,
        root: Path,
        stack: list[Path],
        meta: PackFile,
        pack_doc: LocatedDoc | None,
        files: list[tuple[str, str]],
        unparsed: list[tuple[str, str]],
    ) -> tuple[list[RuleSource], dict[str, Location], list[str]]:
        """The parents' rules, where each is defined, and the names of the packs extended
        (each parent's files are added to ``files``, those that did not parse to
        ``unparsed``)."""
        inherited: list[RuleSource] = []
        inherited_at: dict[str, Location] = {}
        extends_names: list[str] = []
        for i, target in enumerate(meta.extends):
            if target is None or pack_doc is None:
                continue
            at = pack_doc.loc(("extends", i))
            parent_root = resolve_extends(root, target, at, self.named_packs, self.diagnostics)
            if parent_root is None:
                continue
            if parent_root in stack or parent_root == root:
                chain = [*stack, root]
                self.diagnostics.append(cycle_error(chain, parent_root, at, self._edges, self._cut))
                continue
            self._edges[(root, parent_root)] = at
            parent = self._load(parent_root, [*stack, root])
            if parent is None or (root, parent_root) in self._cut:
                continue  # a pack of a cycle inherits nothing through it
            extends_names += [*parent.source.extends, parent.source.name]
            files.extend(f for f in parent.source.files if f not in files)
            unparsed.extend(u for u in parent.source.unparsed if u not in unparsed)
            inherit(
                parent.source.rules, parent.rules_at, inherited, inherited_at, at, self.diagnostics
            )
        return inherited, inherited_at, extends_names

    def _check_requires(self, meta: PackFile, doc: LocatedDoc | None) -> None:
        req = meta.requires
        if doc is None:
            return
        for i, plugin in enumerate(req.plugins):
            if plugin is None or plugin in self.installed_plugins:
                continue
            if plugin in self.unloaded_plugins:
                self.diagnostics.append(
                    error(
                        "CH025",
                        f"required plugin '{plugin}' is installed but did not load",
                        doc.loc(("requires", "plugins", i)),
                        "fix the plugin's own error (CH200); charter plugins shows it",
                    )
                )
            else:
                self.diagnostics.append(
                    error(
                        "CH025",
                        f"required plugin '{plugin}' is not installed",
                        doc.loc(("requires", "plugins", i)),
                        f"pip install {plugin}",
                    )
                )
        spec = req.charter
        if spec is not None:
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


def load_pack(
    path: Path,
    *,
    installed_plugins: Mapping[str, str] | None = None,
    named_packs: Mapping[str, Path] | None = None,
    unloaded_plugins: Mapping[str, str] | None = None,
) -> tuple[PackSource | None, list[Diagnostic]]:
    loader = Loader(
        dict(installed_plugins or {}), dict(named_packs or {}), dict(unloaded_plugins or {})
    )
    source = loader.load(path)
    return source, loader.diagnostics
