"""A real uvicorn server in a thread, for what the TestClient cannot send: a body that stops
halfway, a client that hangs up, a path decoded exactly as uvicorn decodes it.

The application's lifespan is off: the TestClient that made it already started its agent, and
both clients then talk to the same one.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI


@contextmanager
def live_server(app: FastAPI) -> Iterator[tuple[str, int]]:
    """``(host, port)`` of a uvicorn serving ``app`` until the block ends."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, lifespan="off", log_config=None, access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30  # start-up, not a timed assertion
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    try:
        yield host, port
    finally:
        server.should_exit = True
        thread.join(30)


def exchange(address: tuple[str, int], request: bytes, *, close_after_send: bool = False) -> bytes:
    """Send raw bytes; return everything the server sent until it closed the connection (or
    nothing, when the client hangs up right after sending)."""
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(request)
        if close_after_send:
            return b""
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)
