"""The hook's side of the embedding socket: ask the daemon, or hear nothing in time.

Stdlib only (``socket``, ``json``, ``os``): ``dreamd hook`` runs at every prompt and never loads
the model. The daemon, when ``[recall] embeddings`` is set and its model loaded, listens on
``<state>/embed.sock`` (owner-only); anything else — no socket, a socket someone else owns, a
slow or garbled answer — is ``None`` within :data:`TIMEOUT`, and the hook selects by keyword.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from pathlib import Path

SOCKET_NAME = "embed.sock"
TIMEOUT = 0.3
"""Seconds the hook waits for the daemon's answer in all (a warm answer takes ~10–50 ms)."""
MAX_ANSWER = 64 * 1024


def socket_path(state_dir: Path) -> Path:
    """``<state>/embed.sock``; the hook and the daemon derive it from the same state dir."""
    return state_dir / SOCKET_NAME


def connect_address(path: Path) -> tuple[str, int | None]:
    """An AF_UNIX address for ``path`` (sun_path holds 107 bytes): a long path goes through
    ``/proc/self/fd`` of its folder, opened without following a symlink. Returns the address
    and the folder descriptor to close after connect/bind (None when none was opened)."""
    if len(os.fsencode(path)) < 100:
        return str(path), None
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    return f"/proc/self/fd/{fd}/{path.name}", fd


def ask_daemon(
    state_dir: Path,
    memory_dir: str,
    query: str,
    limit: int,
    exclude: Collection[str] = (),
    *,
    timeout: float = TIMEOUT,
) -> list[str] | None:
    """The daemon's fused selection for ``query`` in ``memory_dir``, or None (fall back)."""
    path = socket_path(state_dir)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    import json
    import socket
    import time

    deadline = time.monotonic() + timeout
    request = json.dumps({"dir": memory_dir, "query": query, "limit": limit, "exclude": sorted(exclude)})
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            address, fd = connect_address(path)
            try:
                sock.connect(address)
            finally:
                if fd is not None:
                    os.close(fd)
            sock.sendall(request.encode("utf-8") + b"\n")
            chunks: list[bytes] = []
            size = 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
                chunk = sock.recv(8192)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:
                    return None
                if chunk.endswith(b"\n"):
                    break
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    names = answer.get("names") if isinstance(answer, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return names[:limit]


def hook_selection(
    state_dir: Path,
    memory_dir: str,
    prompt: str,
    limit: int,
    exclude: Collection[str],
    known: Mapping[str, object],
) -> list[str] | None:
    """What ``UserPromptSubmit`` shows when the daemon answers in time (names the hook's view
    of the manifest knows, none excluded), else None: the hook then selects by keyword."""
    names = ask_daemon(state_dir, memory_dir, prompt, limit, exclude)
    if names is None:
        return None
    return [n for n in dict.fromkeys(names) if n in known and n not in exclude][:limit]
