"""What a request may call a user, a session, a trace, and what a turn's text may hold.

A user id is taken in a turn's body and given back in a URL path (memory, export, forget,
goals), so every id a turn accepts must survive the trip through a path: no ``/`` (uvicorn
decodes ``%2F`` before routing, and no route matches ``/v1/users/a/b/memory``), and neither
``.`` nor ``..`` (clients resolve them as path segments). Every id is 1 to 128 characters
without control characters (they would forge log lines and break terminals). The same rules
apply wherever an id arrives: body, path or query, so an id refused in one place is refused in
all of them.

A turn's text must not hold NUL: PostgreSQL's ``text`` cannot store it. (Unpaired surrogates,
which no database stores either, are refused by pydantic as no valid string.)
"""

from __future__ import annotations

import unicodedata

from charter.serve.errors import ApiError

MAX_ID = 128
USER_ID_RULE = "1 to 128 characters, without control characters or '/', and neither '.' nor '..'"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a session, consent or trace id, or None: 1 to 128 characters,
    none of them a control character."""
    if not value:
        return "must not be empty"
    if len(value) > MAX_ID:
        return f"must be at most {MAX_ID} characters"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return "must not contain control characters"
    return None


def user_id_problem(value: str) -> str | None:
    """``id_problem``, and what a URL path cannot carry: ``/``, or the whole id ``.`` or
    ``..``."""
    problem = id_problem(value)
    if problem is not None:
        return problem
    if "/" in value:
        return "must not contain '/'"
    if value in (".", ".."):
        return f"must not be '{value}'"
    return None


def text_problem(value: str) -> str | None:
    """Why a turn's text cannot be stored, or None (``TurnRequest`` checks its length and
    blankness)."""
    if "\x00" in value:
        return "must not contain NUL characters"
    return None


def _check(name: str, problem: str | None) -> None:
    if problem is not None:
        raise ApiError(422, "invalid_request", f"{name}: {problem}")


def check_id(name: str, value: str) -> str:
    """``value``, or a 422 naming ``name`` when it is no valid id."""
    _check(name, id_problem(value))
    return value


def check_user_id(name: str, value: str) -> str:
    """``value``, or a 422 naming ``name`` when it is no valid user id."""
    _check(name, user_id_problem(value))
    return value
