"""The typed model of ``responses.yaml`` (schema ``responses.json``), and of the template
entries it shares with a skill contract's ``reply:`` (schema ``skill.json``): what the responses
stage (``charter.compile.responses``) reads, leniently (``_lenient``), after the schema has
reported what is wrong with the file.

An entry keeps its shape as written (one template, a list of alternatives, one alternative
with ``when:``), and a list keeps the file's indexes (None for an item that is neither a string
nor a mapping), because the stage points into each template down to the character.
Whether a key is written at all is ``model_fields_set``: an event written with no usable value
still declares the entry (``completed: ~`` is an entry without alternatives), and an
alternative with both ``text`` and ``each``, or neither, is a problem of its own (CH354).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, TypeAdapter

from charter.pack.typed._lenient import DocModel, Entries, OptStr, Sub


def _texts(value: Any) -> Any:
    if isinstance(value, list):
        return [x if isinstance(x, str) else None for x in value]
    return value if isinstance(value, str) else None


def _alternative(value: Any) -> Any:
    return value if isinstance(value, str | dict) else None


def _entry(value: Any) -> Any:
    if isinstance(value, list):
        return [_alternative(x) for x in value]
    return _alternative(value)


Texts = Annotated[str | tuple[str | None, ...] | None, BeforeValidator(_texts)]
"""A template, or a rotation of templates (None for an item that is no string); None when the
value is neither."""


class Alternative(DocModel):
    """One alternative of an entry in its long form. ``each`` (once per result item) belongs to
    a skill's ``reply:`` only; responses.yaml's schema reports it."""

    when: OptStr = None
    text: Texts = None
    each: Texts = None


Entry = Annotated[
    str | tuple[str | Alternative | None, ...] | Alternative | None, BeforeValidator(_entry)
]
"""An entry as written: one template, a list of alternatives (each a template or an
:class:`Alternative`, None for any other item), or one :class:`Alternative`; None when it is
none of these."""


class Templates(DocModel):
    """Templates by goal event, pack-wide (``events:``) or of one intent. The fields are the
    events the schema knows, as ``charter.compile.response_spec.EVENTS`` names them (a test
    keeps the two equal)."""

    slot_asked: Entry = None
    slot_corrected: Entry = None
    slot_carried: Entry = None
    cancelled: Entry = None
    already_done: Entry = None
    confirmation_asked: Entry = None
    confirmation_accepted: Entry = None
    confirmation_declined: Entry = None
    completed: Entry = None
    skill_failed: Entry = None
    handed_off: Entry = None
    resumed: Entry = None
    unanswered: Entry = None
    clarification_asked: Entry = None
    clarification_declined: Entry = None

    def written(self) -> dict[str, Entry]:
        """The entries the file writes, whatever their value, in the order of ``EVENTS``."""
        return {e: getattr(self, e) for e in EVENTS if e in self.model_fields_set}


EVENTS: tuple[str, ...] = tuple(Templates.model_fields)
"""The goal events a template can be written for."""


class IntentTemplates(Templates):
    """``intents.<intent id>``: the intent's mode and its own templates."""

    mode: OptStr = None


class ResponsesFile(DocModel):
    """A ``responses.yaml``."""

    mode: OptStr = None
    handoff: OptStr = None
    events: Sub[Templates] = Templates()
    intents: Entries[IntentTemplates] = Field(default_factory=dict)


_ENTRY: TypeAdapter[Entry] = TypeAdapter(Entry)


def read_entry(value: Any) -> Entry:
    """An entry written in another file, read as those of responses.yaml are: a skill
    contract's ``reply:``, which ``charter.pack.typed.skills`` keeps as written."""
    return _ENTRY.validate_python(value)
