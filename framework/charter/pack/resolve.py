"""Where a pack given on a command line or in a configuration is: one resolver for every
command (``validate``, ``test``, ``fmt``, ``check``, ``chat``, ``skills``, ``learn``, ``health``
...) and the runtime (``Agent.from_pack``, ``charter serve``, the health report's ablation cases).

An argument is looked for in three places, and all three are always looked at:

* as a path: a pack directory, or its ``pack.yaml`` (any file stands for its directory), or a
  directory holding packs (every pack below it; hidden directories and build outputs such as
  ``build/``, ``dist/``, ``site-packages/`` and ``*.egg-info`` are left out);
* as a name, when the argument has no path separator: a pack directory NAME under
  ``domains/`` or ``rulesets/`` of the working directory or of any directory above it;
* as a name: the pack a plugin installed under that name (``charter plugins`` lists them).

The places are compared, never ranked. When they find the same pack — a pack whose project is
installed with ``pip install -e .`` is both a directory here and installed — it is that pack.
When they find different packs the argument is ambiguous: ``AmbiguousPack`` lists every
candidate, and each command reports them (CH009) instead of picking the nearest. A path says
which one is meant (``./telecom``, or the installed pack's directory).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from charter.pack.reading import display_path

PACK_FILE = "pack.yaml"
PACK_FOLDERS = ("domains", "rulesets")
# directories a search below a directory does not enter: what tools and builds put next to
# sources holds copies of packs (build/lib/..., an installed wheel), not packs of their own
_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})


@dataclass(frozen=True)
class Candidate:
    """One thing an argument can mean: a pack, or (a path to) a directory of packs."""

    path: Path  # the pack directory, or the directory holding packs
    how: str  # how it was found, for messages: "a directory", "installed by a plugin"
    packs: tuple[Path, ...]  # the pack directories it stands for

    def shown(self) -> str:
        return f"{display_path(self.path)} ({self.how})"

    def key(self) -> frozenset[Path]:
        return frozenset(p.resolve() for p in self.packs)


class AmbiguousPack(ValueError):
    """An argument that names more than one pack where one is meant: every candidate, what
    to say (``message``) and what to do (``hint``); ``str()`` is both."""

    def __init__(self, argument: str, choices: Sequence[Candidate], *, held: bool = False):
        self.argument = argument
        self.choices = tuple(choices)
        listed = ", ".join(c.shown() for c in self.choices)
        paths = " or ".join(as_argument(c.path) for c in self.choices)
        if held:  # one directory holding several packs, not several places
            self.message = f"'{argument}' holds {len(self.choices)} packs, not one: {listed}"
            self.hint = f"give one of them: {paths}"
        else:
            self.message = f"'{argument}' names {len(self.choices)} different packs: {listed}"
            self.hint = (
                f"give the one you mean by its path: {paths}; or give the packs different "
                "names (name: in pack.yaml)"
            )
        super().__init__(f"{self.message}: {self.hint}")


def as_argument(path: Path) -> str:
    """How to give ``path`` on a command line so that it is read as a path, not a name."""
    shown = display_path(path)
    if os.sep in shown or (os.altsep and os.altsep in shown):
        return shown
    return f".{os.sep}{shown}"


def is_name(argument: str) -> bool:
    """A bare word (``telecom``): looked up as a pack name too, not only as a path."""
    if argument in ("", ".", ".."):
        return False
    return os.sep not in argument and not (os.altsep and os.altsep in argument)


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in _SKIPPED or name.endswith(".egg-info")


def packs_below(directory: Path) -> list[Path]:
    """The pack directories at or below ``directory`` (itself, when it has a pack.yaml),
    sorted; hidden directories and build outputs are not entered."""
    if (directory / PACK_FILE).is_file():
        return [directory]
    found = []
    for here, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not _skipped(d)]
        if PACK_FILE in files:
            found.append(Path(here))
    return sorted(found)


def candidates(argument: str, installed: Mapping[str, Path] | None = None) -> list[Candidate]:
    """Everything ``argument`` can mean, one candidate per distinct set of packs, in the
    order: the path, ``domains/``/``rulesets/`` from here upwards, the installed pack."""
    found: list[Candidate] = []
    path = Path(argument)
    if path.is_file():
        path = path.parent
    if path.is_dir():
        packs = packs_below(path)
        if packs:
            how = "a directory" if packs == [path] else "a directory of packs"
            found.append(Candidate(path, how, tuple(packs)))
    if is_name(argument):
        here = Path.cwd()
        for base in [here, *here.parents]:
            for folder in PACK_FOLDERS:
                pack = base / folder / argument
                if (pack / PACK_FILE).is_file():
                    found.append(Candidate(pack, f"under {folder}/", (pack,)))
        if installed and argument in installed:
            pack = installed[argument]
            found.append(Candidate(pack, "installed by a plugin", (pack,)))
    return _distinct(found)


def _distinct(found: list[Candidate]) -> list[Candidate]:
    """Each set of packs once; a candidate whose packs another candidate holds too (the pack
    of a directory of packs, found again by name) is that candidate."""
    kept: list[Candidate] = []
    for c in found:
        if any(c.key() <= k.key() for k in kept):
            continue
        kept = [k for k in kept if not k.key() <= c.key()]
        kept.append(c)
    return kept


def resolve_packs(argument: str, installed: Mapping[str, Path] | None = None) -> list[Path]:
    """The pack directories ``argument`` stands for, for a command that takes several (empty
    when it names nothing); ``AmbiguousPack`` when it names different packs in different
    places."""
    found = candidates(argument, installed)
    if len(found) > 1:
        raise AmbiguousPack(argument, found)
    return list(found[0].packs) if found else []


def resolve_domain(name: str, installed: Mapping[str, Path] | None = None) -> Path | None:
    """The one pack directory ``name`` stands for, or None when it names none;
    ``AmbiguousPack`` when it names several (in different places, or a directory holding
    more than one)."""
    found = candidates(name, installed)
    if len(found) > 1:
        raise AmbiguousPack(name, found)
    if not found:
        return None
    (only,) = found
    if len(only.packs) > 1:
        raise AmbiguousPack(
            name, [Candidate(p, "a directory", (p,)) for p in only.packs], held=True
        )
    return only.packs[0]
