"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real SDK in tests.

A real HTTP server (stdlib ``http.server`` in a thread, ephemeral port) answers
``POST /v1/messages`` from a script: each request takes the next item, which is a Messages
response body (:func:`message`), an error status (:class:`Status`, with ``retry-after-ms: 10``
on retryable statuses so the SDK's backoff stays fast) or a hang (:class:`Hang`, longer than
the client timeout). Every request is recorded (path, lower-cased headers, parsed JSON body) so
tests can check the model, ``max_tokens``, ``cache_control`` and the API key header.

An exhausted script answers from ``responder`` when one is set (a function of the request, for
clients such as Claude Code that send side requests a test cannot count in advance), else 400
``script exhausted`` (not retried by the SDK), so a test that sends more requests than it scripted
fails loudly instead of hanging.

A request with ``"stream": true`` (what the Claude Code CLI sends) gets the same message as
server-sent events: ``message_start``, per block ``content_block_start`` / ``content_block_delta``
(``text_delta`` or ``input_json_delta``) / ``content_block_stop``, ``message_delta`` (stop reason
and output tokens) and ``message_stop``. ``HEAD /`` (the CLI's reachability probe) answers 200, and
``POST /v1/messages/count_tokens`` a rough count.

Use the ``fake_anthropic`` fixture (import it into a test module, or list this module in
``pytest_plugins``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def message(
    text: str | None = "[]",
    *,
    stop_reason: str | None = "end_turn",
    tool_use: list[tuple[str, Any]] | None = None,
    blocks: list[dict[str, Any]] | None = None,
    model: str = "claude-test",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = 0,
    cache_creation_input_tokens: int | None = 0,
) -> dict[str, Any]:
    """A Messages API response body: a text block (unless ``text`` is None), tool_use blocks."""
    content: list[dict[str, Any]] = list(blocks or [])
    if text is not None:
        content.append({"type": "text", "text": text})
    for i, (name, tool_input) in enumerate(tool_use or []):
        content.append(
            {"type": "tool_use", "id": f"toolu_{i:04d}", "name": name, "input": tool_input}
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
        },
    }


@dataclass(frozen=True)
class Status:
    """An error response. Retryable statuses get ``retry-after-ms: 10`` unless headers say otherwise."""

    code: int
    message: str = "scripted error"
    headers: dict[str, str] | None = None

    def response_headers(self) -> dict[str, str]:
        if self.headers is not None:
            return self.headers
        if self.code in (408, 409, 429) or self.code >= 500:
            return {"retry-after-ms": "10"}
        return {}

    def body(self) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(self.code, "api_error"), "message": self.message},
        }


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` (or until the server stops) before answering ``then``."""

    seconds: float
    then: dict[str, Any] | Status = field(default_factory=lambda: message("[]"))


ScriptItem = dict[str, Any] | Status | Hang


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


Responder = Callable[[Request], ScriptItem]


def sse_events(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The Messages streaming events that deliver ``msg`` (a :func:`message` body)."""
    usage = dict(msg.get("usage") or {})
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for i, block in enumerate(msg.get("content") or []):
        if block.get("type") == "tool_use":
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
        elif block.get("type") == "thinking":
            first = {**block, "thinking": ""}
            delta = {"type": "thinking_delta", "thinking": block.get("thinking", "")}
        else:
            first = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": first},
            )
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg.get("stop_reason"), "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 1)},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class FakeAnthropic:
    """The server. ``url`` is the base_url to give the SDK; ``push`` appends script items."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.requests: list[Request] = []
        self.responder = responder
        self._script: list[ScriptItem] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake._handle(self)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                fake._send(self, Status(404, f"fake_anthropic: no route {self.path}"))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def push(self, *items: ScriptItem) -> None:
        with self._lock:
            self._script.extend(items)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def close(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self) -> ScriptItem | None:
        with self._lock:
            return self._script.pop(0) if self._script else None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append(Request(path=handler.path, headers=headers, body=body))
        route = handler.path.split("?")[0]
        if route == "/v1/messages/count_tokens":
            self._send(handler, {"input_tokens": max(1, length // 4)})
            return
        if route != "/v1/messages":
            self._send(handler, Status(404, f"fake_anthropic: no route {handler.path}"))
            return
        item = self._next()
        if item is None and self.responder is not None:
            item = self.responder(self.requests[-1])
        if item is None:
            item = Status(400, "fake_anthropic: script exhausted")
        if isinstance(item, Hang):
            if self._stopping.wait(item.seconds):
                return
            item = item.then
        self._send(handler, item, stream=isinstance(body, dict) and body.get("stream") is True)

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        item: dict[str, Any] | Status,
        *,
        stream: bool = False,
    ) -> None:
        if stream and not isinstance(item, Status):
            self._send_stream(handler, item)
            return
        if isinstance(item, Status):
            code, payload, extra = item.code, item.body(), item.response_headers()
        else:
            code, payload, extra = 200, item, {}
        data = json.dumps(payload).encode()
        try:
            handler.send_response(code)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.send_header("request-id", f"req_fake_{len(self.requests)}")
            for key, value in extra.items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
            handler.wfile.flush()
        except OSError:
            pass  # the client gave up (timeout) and closed the socket

    def _send_stream(self, handler: BaseHTTPRequestHandler, msg: dict[str, Any]) -> None:
        try:
            handler.send_response(200)
            handler.send_header("content-type", "text/event-stream")
            handler.send_header("cache-control", "no-cache")
            handler.send_header("connection", "close")
            handler.send_header("request-id", f"req_fake_{len(self.requests)}")
            handler.end_headers()
            for name, data in sse_events(msg):
                handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            handler.wfile.flush()
        except OSError:
            pass
        handler.close_connection = True


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running fake Messages API; stopped (and hung handlers released) after the test."""
    server = FakeAnthropic()
    try:
        yield server
    finally:
        server.close()
