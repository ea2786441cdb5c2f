"""The typed model of a pack's intent test table (``tests/intents.yaml``, schema
``intents.json``): what the ``intent_tests`` compile stage (``charter.compile.intent_tests``)
reads, leniently (``_lenient``), after the schema has reported what is wrong with the file.

Phrases keep the file's indexes (None for an item that is no mapping), because the stage points
at ``("phrases", i, "intent")``. A key left out is None: ``intent: none`` (out of scope) is the
string ``"none"`` here, told apart from a phrase that expects no intent at all.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from charter.pack.typed._lenient import DocModel, Items, OptStr


def _str_values(value: Any) -> dict[str, str]:
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


StrValues = Annotated[dict[str, str], BeforeValidator(_str_values)]
"""Slot names to texts; an entry whose value is no string is left out (the schema said so)."""


class Phrase(DocModel):
    """One item of ``phrases:``."""

    say: OptStr = None
    intent: OptStr = None
    pending: OptStr = None
    of: OptStr = None
    act: OptStr = None
    slots: StrValues = Field(default_factory=dict)


class IntentsFile(DocModel):
    """A pack's ``tests/intents.yaml``."""

    phrases: Items[Phrase] = ()
