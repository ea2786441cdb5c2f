"""What each registration hook must return, and how a returned object is named and checked.

``charter.plugins.registration`` calls every plugin's implementation of each registration hook;
this module says, per hook, what a valid object is (a Protocol of ``charter.contracts``: ``rules``
for extractors, predicates, repairs and formatters, ``skills``, ``models``, ``storage``,
``pii``), how it is named, and how ``charter_register_packs`` results (bare paths or
``PackRef``) become named pack directories.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from charter.contracts.models import EmbedderFactory, LLMBackend
from charter.contracts.packs import PackRef
from charter.contracts.pii import PiiRecognizer
from charter.contracts.rules import Extractor, Formatter, Predicate, Repair
from charter.contracts.skills import Skill
from charter.contracts.storage import STORE_KINDS, StoreFactory


@dataclass(frozen=True)
class Kind:
    hook: str
    field: str  # the Registry field
    what: str  # "extractor", used in messages
    valid: Callable[[Any], bool]
    shape: str  # what a valid object has, for the hint


def _named(proto: type) -> Callable[[Any], bool]:
    return lambda o: isinstance(o, proto) and isinstance(getattr(o, "name", None), str)


def _store(o: Any) -> bool:
    return _named(StoreFactory)(o) and getattr(o, "kind", None) in STORE_KINDS


KINDS: tuple[Kind, ...] = (
    Kind(
        "charter_register_extractors",
        "extractors",
        "extractor",
        _named(Extractor),
        "name, value_kind, has_units, extract(text) and canonical(item) "
        "(charter.contracts.rules.Extractor)",
    ),
    Kind(
        "charter_register_predicates",
        "predicates",
        "predicate",
        _named(Predicate),
        "name, params and __call__(text, *args) (charter.contracts.rules.Predicate)",
    ),
    Kind(
        "charter_register_repairs",
        "repairs",
        "repair",
        _named(Repair),
        "name, check_args(args, extractors) and apply(args, rin) (charter.contracts.rules.Repair)",
    ),
    Kind(
        "charter_register_formatters",
        "formatters",
        "formatter",
        _named(Formatter),
        "name and format(value) (charter.contracts.rules.Formatter)",
    ),
    Kind(
        "charter_register_skills",
        "skills",
        "skill",
        _named(Skill),
        "name, description and __call__(args) (charter.contracts.skills.Skill)",
    ),
    Kind(
        "charter_register_packs",
        "packs",
        "pack",
        lambda o: isinstance(o, PackRef | Path | str),
        "a PackRef(name, path) or the path of a directory with a pack.yaml",
    ),
    Kind(
        "charter_register_llm_backends",
        "llm_backends",
        "LLM backend",
        _named(LLMBackend),
        "name and create(options) (charter.contracts.models.LLMBackend)",
    ),
    Kind(
        "charter_register_embedders",
        "embedders",
        "embedder",
        _named(EmbedderFactory),
        "name and create(options) (charter.contracts.models.EmbedderFactory)",
    ),
    Kind(
        "charter_register_stores",
        "stores",
        "store",
        _store,
        f"name, kind (one of {', '.join(STORE_KINDS)}) and create(options) "
        "(charter.contracts.storage.StoreFactory)",
    ),
    Kind(
        "charter_register_pii_recognizers",
        "pii_recognizers",
        "PII recognizer",
        _named(PiiRecognizer),
        "name, kind, placeholder and recognize(text) (charter.contracts.pii.PiiRecognizer)",
    ),
)
KIND_BY_HOOK = {k.hook: k for k in KINDS}


def plugin_dir(plugin: object) -> Path | None:
    """The directory of the module that defines the plugin (relative pack paths start here)."""
    target = plugin if inspect.ismodule(plugin) else type(plugin)
    try:
        return Path(inspect.getfile(target)).resolve().parent
    except (TypeError, OSError):
        return None


def pack_ref(obj: PackRef | Path | str, base: Path | None) -> PackRef | str:
    """The named pack directory, or a message saying what is wrong with it."""
    path = obj.path if isinstance(obj, PackRef) else Path(obj)
    if not path.is_absolute():
        if base is None:
            return f"the relative pack path '{path}' has no plugin directory to start from"
        path = base / path
    manifest = path / "pack.yaml"
    if not manifest.is_file():
        return f"the pack directory '{path}' has no pack.yaml"
    if isinstance(obj, PackRef):
        return PackRef(obj.name, path)
    import yaml  # here: only a bare path needs its pack.yaml read, and start-up pays for yaml

    try:
        doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return f"cannot read the name of the pack in '{path}': {type(exc).__name__}"
    name = doc.get("name") if isinstance(doc, dict) else None
    if not isinstance(name, str) or not name:
        return f"'{manifest}' has no name; give it one or return PackRef(name, path)"
    return PackRef(name, path)


def name_of(kind: Kind, obj: Any) -> str:
    if kind.field == "packs":
        assert isinstance(obj, PackRef)
        return obj.name
    return str(obj.name)
