"""A fake OpenAI-compatible server on 127.0.0.1:<free port>, answering what each test queues.

A plain ``http.server`` in a thread: it records every request (``seen``) and answers each with
the next queued ``Reply``; one that ``hang``s holds the connection until the test is over.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = b""  # bytes as they are, anything else as JSON
    headers: Mapping[str, str] = field(default_factory=dict)
    hang: bool = False  # answer nothing until the test is over: the client times out


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: Mapping[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def chat(text: str, **extra: Any) -> dict[str, Any]:
    """A chat completion answer as vLLM and llama.cpp send it; ``extra`` adds or replaces keys
    (``logprobs`` goes into the choice)."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    if "logprobs" in extra:
        choice["logprobs"] = extra.pop("logprobs")
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [choice],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    return {**answer, **extra}


class FakeServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._http.daemon_threads = True
        self._http.fake = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self.endpoint = self.url + "/v1/chat/completions"
        # a short poll so that shutdown() at teardown does not wait out the default half second
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def reply(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def take(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            return self.replies.popleft() if self.replies else Reply(500, b"no reply queued")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._http.shutdown()
        self._http.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = fake.take(Seen("POST", self.path, headers, body))
        if reply.hang:
            fake.release.wait(30)
            self.close_connection = True
            return
        raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except OSError:  # the client gave up already
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean
