"""Answer ``initialize`` before the MCP SDK has loaded, with the SDK's own earlier answer.

Importing the official SDK costs one to three seconds, and every client waits on the
``initialize`` answer (``claude mcp list`` lists nothing until each server answered). The
answer depends only on this server (name, version, title, instructions, capabilities) and on
the protocol version the client asks for, so it is the same every time: the SDK's real answer
is kept in ``<state>/mcp-initialize.json`` the first time it is made, keyed by dreamd's and the
SDK's versions and the instructions' checksum, and a later start answers from it at once.

The SDK still sees the request (it is handed the same line) and still makes its answer; that
one is dropped on its way out (:class:`WireOut`), after refreshing the kept copy if it differs.
No kept copy, another protocol version, or a first line that is not ``initialize``: nothing
early happens and the SDK answers as always. The file is read with a size cap and written by
rename; a broken or hostile one is ignored.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

CACHE_NAME = "mcp-initialize.json"
MAX_CACHE_BYTES = 256 * 1024
MAX_FIRST_LINE = 64 * 1024
"""A first line longer than this is not looked at early (it is handed to the SDK as read)."""


def cache_key(instructions: str) -> str:
    """dreamd's and the SDK's versions and the instructions' checksum: any change starts over."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours, sdk = version("dreamd"), version("mcp")
    except PackageNotFoundError:
        return ""
    return f"{ours}:{sdk}:{zlib.crc32(instructions.encode('utf-8')):08x}"


def read_first_line(fd: int, limit: int = MAX_FIRST_LINE) -> bytes:
    """The client's first line (with its newline), read byte-exactly from the pipe: what is read
    past it would be lost to the SDK, so reads stop at the first newline."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        try:
            chunk = os.read(fd, 1)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += 1
        if chunk == b"\n":
            break
    return b"".join(chunks)


def _load(path: Path) -> dict[str, Any]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        data = os.read(fd, MAX_CACHE_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    if len(data) > MAX_CACHE_BYTES:
        return {}
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def early_answer(line: bytes, cache: Path, key: str) -> tuple[bytes | None, Any, str | None]:
    """``(answer line or None, request id, requested protocol version)`` for the first line."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None, None, None
    if not isinstance(request, dict) or request.get("method") != "initialize" or "id" not in request:
        return None, None, None
    params = request.get("params")
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    if not isinstance(asked, str) or not key:
        return None, request["id"], None
    kept = _load(cache)
    result = (kept.get("results") or {}).get(asked) if kept.get("key") == key else None
    if not isinstance(result, dict):
        return None, request["id"], asked
    answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    return (json.dumps(answer, ensure_ascii=False) + "\n").encode("utf-8"), request["id"], asked


def remember(cache: Path, key: str, asked: str, result: dict[str, Any]) -> None:
    """Keep the SDK's answer for ``asked`` (atomically; never raises)."""
    try:
        kept = _load(cache)
        results = kept.get("results") if kept.get("key") == key else None
        results = dict(results) if isinstance(results, dict) else {}
        if results.get(asked) == result:
            return
        results[asked] = result
        from memory.fsutil import replace_atomic

        cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = json.dumps({"key": key, "results": results}, ensure_ascii=False).encode("utf-8")
        replace_atomic(cache, data, mode=0o600, sync_dir=False, durable=False)  # no partial temp file left
    except Exception:
        pass


class WireOut:
    """The SDK's stdout (an ``anyio.AsyncFile[str]`` stand-in) on a private descriptor; drops
    the SDK's answer to a request that was answered early, and keeps each initialize answer.
    ``after_initialize`` runs once the ``initialize`` answer is on the wire (the early one, or
    the SDK's): the server's background work starts there, never on the initialize path."""

    def __init__(
        self, fd: int, *, cache: Path, key: str, init_id: Any, asked: str | None, answered: bool,
        after_initialize: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        self._fd = fd
        self._cache, self._key = cache, key
        self._init_id, self._asked, self._answered = init_id, asked, answered
        self._after = after_initialize

    async def write(self, text: str) -> None:
        if self._init_id is not None and '"result"' in text:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == self._init_id and isinstance(message.get("result"), dict):
                self._init_id = None
                if self._asked and self._key:
                    remember(self._cache, self._key, self._asked, message["result"])
                if self._answered:
                    self._initialized()
                    return  # the client has this answer already
                self._send(text)
                self._initialized()
                return
        self._send(text)

    def _send(self, text: str) -> None:
        data = text.encode("utf-8")
        while data:
            written = os.write(self._fd, data)
            data = data[written:]

    def _initialized(self) -> None:
        after, self._after = self._after, None
        if after is not None:
            after()

    async def flush(self) -> None:
        return None
