"""What a request may call a user, a session, a trace, and what a turn's text may hold.

A user id is taken in a turn's body and given back in a URL path (memory, export, forget,
goals), so every id a turn accepts must survive the trip through a path: no ``/`` (uvicorn
decodes ``%2F`` before routing, and no route matches ``/v1/users/a/b/memory``), and neither
``.`` nor ``..`` (clients resolve them as path segments). Every id is 1 to 128 characters
without control characters (they would forge log lines and break terminals) and without
invisible ones: zero-width characters, direction overrides and isolates (an id shown as
``alice`` that is not ``alice``), line and paragraph separators. The same rules apply wherever
an id arrives: body, path or query, so an id refused in one place is refused in all of them.

A turn's text holds no control character but newline and tab (ESC, BEL and C1 controls
retitle and clear the terminal of whoever reads a trace), and at least one visible character.
Unpaired surrogates, which no database stores, are refused by pydantic as no valid string.

Each rule is one regular expression, published as the ``pattern`` of its field in the OpenAPI
document and used by the server itself, so the document and the server cannot disagree. The
patterns use only what ECMA-262 (JSON Schema's dialect) and Python read alike: ``\\uXXXX``
escapes, explicit classes (no ``\\s``, whose members differ), a closing ``$`` (read as the end
of the text: the server matches with ``fullmatch``).
"""

from __future__ import annotations

import re

from charter.serve.errors import ApiError

MAX_ID = 128
MAX_TEXT = 4000  # characters of one user message
USER_ID_RULE = (
    "1 to 128 characters, without control or invisible characters or '/', and neither '.' nor '..'"
)

# (first, last) code points
_CONTROLS = ((0x00, 0x1F), (0x7F, 0x9F))
_INVISIBLE = (
    (0xAD, 0xAD),  # soft hyphen
    (0x61C, 0x61C),  # Arabic letter mark
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200F),  # zero-width space, joiners, left/right-to-left marks
    (0x2028, 0x202E),  # line and paragraph separators, direction embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, direction isolates
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
)
_TEXT_CONTROLS = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F))  # all but tab and newline
# what a text may hold that shows nothing: spaces, tab, newline, the invisible characters
_BLANK = (
    (0x09, 0x0A),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    *_INVISIBLE,
)


def _members(ranges: tuple[tuple[int, int], ...]) -> str:
    def one(cp: int) -> str:
        return f"\\u{cp:04x}"

    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges)


_ID_CHARS = f"[^{_members(_CONTROLS + _INVISIBLE)}]"
ID_PATTERN = f"^{_ID_CHARS}+$"
USER_ID_PATTERN = f"^(?!\\.\\.?$)[^/{_members(_CONTROLS + _INVISIBLE)}]+$"
_TEXT_CHAR = f"[^{_members(_TEXT_CONTROLS)}]"
# leading blanks, one visible character, then anything allowed: linear, never backtracks
TEXT_PATTERN = f"^[{_members(_BLANK)}]*[^{_members(_TEXT_CONTROLS + _BLANK)}]{_TEXT_CHAR}*$"
ROLE_PATTERN = "^(?!(?:admin|user)$)[a-z][a-z0-9_-]{0,31}$"


def _server(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern[1:-1])  # matched with fullmatch: the end is the text's end


_ID = _server(ID_PATTERN)
_USER_ID = _server(USER_ID_PATTERN)
_TEXT = _server(TEXT_PATTERN)
_ROLE = _server(ROLE_PATTERN)
_NOT_IN_ID = re.compile(f"[{_members(_CONTROLS + _INVISIBLE)}]")
_NOT_IN_TEXT = re.compile(f"[{_members(_TEXT_CONTROLS)}]")


def _which(found: re.Match[str]) -> str:
    return f"U+{ord(found.group()):04X} at character {found.start() + 1}"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a session, consent or trace id, or None: 1 to 128 characters,
    none of them a control or invisible character."""
    if _ID.fullmatch(value) and len(value) <= MAX_ID:
        return None
    if not value:
        return "must not be empty"
    if len(value) > MAX_ID:
        return f"must be at most {MAX_ID} characters"
    found = _NOT_IN_ID.search(value)
    assert found is not None  # the only other way not to match
    if ord(found.group()) <= 0x9F:
        return f"must not contain control characters ({_which(found)})"
    return f"must not contain invisible characters ({_which(found)})"


def user_id_problem(value: str) -> str | None:
    """``id_problem``, and what a URL path cannot carry: ``/``, or the whole id ``.`` or
    ``..``."""
    problem = id_problem(value)
    if problem is not None or _USER_ID.fullmatch(value):
        return problem
    if "/" in value:
        return "must not contain '/'"
    return f"must not be '{value}'"


def text_problem(value: str) -> str | None:
    """Why a turn's text cannot be taken, or None (``TurnRequest`` checks its length)."""
    if _TEXT.fullmatch(value):
        return None
    found = _NOT_IN_TEXT.search(value)
    if found is not None:
        return f"must not contain control characters other than newline and tab ({_which(found)})"
    return "must not be blank"


def role_problem(value: str) -> str | None:
    """Why ``value`` cannot be the role a turn reads memories with, or None."""
    if _ROLE.fullmatch(value):
        return None
    if value in ("admin", "user"):
        # the privileged memory roles (export, forget) are the endpoints' to use, not a
        # turn's: a client cannot talk its way into them
        return f"role '{value}' is not allowed on a turn"
    return "must be a role name such as 'agent' (a-z, 0-9, _ and -)"


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
