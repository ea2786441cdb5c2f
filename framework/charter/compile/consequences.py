"""What only follows from an earlier problem, per cause: the codes a file that did not parse
(by its kind) or a plugin that did not import makes meaningless. Those diagnostics are folded
under the file's CH001 (or CH002, CH004) or the plugin's CH200 (``charter.diagnostics.fold``).

A code is listed for a cause when its judgement needs what the cause took away: with no
goals.yaml every intent a conversation names is "unknown", with no skills/transfer.yaml every
call of it, with no responses.yaml the built-in templates stand in and may fail the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from charter.diagnostics import Diagnostic, fold

# kind of a pack file (charter.pack.schema's) -> the codes its absence explains
FILE_REACH: Mapping[str, frozenset[str]] = {
    # the pack's extends and requires are lost: its inherited rules
    "pack": frozenset({"CH030"}),
    # a ruleset's rules.yaml: the rules this pack inherits from it
    "rules": frozenset({"CH030"}),
    "goals": frozenset(
        {
            "CH305",
            "CH340",
            "CH341",
            "CH350",
            "CH361",
            "CH362",
            "CH367",
            "CH369",
            "CH385",
            "CH387",
            "CH389",
        }
    ),
    "responses": frozenset({"CH356", "CH369"}),
    "skill": frozenset({"CH322", "CH327", "CH363", "CH368", "CH369"}),
    "faq": frozenset({"CH322", "CH369"}),
    "fallbacks": frozenset({"CH322"}),
    "memory": frozenset({"CH313", "CH317"}),
}

# what a plugin that did not import takes away: the names it would have registered
PLUGIN_REACH = frozenset(
    {"CH025", "CH102", "CH103", "CH104", "CH310", "CH312", "CH323", "CH343", "CH353"}
)


def fold_unparsed(
    unparsed: Iterable[tuple[str, str]], diagnostics: Sequence[Diagnostic]
) -> list[Diagnostic]:
    """``diagnostics`` with what follows from each file of ``unparsed`` (kind, shown path)
    folded under the error that says why it did not parse."""
    out = list(diagnostics)
    for kind, path in unparsed:
        root = next((d for d in out if d.is_error and d.location.path == path), None)
        codes = FILE_REACH.get(kind, frozenset())
        if root is None or not codes:
            continue
        out = fold(out, root, _elsewhere(codes, path))
    return out


def _elsewhere(codes: frozenset[str], path: str) -> Callable[[Diagnostic], bool]:
    """A diagnostic of one of ``codes`` outside the file at ``path``."""
    return lambda d: d.code in codes and d.location.path != path


def fold_failed_plugins(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` with what a plugin that did not import explains folded under the first
    such plugin's CH200: which of several broken plugins would have registered a name is not
    known, and any of them is the line to fix first."""
    root = next((d for d in diagnostics if d.code == "CH200" and d.is_error), None)
    if root is None:
        return list(diagnostics)
    return fold(diagnostics, root, lambda d: d.code in PLUGIN_REACH)
