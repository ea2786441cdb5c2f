"""A turn's body, read the way docs/serve.md promises: UTF-8 JSON, one object, the fields of
``TurnRequest``. Everything a client can send is a 400 or a 422 that says what is wrong;
nothing in a body can make the server fail.

The body is decoded as UTF-8 before JSON sees it (``json.loads`` on bytes would also take
UTF-16 and UTF-32), and integers are bounded before Python converts them (a literal of more
than 4,300 digits makes ``int()`` raise; a turn has no numeric field anyway).
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from charter.serve.errors import ApiError, validation_message
from charter.serve.models import TurnRequest

MAX_DIGITS = 100  # of an integer literal anywhere in a body


class _TooManyDigits(Exception):
    pass


def _bounded_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:
        raise _TooManyDigits
    return int(literal)


def _malformed(message: str) -> ApiError:
    return ApiError(400, "malformed_json", message)


def parse_turn(body: bytes) -> TurnRequest:
    """The turn a body asks for; ApiError 400 (not UTF-8 JSON) or 422 (not a valid turn)."""
    if not body.strip():
        raise _malformed("the request body is empty: send a JSON object")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _malformed("the request body is not UTF-8") from None
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise _malformed(f"the request body is not valid JSON: {exc.msg} at {where}") from None
    except RecursionError:  # [[[[…]]]]: nested deeper than the parser goes
        raise _malformed("the request body is nested too deeply") from None
    except _TooManyDigits:
        raise ApiError(
            422,
            "invalid_request",
            f"the request body has an integer of more than {MAX_DIGITS} digits",
        ) from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_request", "the request body must be a JSON object")
    try:
        return TurnRequest.model_validate(data)
    except ValidationError as exc:
        raise ApiError(422, "invalid_request", validation_message(exc.errors())) from None
