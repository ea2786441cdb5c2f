"""Scaffolds for ``charter new``: a pack; a pack with its skills as one project (``charter new
pack NAME --with-skills``); or a plugin distribution that ships its own pack.

Each file is a ``string.Template`` shipped as package data under ``templates/``, with a ``.tmpl``
suffix so that neither ruff, mypy, pytest nor ``charter validate`` mistakes a template for the
real thing. A scaffold is rendered completely in memory before anything is written: a refused
run writes nothing, and a template error cannot leave half a tree behind.

What is written must validate and pass its own tests unchanged (``tests/unit/cli/test_new.py``
and ``tests/acceptance/test_plugin_install.py`` hold the scaffolds to that).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Literal

from packaging.version import Version

from charter._version import __version__

# Stricter than a bare [a-z][a-z0-9-]*: the plugin's distribution name charter-NAME must be a
# valid project name (no trailing '-'), 'a--b' would normalise to the name of 'a-b', and a
# longer name would push the generated Python over the line length.
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_NAME = 32
NAME_RULE = (
    f"use at most {MAX_NAME} lowercase letters, digits and single '-', starting with a letter "
    "and not ending with '-' (e.g. acme or acme-insurance)"
)
_DIST_PREFIX = "charter-"
Kind = Literal["pack", "plugin", "project"]

# (template under templates/, destination under the scaffold's root; a template itself)
_PACK_FILES: tuple[tuple[str, str], ...] = (
    ("pack/pack.yaml.tmpl", "pack.yaml"),
    ("pack/rules.yaml.tmpl", "rules.yaml"),
)
_PLUGIN_FILES: tuple[tuple[str, str], ...] = (
    ("plugin/pyproject.toml.tmpl", "pyproject.toml"),
    ("plugin/README.md.tmpl", "README.md"),
    ("plugin/package/__init__.py.tmpl", "$package/__init__.py"),
    ("plugin/package/plugin.py.tmpl", "$package/plugin.py"),
    ("plugin/package/py.typed.tmpl", "$package/py.typed"),
    ("plugin/package/pack/pack.yaml.tmpl", "$package/packs/$name/pack.yaml"),
    ("plugin/package/pack/rules.yaml.tmpl", "$package/packs/$name/rules.yaml"),
    ("plugin/tests/test_plugin.py.tmpl", "tests/test_plugin.py"),
)
# A pack and the Python of its skills, one folder and one `pip install -e .`: the pack in
# pack/ (two folders deep, not four), the plugin package beside it, its unit tests in tests/.
_PROJECT_FILES: tuple[tuple[str, str], ...] = (
    ("project/pyproject.toml.tmpl", "pyproject.toml"),
    ("project/README.md.tmpl", "README.md"),
    ("project/pack/pack.yaml.tmpl", "pack/pack.yaml"),
    ("pack/rules.yaml.tmpl", "pack/rules.yaml"),
    ("project/pack/goals.yaml.tmpl", "pack/goals.yaml"),
    ("project/pack/skill.yaml.tmpl", "pack/skills/$skill.yaml"),
    ("project/pack/conversation.yaml.tmpl", "pack/tests/conversations/order_status.yaml"),
    ("project/package/__init__.py.tmpl", "$package/__init__.py"),
    ("project/package/plugin.py.tmpl", "$package/plugin.py"),
    ("plugin/package/py.typed.tmpl", "$package/py.typed"),
    ("project/tests/test_skills.py.tmpl", "tests/test_skills.py"),
)


class ScaffoldError(Exception):
    """A scaffold that cannot be written; the message says why and what to do instead."""


class InvalidName(ScaffoldError):
    """The NAME argument is not a name a pack or a plugin can have (a usage error)."""


@dataclass(frozen=True)
class Scaffold:
    """What ``charter new`` writes: ``root`` (a directory name) and the files below it."""

    kind: Kind
    name: str
    root: str
    files: tuple[tuple[str, str], ...]  # (POSIX path below root, content)


def check_name(name: str) -> None:
    """Raise ``InvalidName`` unless ``name`` is a lowercase slug."""
    if len(name) > MAX_NAME or NAME.fullmatch(name) is None:
        raise InvalidName(f"invalid name {name!r}: {NAME_RULE}")


def names(name: str) -> dict[str, str]:
    """Every spelling of ``name`` the templates use. Hyphens become underscores wherever the
    name must be a Python identifier or a DSL word (module, extractor, skill)."""
    module = name.replace("-", "_")
    return {
        "name": name,
        "module": module,
        "dist": f"{_DIST_PREFIX}{name}",
        "package": f"charter_{module}",
        "prefix": name.upper(),
        "extractor": f"{module}_order_id",
        "skill": f"{module}_order_status",
        "charter_spec": _charter_spec(),
    }


def _charter_spec() -> str:
    # what the scaffold was written against: a newer minor version may add DSL features it uses
    version = Version(__version__)
    return f">={version.major}.{version.minor}"


def _render(
    files: tuple[tuple[str, str], ...], values: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    templates = resources.files("charter.scaffold") / "templates"
    out = []
    for source, dest in files:
        text = (templates / source).read_text(encoding="utf-8")
        out.append((Template(dest).substitute(values), Template(text).substitute(values)))
    return tuple(out)


def pack_scaffold(name: str) -> Scaffold:
    """A pack NAME/ with three rules that need no plugin, each tested passing and failing."""
    check_name(name)
    values = names(name)
    return Scaffold("pack", name, name, _render(_PACK_FILES, values))


def project_scaffold(name: str) -> Scaffold:
    """A project NAME/: the pack NAME in pack/ with one skill contract (its cases, a goal that
    calls it, conversations), the skill's Python as a plugin beside it, and its unit tests."""
    check_name(name)
    return Scaffold("project", name, name, _render(_PROJECT_FILES, names(name)))


def plugin_scaffold(name: str) -> Scaffold:
    """A plugin distribution charter-NAME/: an extractor, a skill, a bundled pack, tests."""
    check_name(name)
    if name.startswith(_DIST_PREFIX):
        bare = name.removeprefix(_DIST_PREFIX)
        raise InvalidName(
            f"invalid name {name!r}: give the name without 'charter-' "
            f"(charter new plugin {bare} writes charter-{bare}/)"
        )
    values = names(name)
    return Scaffold("plugin", name, values["dist"], _render(_PLUGIN_FILES, values))


def write(scaffold: Scaffold, base: Path, *, force: bool = False) -> list[Path]:
    """Write the scaffold into ``base / scaffold.root``; return the paths written, in order.

    A target that exists and is not empty is refused (nothing is written) unless ``force``:
    then the scaffold's files are overwritten and any other file there is left alone.
    """
    target = base / scaffold.root
    if target.exists() and not target.is_dir():
        raise ScaffoldError(f"{target} exists and is not a directory")
    if not force and target.is_dir() and any(target.iterdir()):
        raise ScaffoldError(
            f"{target} already exists and is not empty; nothing was written "
            "(choose another name or --dir, or pass --force to overwrite the scaffold's files)"
        )
    written = []
    for relative, content in scaffold.files:
        path = target.joinpath(*relative.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
