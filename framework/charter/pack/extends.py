"""Following a pack's ``extends``: where each target is, the cycles, and the inherited rules.

A target is a path relative to the pack or to a directory above it (also under a
``rulesets`` directory there), or a name registered by a plugin (CH020 when none is found).
A cycle is reported once (CH021) and then cut; two parents defining one rule id clash (CH022).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from charter.diagnostics import Diagnostic, Location, did_you_mean, error
from charter.pack.model import RuleSource
from charter.pack.reading import display_path

Edge = tuple[Path, Path]


def resolve_extends(
    root: Path,
    target: str,
    at: Location,
    named_packs: Mapping[str, Path],
    diagnostics: list[Diagnostic],
) -> Path | None:
    """A path relative to the pack, or to any directory above it, or a registered name."""
    candidates = [root / target, *(parent / target for parent in root.parents)]
    candidates += [parent / "rulesets" / target for parent in [root, *root.parents]]
    for c in candidates:
        try:
            if (c / "pack.yaml").is_file():
                return c.resolve()
        except OSError:  # a name too long for the file system is simply not a pack
            continue
    if target in named_packs:
        return named_packs[target].resolve()
    known = sorted(named_packs) + _nearby_rulesets(root)
    diagnostics.append(
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


def _nearby_rulesets(root: Path) -> list[str]:
    out: list[str] = []
    for parent in [root, *root.parents]:
        d = parent / "rulesets"
        if d.is_dir():
            out += [
                f"rulesets/{p.name}" for p in sorted(d.iterdir()) if (p / "pack.yaml").is_file()
            ]
    return out


def cycle_error(
    chain: list[Path], back: Path, at: Location, edges: dict[Edge, Location], cut: set[Edge]
) -> Diagnostic:
    """CH021 once per cycle, whichever of its packs loading started from: at the extends
    of its first pack by path. The edges of the cycle are added to ``cut``: every pack of the
    cycle is then loaded without them, so none of them reports rules clashing with another's
    (CH023). ``edges`` holds where each extends being followed is written."""
    members = chain[chain.index(back) :]
    cycle = list(zip(members, [*members[1:], back], strict=True))
    edges[cycle[-1]] = at
    cut.update(cycle)
    first = min(range(len(members)), key=lambda i: display_path(members[i]))
    turn = [*members[first:], *members[:first]]
    names = " -> ".join(p.name for p in [*turn, turn[0]])
    return error(
        "CH021",
        f"extends cycle: {names}",
        edges[cycle[first]],
        "a pack may not extend itself, directly or through others",
    )


def inherit(
    rules: Sequence[RuleSource],
    rules_at: Mapping[str, Location],
    inherited: list[RuleSource],
    inherited_at: dict[str, Location],
    at: Location,
    diagnostics: list[Diagnostic],
) -> None:
    """Add a parent's ``rules`` (defined at ``rules_at``) to those inherited so far, from the
    extends written at ``at``."""
    for rule in rules:
        if any(r.id == rule.id and r.origin == rule.origin for r in inherited):
            continue  # the same ruleset reached twice (diamond)
        clash = next((r for r in inherited if r.id == rule.id), None)
        if clash is not None:
            diagnostics.append(
                error(
                    "CH022",
                    f"rule id '{rule.id}' is defined by both '{clash.origin}' and '{rule.origin}'",
                    at,
                    "override it in this pack with override: true to choose one",
                )
            )
            continue
        inherited.append(rule)
        inherited_at[rule.id] = rules_at.get(rule.id, rule.at.loc())
