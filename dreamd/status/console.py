"""Where the daemon's web console is: ``console.json`` in the spool directory while the daemon
serves it (``[ui] enabled``), with its URL and token (mode 0600), removed when it stops."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["STATE_FILE", "clear_state", "read_state", "state_path", "write_state"]

STATE_FILE = "console.json"


def state_path(spool: Path) -> Path:
    return Path(spool) / STATE_FILE


def write_state(spool: Path, *, url: str, base: str) -> None:
    from memory.fsutil import replace_atomic

    doc = {"url": url, "base": base, "pid": os.getpid()}
    replace_atomic(state_path(spool), json.dumps(doc).encode(), mode=0o600)


def read_state(spool: Path) -> dict[str, Any] | None:
    """The daemon's console, when one is serving (its pid alive), else None."""
    path = state_path(spool)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            doc = json.loads(f.read(4096))
        pid = int(doc["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return doc if isinstance(doc.get("url"), str) else None


def clear_state(spool: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(state_path(spool))
