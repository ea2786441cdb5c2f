"""Two ASGI middlewares: the request body's limits (size, time) and the access log.

Plain ASGI rather than Starlette's ``BaseHTTPMiddleware``: the body limits have to see the body
as it arrives (a request without ``Content-Length`` is counted chunk by chunk), and neither
needs a request object.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from charter.serve.errors import error_response
from charter.serve.logs import ACCESS, logged_path

access_log = logging.getLogger(ACCESS)


BODY_TIMEOUT_S = 30.0  # for the whole body, from the moment the request's headers arrived


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    pass


class BodyLimit:
    """413 for a body over ``max_bytes``: at once when ``Content-Length`` says so, else as
    soon as the bytes received pass the limit. 408 for a body not complete ``timeout_s``
    after the request started: a client that stops sending mid-body would otherwise hold its
    connection, and a worker, for ever (uvicorn bounds only the wait between requests). The
    endpoint has not answered yet in either case: every endpoint reads the whole body before
    it does anything."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app, self.max_bytes, self.timeout_s = app, max_bytes, timeout_s

    def _refusal(self) -> Any:
        return error_response(
            413, "payload_too_large", f"the request body is larger than {self.max_bytes} bytes"
        )

    def _timeout(self) -> Any:
        return error_response(
            408,
            "request_timeout",
            f"the request body was not complete within {self.timeout_s:g} s",
            {"Connection": "close"},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refusal()(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        received = 0
        complete = False
        started = False

        async def counted() -> Message:
            nonlocal received, complete
            if complete:  # after the body only a disconnect comes: it may take its time
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0))
            except TimeoutError:
                raise _TooSlow from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
                complete = not message.get("more_body", False)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except (_TooLarge, _TooSlow) as exc:
            if started:  # pragma: no cover - no endpoint answers before reading its body
                raise
            refusal = self._refusal() if isinstance(exc, _TooLarge) else self._timeout()
            await refusal(scope, receive, send)


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
            access_log.info(
                "request",
                extra={
                    "method": scope["method"],
                    "path": logged_path(scope),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 3),
                    "tenant": state.get("tenant"),
                    "trace_id": state.get("trace_id"),
                },
            )
