"""``dreamd mcp``: the memory as Model Context Protocol tools and resources over stdio (DESIGN §7, §10).

Every agent host people use (Claude Desktop, Claude Code, Codex CLI, Gemini CLI, Cursor) speaks
MCP, so this is the one door through which any of them reads and writes a memory directory.
This module is only the transport: the official SDK's low-level ``Server`` in front of
:class:`dreamd.mcp.tools.MemoryTools` (the tools) and :mod:`dreamd.mcp.schema` (their schemas).
The SDK is imported only inside :func:`serve`: it costs about a second, and ``import memory`` /
``dreamd hook`` must never pay it.

Invariants:

* A tool's bad input is a tool result with ``isError`` and one sentence; an unexpected exception
  is one too (its traceback goes to stderr). A malformed JSON-RPC line gets a JSON-RPC error
  (:func:`screen_line`). None of them ends the session.
* stdout carries protocol messages only; logs go to stderr.
* At most :data:`MAX_IN_FLIGHT` tool and resource requests are being answered at once, and at
  most :data:`MAX_QUEUED_LINES` lines wait read but unhandled: past that the server stops
  reading its pipe, so a client that pipelines thousands of calls waits on its own writes
  instead of growing the server's memory (:class:`_InFlight`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dreamd.mcp.schema import INSTRUCTIONS, TOOLS
from dreamd.mcp.tools import AUTO_MEMORY, MemoryTools, resolve_memory_dir
from memory.errors import DreamdError

if TYPE_CHECKING:
    from dreamd.config import Config

__all__ = ["main", "screen_line", "serve"]

log = logging.getLogger("dreamd.mcp")

SERVER_NAME = "dreamd"
RESOURCE_PAGE = 500


# ---------------------------------------------------------------------------- the SDK layer


def _error_text(exc: BaseException) -> str:
    """The one sentence a failed call answers, redacted: errors quote their input (issue 22)."""
    from memory.store.redaction import redact_words

    return redact_words(_error_sentence(exc))


def _error_sentence(exc: BaseException) -> str:
    if isinstance(exc, DreamdError):
        return " ".join(str(exc).split())
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    return f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""A JSON-RPC line longer than this is refused and dropped as it is read (a tool call needs far
less: bodies are capped at 64 KiB), so a hostile client cannot make the server buffer gigabytes."""


MAX_IN_FLIGHT = 16
"""Requests handed to the SDK and not yet answered (the thread pool runs fewer at once)."""
MAX_QUEUED_LINES = 64
"""Lines the reader thread may read ahead of the event loop."""


class _InFlight:
    """The requests handed to the SDK and not yet answered, by JSON-RPC id.

    :meth:`room` (before each request line is handed on) waits while :data:`MAX_IN_FLIGHT` are
    outstanding; a request leaves when its answer is sent (:class:`_AnswerCounting` wraps the
    SDK's write stream) or when the client cancels it (``notifications/cancelled``, which the
    SDK may leave unanswered). Counting answers on the wire, not handler runs, holds whatever
    the SDK does between the two: every request it is handed gets exactly one answer."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self.limit = limit
        self.outstanding: set[str] = set()
        self.peak = 0
        self._freed: Any = None

    async def room(self, message: Any) -> None:
        import asyncio
        import json

        if self._freed is None:
            self._freed = asyncio.Event()
        if not isinstance(message, dict):
            return
        if message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self.done(json.dumps(params["requestId"]))
            return
        if "id" not in message or "method" not in message:
            return  # a notification, or the client's answer to us: nothing will answer it
        while len(self.outstanding) >= self.limit:
            self._freed.clear()
            await self._freed.wait()
        self.outstanding.add(json.dumps(message["id"]))
        self.peak = max(self.peak, len(self.outstanding))

    def done(self, request_id: str) -> None:
        self.outstanding.discard(request_id)
        if self._freed is not None:
            self._freed.set()


class _AnswerCounting:
    """The SDK's write stream, telling :class:`_InFlight` which request each answer closes."""

    def __init__(self, stream: Any, in_flight: _InFlight) -> None:
        self._stream = stream
        self._in_flight = in_flight

    async def send(self, item: Any) -> None:
        import json

        await self._stream.send(item)
        message = getattr(item, "message", None)
        request_id = getattr(message, "id", None)
        if request_id is not None and getattr(message, "method", None) is None:
            self._in_flight.done(json.dumps(request_id))

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _AnswerCounting:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def screen_line(line: bytes, *, limit: int = MAX_MESSAGE_BYTES) -> tuple[str | None, dict[str, Any] | None]:
    """One line from the client: (text to hand the SDK, None) or (None, JSON-RPC error to answer).

    The SDK drops a line it cannot validate without answering, so a client whose request had a
    valid ``id`` but bad ``params`` (or a lone surrogate) would wait forever. Here every such
    request gets an error with its id; lines that are not JSON get a parse error (id null, as
    JSON-RPC 2.0 says); notifications and blank lines get nothing.
    """
    import json

    from mcp_types import jsonrpc_message_adapter

    if not line.strip():
        return None, None
    if len(line) > limit:
        return None, _rpc_error(None, -32600, f"message over {limit} bytes refused")
    try:
        text = line.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        return None, _rpc_error(None, -32700, f"parse error: not valid UTF-8 (byte {exc.start})")
    except (ValueError, RecursionError):
        return None, _rpc_error(None, -32700, "parse error: not JSON")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:
        request_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(data, dict) and "method" in data and request_id is None:
            return None, None  # a malformed notification: nobody waits for an answer
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            request_id = None
        first = str(exc).splitlines()
        reason = first[1].strip() if len(first) > 1 else type(exc).__name__
        reason = reason.split(" [type=")[0]  # pydantic would echo the client's input back
        return None, _rpc_error(request_id, -32600, f"invalid request: {reason[:200]}")
    return text, None


def _rpc_error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class _ScreenedStdin:
    """The client's lines for the SDK's stdio transport, screened by :func:`screen_line`.

    A daemon thread reads the client's pipe (a private descriptor, see :func:`_claim_stdin`) and
    hands lines to the event loop; being a daemon, it never holds the process open (Ctrl-C exits
    at once, where a worker blocked in a read would wait for the client's next line). Errors are
    sent through the transport's own write stream (one writer, no torn lines).
    """

    def __init__(
        self, fd: int, limit: int = MAX_MESSAGE_BYTES, *, prefix: bytes = b"", in_flight: _InFlight | None = None
    ) -> None:
        self._fd = fd
        self._limit = limit
        self._prefix = prefix  # bytes already read from the pipe (the early initialize line)
        self._lines: Any = None
        self._queued = threading.BoundedSemaphore(MAX_QUEUED_LINES)
        self.in_flight = in_flight or _InFlight()
        self.write_stream: Any = None

    def __aiter__(self) -> _ScreenedStdin:
        return self

    def _read(self, loop: Any, lines: Any) -> None:
        """Split the client's bytes into lines; a line over the limit is handed on as its first
        ``limit + 1`` bytes (screened as oversized) and the rest is dropped unkept. ``os.read``
        on the descriptor, not the buffered ``sys.stdin``: a daemon thread holding the buffer's
        lock at exit is a fatal error."""

        def hand(line: bytes) -> bool:
            self._queued.acquire()  # released as the loop takes the line: the read-ahead is bounded
            try:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            except RuntimeError:  # the loop is closed: the server is gone
                return False
            return True

        fd = self._fd
        pending = b""
        skipping = False
        first, self._prefix = self._prefix, b""
        while True:
            if first:
                chunk, first = first, b""
            else:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
            if not chunk:
                if pending and not skipping:
                    hand(pending)
                hand(b"")
                return
            pending += chunk
            while True:
                newline = pending.find(b"\n")
                if newline < 0:
                    if len(pending) > self._limit:
                        if not skipping and not hand(pending[: self._limit + 1]):
                            return
                        skipping, pending = True, b""
                    break
                line, pending = pending[: newline + 1], pending[newline + 1 :]
                if skipping:
                    skipping = False
                    continue
                if not hand(line):
                    return

    async def __anext__(self) -> str:
        import asyncio

        if self._lines is None:
            self._lines = asyncio.Queue()
            threading.Thread(
                target=self._read, args=(asyncio.get_running_loop(), self._lines), name="mcp-stdin", daemon=True
            ).start()
        while True:
            line = await self._lines.get()
            self._queued.release()
            if not line:
                raise StopAsyncIteration
            text, error = screen_line(line, limit=self._limit)
            if text is not None:
                import json

                await self.in_flight.room(json.loads(text))
                return text
            if error is not None:
                await self._answer(error)

    async def _answer(self, error: dict[str, Any]) -> None:
        import anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        while self.write_stream is None:  # the transport hands us its stream once it is up
            await anyio.sleep(0.005)
        message = types.JSONRPCError.model_validate(error)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.write_stream.send(SessionMessage(message))


def _claim_stdin() -> int:
    """A private descriptor for the client's pipe, with fd 0 pointed at the null device, so a
    child process a handler starts (a model CLI) can never read the protocol stream."""
    wire = os.dup(0)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    return wire


def serve(tools: MemoryTools) -> int:
    """Serve ``tools`` over stdio until the client closes stdin; returns the exit code.

    The client's first line is read before the SDK is imported: an ``initialize`` is answered
    at once from the SDK's own earlier answer when one is kept (:mod:`dreamd.mcp.early`).
    """
    from dreamd.mcp.early import CACHE_NAME, WireOut, cache_key, early_answer, read_first_line
    from memory.spool.queue import state_home

    wire = _claim_stdin()
    out_fd = os.dup(1)
    with contextlib.suppress(OSError):
        os.dup2(2, 1)  # stray output of a handler or a child goes to stderr, never on the wire
    cache, key = state_home(os.environ) / CACHE_NAME, cache_key(INSTRUCTIONS)
    first = read_first_line(wire)
    answer, init_id, asked = early_answer(first, cache, key)
    if answer is not None:
        os.write(out_fd, answer)

    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    listed = [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema,
            annotations=types.ToolAnnotations(
                title=t.title,
                read_only_hint=t.read_only,
                destructive_hint=t.destructive,
                idempotent_hint=t.idempotent,
                open_world_hint=False,
            ),
        )
        for t in TOOLS
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    in_flight = _InFlight()

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        except Exception as exc:
            if not isinstance(exc, DreamdError | OSError):
                log.exception("tool %s raised", params.name)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=_error_text(exc))], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)], structured_content=answer.data
        )

    async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        start = int(cursor) if cursor and cursor.isdigit() else 0
        try:
            every = await anyio.to_thread.run_sync(tools.resources)
        except Exception as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=_error_text(exc)) from None
        page = every[start : start + RESOURCE_PAGE]
        more = start + RESOURCE_PAGE < len(every)
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in page
            ],
            next_cursor=str(start + RESOURCE_PAGE) if more else None,
        )

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(tools.read_resource, uri)
        except Exception as exc:
            if not isinstance(exc, DreamdError | OSError):
                log.exception("reading resource %s raised", uri[:200])
            raise MCPError(code=types.INVALID_PARAMS, message=_error_text(exc), data={"uri": uri[:500]}) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/markdown")]
        )

    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("dreamd")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        ours = "0"
    server: Server[Any] = Server(
        SERVER_NAME,
        version=ours,
        title="dreamd memory",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )

    screened = _ScreenedStdin(wire, prefix=first, in_flight=in_flight)
    wire_out = WireOut(
        out_fd, cache=cache, key=key, init_id=init_id, asked=asked, answered=answer is not None,
        after_initialize=tools.warm.start if tools.warm is not None else None,
    )  # fmt: skip

    async def run() -> None:
        async with stdio_server(stdin=screened, stdout=wire_out) as (read_stream, write_stream):  # type: ignore[arg-type]
            screened.write_stream = write_stream
            counted = _AnswerCounting(write_stream, in_flight)
            await server.run(read_stream, counted, server.create_initialization_options())

    anyio.run(run)
    return 0


def main(config: Config, *, memory_dir: str | None, cwd: str, env: Mapping[str, str]) -> int:
    """``dreamd mcp``: resolve the start-up directory, check it, then serve.

    An explicit ``--memory-dir`` that is not a managed directory fails before the server
    starts (exit 1, one line), so a misconfigured client shows the reason at once.
    """
    import sys

    # stdout is the protocol channel. Plain stdlib logging to stderr: structlog (the daemon's)
    # would add a tenth of the SDK's import time to every start-up.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="dreamd mcp: %(levelname)s: %(message)s")
    default, how = resolve_memory_dir(
        memory_dir, cwd=cwd, projects=config.daemon.projects, roots=config.daemon.roots, env=env
    )
    if default is not None and how != AUTO_MEMORY and not (default / "manifest.json").is_file():
        from memory.store.transaction import MemoryStore

        MemoryStore(default).read()  # raises the store's own one-line UnmanagedError
    tools = MemoryTools.for_config(config, default, how)
    if default is not None:
        log.info("serving %s (%s)", default, how)
    return serve(tools)
