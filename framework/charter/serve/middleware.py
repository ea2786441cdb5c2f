"""Two ASGI middlewares: the request size limit and the access log.

Plain ASGI rather than Starlette's ``BaseHTTPMiddleware``: the size limit has to see the body
as it arrives (a request without ``Content-Length`` is counted chunk by chunk), and neither
needs a request object.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from charter.serve.errors import error_response
from charter.serve.logs import ACCESS

access_log = logging.getLogger(ACCESS)


class _TooLarge(Exception):
    pass


class BodyLimit:
    """413 for a body over ``max_bytes``: at once when ``Content-Length`` says so, else as
    soon as the bytes received pass the limit (the endpoint has not answered yet: every
    endpoint reads the whole body before it does anything)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    def _refusal(self) -> Any:
        return error_response(
            413, "payload_too_large", f"the request body is larger than {self.max_bytes} bytes"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refusal()(scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:  # pragma: no cover - no endpoint answers before reading its body
                raise
            await self._refusal()(scope, receive, send)


class AccessLog:
    """One ``charter.serve.access`` line per HTTP request, after its response was sent.

    The tenant and trace id come from ``request.state`` (``scope["state"]``), where the
    authentication and the endpoints put them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # unless a response starts: an exception escaped every handler

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            state = scope.get("state") or {}
            route = scope.get("route")
            access_log.info(
                "request",
                extra={
                    "method": scope["method"],
                    "path": getattr(route, "path", None) or scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 3),
                    "tenant": state.get("tenant"),
                    "trace_id": state.get("trace_id"),
                },
            )
