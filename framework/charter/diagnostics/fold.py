"""One mistake, one root diagnostic: what only follows from an earlier problem is folded under
it, so that an author sees the line to change first and not a screen of echoes of it.

A file that did not parse makes every "unknown intent" of the files that name its intents a
consequence; a plugin that did not import makes every "unknown extractor" one. Who knows the
cause picks the root and says which diagnostics follow from it (``fold``); the renderers show a
root with a count of its consequences, and ``--all-consequences`` lists them (``unfold``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from charter.diagnostics.model import Diagnostic


def fold(
    diagnostics: Iterable[Diagnostic], root: Diagnostic, follows: Callable[[Diagnostic], bool]
) -> list[Diagnostic]:
    """``diagnostics`` with those ``follows`` accepts moved under ``root`` (which is added when
    it is not among them). Nothing is moved under a root that is itself a consequence."""
    bare = replace(root, consequences=())
    kept: list[Diagnostic] = []
    moved: list[Diagnostic] = list(root.consequences)
    for d in diagnostics:
        if replace(d, consequences=()) == bare:
            moved.extend(d.consequences)
        elif follows(d):
            moved.extend([replace(d, consequences=()), *d.consequences])
        else:
            kept.append(d)
    return [*kept, replace(bare, consequences=tuple(moved))] if moved else [*kept, bare]


def unfold(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Every diagnostic, the consequences beside their roots (``--all-consequences``)."""
    out: list[Diagnostic] = []
    for d in diagnostics:
        out.append(replace(d, consequences=()))
        out.extend(unfold(d.consequences))
    return out


def count(diagnostics: Iterable[Diagnostic]) -> int:
    """How many consequences are folded under ``diagnostics``."""
    return sum(len(d.consequences) for d in diagnostics)
