"""The shapes of the HTTP API, for validation and for the OpenAPI document.

Responses are built from the runtime's own ``as_dict`` forms and sent as they are; the models
below describe them (``responses=``) rather than filter them, so a field the runtime adds is
not silently dropped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from charter.serve.ids import (
    ID_PATTERN,
    MAX_ID,
    MAX_TEXT,
    ROLE_PATTERN,
    TEXT_PATTERN,
    USER_ID_PATTERN,
    USER_ID_RULE,
    id_problem,
    role_problem,
    text_problem,
    user_id_problem,
)


def _pattern(pattern: str) -> dict[str, Any]:
    # published, not given to pydantic: its regex engine reads no lookahead, and the
    # validators below use the same pattern with the messages a client can act on
    return {"pattern": pattern}


class TurnRequest(BaseModel):
    """One user message."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(
        min_length=1,
        max_length=MAX_ID,
        description=f"The user, within the caller's tenant: {USER_ID_RULE}.",
        json_schema_extra=_pattern(USER_ID_PATTERN),
    )
    session_id: str = Field(
        min_length=1,
        max_length=MAX_ID,
        description="The conversation: 1 to 128 characters, without control or invisible "
        "characters.",
        json_schema_extra=_pattern(ID_PATTERN),
    )
    text: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description="What the user wrote: at least one visible character, and no control "
        "character but newline and tab.",
        json_schema_extra=_pattern(TEXT_PATTERN),
    )
    role: str = Field(
        default="agent",
        description="The role memories are read with (the pack's visibility); not admin or "
        "user, which only the memory endpoints use.",
        json_schema_extra=_pattern(ROLE_PATTERN),
    )
    consent: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID,
        description="The consent version the user gave.",
        json_schema_extra=_pattern(ID_PATTERN),
    )

    @field_validator("user_id")
    @classmethod
    def _a_user_id(cls, value: str) -> str:
        problem = user_id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("session_id", "consent")
    @classmethod
    def _an_id(cls, value: str | None) -> str | None:
        problem = None if value is None else id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("text")
    @classmethod
    def _storable(cls, value: str) -> str:
        problem = text_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("role")
    @classmethod
    def _a_role(cls, value: str) -> str:
        problem = role_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class TurnReply(BaseModel):
    """``Reply.as_dict()``: the text to show and everything that explains it."""

    text: str
    verdict: str = Field(
        description="pass; fixed (repaired by the rules); ask (a question, nothing delivered); "
        "escalate (a person takes over: see ticket); block (the pack's safe message)"
    )
    answered_by: str = Field(
        description="template (composed from the pack's templates); model (the model's answer "
        "or rewording is part of the text); escalation (the hand-off message); rules (the "
        "safe message of a block)"
    )
    findings: list[dict[str, Any]]
    reflection: dict[str, Any] | None
    goals: list[dict[str, Any]]
    memories_used: list[str]
    trace_id: str | None
    ticket: str | None
    attempts: int = Field(description="How many drafts the model wrote (0: none generated).")
    skills: list[dict[str, Any]]
    responses: list[str] = Field(
        description="The ids of the templates the text was composed from, in order "
        "(account_balance.result#2, transfer.confirmation_asked#1, pack.unanswered, "
        "faq.<entry>), and model where the model's own text stands."
    )
    events: list[dict[str, Any]] = Field(
        description="The goal events the text tells, in order: kind (result, completed, "
        "slot_asked, confirmation_asked, handed_off, unanswered...), with goal, intent, "
        "skill, slot and ticket where they apply."
    )


class Facts(BaseModel):
    user_id: str
    facts: list[dict[str, Any]] = Field(description="Active facts by key, values as stored.")


class MemoryExport(BaseModel):
    """Every fact in every status, the audit trail and the narrative summaries."""

    model_config = ConfigDict(extra="allow")

    format: str
    user_id: str
    exported_at: str
    facts: list[dict[str, Any]]
    audit: list[dict[str, Any]]
    summaries: list[dict[str, Any]]


class Forgotten(BaseModel):
    user_id: str
    deleted: dict[str, int] = Field(
        description="How many facts, summaries, turns, goals, tickets, traces and reflections."
    )


class Goals(BaseModel):
    user_id: str
    goals: list[dict[str, Any]] = Field(description="Every goal of the user, in creation order.")


class TraceOut(BaseModel):
    """``Trace.as_dict()``: one turn, step by step."""

    model_config = ConfigDict(extra="allow")

    id: str
    tenant: str | None
    user_id: str
    session_id: str
    domain: str
    started_at: str
    duration_ms: float
    verdict: str
    reply: str
    steps: list[dict[str, Any]]


class Traces(BaseModel):
    traces: list[TraceOut] = Field(description="Newest first.")


class Health(BaseModel):
    model_config = ConfigDict(extra="allow")

    status: str = Field(
        description="ok, or degraded when the database cannot take writes (database.fault)"
    )
    version: str
    tenant: str
    pack: dict[str, Any]
    model: dict[str, Any]
    database: dict[str, Any] = Field(
        description="dialect, reachable, writable, and fault: null, unreachable, read-only, "
        "locked or connection lost"
    )
    breakers: list[dict[str, Any]]
    counts: dict[str, int]


class Alive(BaseModel):
    status: str
