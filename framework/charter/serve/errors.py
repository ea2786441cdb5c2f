"""Every error the service sends is ``{"error": {"code": ..., "message": ...}}``.

Framework errors (an unknown path, a wrong method, a query parameter out of range, an
unhandled exception) are turned into the same shape, so a client needs one error parser.
Messages never quote a request's body: it may hold what a user typed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from charter.serve.logs import logged_path

log = logging.getLogger("charter.serve")
CLIENT_CLOSED = 499

# a stable code per status for errors the framework raises
CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    422: "invalid_request",
    500: "internal",
    503: "unavailable",
}


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """What every 4xx and 5xx response carries."""

    error: ErrorDetail


class ApiError(Exception):
    """An error response: raised anywhere below an endpoint, sent as it says."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(self.status, self.code, self.message, self.headers)


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=dict(headers or {}))


def validation_message(errors: Sequence[Any]) -> str:
    """``text: String should have at most 4000 characters; role: Field required``: the field
    path without where it was (body, path, query), then pydantic's own words."""
    parts = []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ()) if x not in ("body", "path", "query")]
        msg = str(e.get("msg", "is invalid"))
        msg = msg.removeprefix("Value error, ")
        parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "; ".join(parts)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = CODES.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "invalid_request", validation_message(exc.errors()))


async def internal(request: Request, exc: Exception) -> JSONResponse:
    """A 500 for a bug, logged by the exception's type and frames, not its message (a
    backend's message may quote the user), and by the route, not the path (no user id)."""
    log.error(
        "unhandled error",
        extra={"error": type(exc).__name__, "path": logged_path(request.scope)},
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return error_response(500, "internal", "internal error; the server log has the details")


async def _disconnected(request: Request, exc: Exception) -> Response:
    # the client went away before its body was complete: nobody to answer, nothing to log
    # but the access line (499, as nginx says it)
    return Response(status_code=CLIENT_CLOSED)


def install(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(ClientDisconnect, _disconnected)
    app.add_exception_handler(Exception, internal)
