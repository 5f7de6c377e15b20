"""The last "model misconfigured" failure, kept on disk so one-shot commands can show it.

A misconfigured model (:class:`memory.errors.ModelMisconfigured`: a refused key or login, no
such model, a bad request, no ``claude`` CLI) fails every job the same way until a person fixes
``[model]``. The daemon that saw it may be a service nobody watches, so the reason is written to
``.model-health.json`` in the spool directory (next to the daemon's ``.owner``: a service
and the user's shell may not share ``$XDG_STATE_HOME``, but both name the same spool in the
config) and ``dreamd status`` / ``dreamd doctor`` print it as ``model misconfigured: …``. The
first successful model call removes the file: the note describes the model as it is now, not
a history. Where there is no spool yet nothing is written (the command that called the model
says why on its own).

Shape (format 1)::

    {"format": 1, "state": "misconfigured", "error": "one line", "model": "backend/model id",
     "memory_dir": "/abs/dir" | null, "at": ISO}

Writes happen only when the state changes (a process remembers what it last wrote), so a
healthy daemon pays one ``stat`` for its first call and nothing after. Reading never raises:
an unreadable note is reported as such, never as a crash of ``status``.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

from dreamd.logs import get_logger
from memory.fsutil import replace_atomic

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FILE_NAME", "ModelHealth", "health_path", "read_health"]

FILE_NAME = ".model-health.json"
FORMAT = 1

log = get_logger("dreamd.models")


def health_path(spool: Path) -> Path:
    """Where the note lives for the daemon serving ``spool``."""
    return Path(spool) / FILE_NAME


def read_health(path: Path) -> dict[str, Any] | None:
    """The note, or None when the model is not known to be misconfigured."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return {"state": "unreadable", "error": f"{path}: {exc.strerror}"}
    try:
        doc = json.loads(raw)
    except ValueError:
        return {"state": "unreadable", "error": f"{path}: not valid JSON"}
    if not isinstance(doc, dict) or not isinstance(doc.get("error"), str):
        return {"state": "unreadable", "error": f"{path}: not a model health note"}
    return doc


class ModelHealth:
    """Records what the daemon's model calls say about the configuration; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._written: str | None = None
        self._checked = False

    def misconfigured(
        self, error: str, *, model: str, memory_dir: str | None = None, now: datetime | None = None
    ) -> None:
        """Note a misconfiguration (rewritten only when the reason changes)."""
        with self._lock:
            if self._written == error:
                return
            doc = {
                "format": FORMAT,
                "state": "misconfigured",
                "error": error,
                "model": model,
                "memory_dir": memory_dir,
                "at": (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            if not self.path.parent.is_dir():
                return
            try:
                data = (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()
                replace_atomic(self.path, data, mode=0o600)
            except OSError as exc:  # the job's own outcome still says why; never fail it here
                log.warning("model.health_unwritable", path=str(self.path), error=str(exc))
                return
            self._written = error
            self._checked = True

    def ok(self) -> None:
        """A call succeeded: any standing note is out of date."""
        with self._lock:
            if self._checked and self._written is None:
                return
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("model.health_unwritable", path=str(self.path), error=str(exc))
                return
            self._written = None
            self._checked = True
