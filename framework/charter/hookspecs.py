"""Every hook Charter calls, typed and documented (the model is pytest's ``hookspec.py``).

Built-in behaviour registers through these same hooks (see ``charter.builtin``); third-party
plugins register through the entry-point group ``charter``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from charter.protocols import Extractor, Predicate, Repair

hookspec = pluggy.HookspecMarker("charter")
hookimpl = pluggy.HookimplMarker("charter")


# -- registration: called once when a plugin manager builds its registry --------------------


@hookspec
def charter_register_extractors() -> Sequence[Extractor]:
    """Return extractors to make available to the rule DSL.

    Called once per plugin manager, when the registry is built. Each extractor's ``name`` is the
    word rules use (``every money in output ...``); two plugins registering the same name is an
    error (CH200) naming both.
    """


@hookspec
def charter_register_predicates() -> Sequence[Predicate]:
    """Return predicates usable in the DSL as ``name(subject, args...)``.

    Called once per plugin manager. A predicate must be pure and total: it returns a bool for
    every text and never raises.
    """


@hookspec
def charter_register_repairs() -> Sequence[Repair]:
    """Return repairs usable as ``on_fail: fix <name> <args>``.

    Called once per plugin manager. The built-in ``append``, ``prepend``, ``replace`` and
    ``reformat`` come through this hook too.
    """
