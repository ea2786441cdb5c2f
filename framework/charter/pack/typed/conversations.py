"""The typed model of a scripted conversations file (``tests/conversations/*.yaml``, schema
``conversations.json``): what the conversations stage (``charter.compile.conversations``) reads,
leniently (``_lenient``), after the schema has reported what is wrong with the file.

Conversations and turns keep the file's indexes (None for an item that is no mapping), because
the stage points at ``("conversations", i, "turns", j, "expect", ...)``. An expectation left
out is None, not empty: ``skills: []`` expects no skill call, no ``skills:`` expects nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

from charter.pack.typed._lenient import DocModel, Items, OptBool, OptInt, OptStr, Sub


def _texts(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return None


def _list_texts(value: Any) -> tuple[str, ...] | None:
    return _texts(value) if isinstance(value, list) else None


def _str_values(value: Any) -> dict[str, str]:
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _map_values(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, dict)}


Texts = Annotated[tuple[str, ...] | None, BeforeValidator(_texts)]
"""A text or a list of texts, as a tuple of its strings; None when it is neither."""

ListedTexts = Annotated[tuple[str, ...] | None, BeforeValidator(_list_texts)]
"""The strings of a list; None when the value is no list. Other items are dropped, and so
item ``k`` of the tuple is the ``k``-th string of the file's list."""

StrValues = Annotated[dict[str, str], BeforeValidator(_str_values)]
"""Names to texts; an entry whose value is no string is left out (the schema reported it)."""

MapValues = Annotated[dict[str, dict[str, Any]], BeforeValidator(_map_values)]
"""Names to mappings as written; an entry whose value is no mapping is left out."""


class Expect(DocModel):
    """What a turn must show."""

    # model_calls is the file's key, not one of pydantic's model_ methods
    model_config = ConfigDict(protected_namespaces=())

    reply: OptStr = None
    contains: Texts = None
    not_contains: Texts = None
    matches: OptStr = None
    responses: ListedTexts = None
    events: ListedTexts = None
    verdict: OptStr = None
    answered_by: OptStr = None
    goals: StrValues = Field(default_factory=dict)
    slots: MapValues = Field(default_factory=dict)
    skills: ListedTexts = None
    replayed: ListedTexts = None
    ticket: OptBool = None
    memory: StrValues = Field(default_factory=dict)
    model_calls: OptInt = None


class Turn(DocModel):
    """One item of ``turns:``: a user input and what the agent's turn must show."""

    user: OptStr = None
    session: OptStr = None
    at: OptStr = None
    user_id: OptStr = None
    model: Texts = None
    outage: OptStr = None
    expect: Sub[Expect] = Expect()


class Conversation(DocModel):
    """One item of ``conversations:``."""

    name: OptStr = None
    user: OptStr = None
    session: OptStr = None
    now: OptStr = None
    model: Texts = None
    turns: Items[Turn] = ()


class ConversationsFile(DocModel):
    """A ``tests/conversations/<name>.yaml``."""

    conversations: Items[Conversation] = ()
