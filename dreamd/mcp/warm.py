"""The embedding model of a long-running ``dreamd mcp``: loaded once, in the background, shared.

With ``[recall] embeddings`` set, the server loads the model in a daemon thread once its
``initialize`` answer is on the wire (:meth:`WarmEmbedder.start`, called by
:class:`dreamd.mcp.early.WireOut`), never before: ``initialize`` stays as fast as without it.
Every ``recall`` call then uses that one model (:meth:`WarmEmbedder.get`); a call that comes
while it is still loading waits for it, at most :data:`LOAD_WAIT` seconds. A model that cannot
load (the extra not installed, a wrong file) is one warning line and a ``fallback_reason`` in
each recall answer; recall selects by keyword then. Without the key nothing of it is imported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.retrieval.embed import QueryEmbedder

__all__ = ["LOAD_WAIT", "WarmEmbedder"]

log = logging.getLogger("dreamd.mcp")

LOAD_WAIT = 60.0
"""Seconds a recall waits for a model still loading (a load takes about one on a quiet machine)."""


def _load(name: str) -> QueryEmbedder:
    from dreamd.embeddings.model import load

    return load(name)


class WarmEmbedder:
    """Model ``name``, loaded at most once per process (by ``load``: the packaged model)."""

    def __init__(self, name: str, *, load: Callable[[str], QueryEmbedder] = _load) -> None:
        self.name = name
        self._load = load
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self._embedder: QueryEmbedder | None = None
        self._error: str | None = None

    def start(self) -> None:
        """Begin loading in a daemon thread (a second call does nothing)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._run, name="dreamd-mcp-embeddings", daemon=True).start()

    def _run(self) -> None:
        from memory.errors import DreamdError

        t0 = time.monotonic()
        try:
            self._embedder = self._load(self.name)
            log.info("embedding model %s loaded in %.2f s", self.name, time.monotonic() - t0)
        except DreamdError as exc:  # EmbeddingsUnavailable: one line naming what and where
            self._error = f"{exc}; keyword selection used"
            log.warning("recall: %s", self._error)
        except Exception as exc:  # a broken runtime never takes the server down
            self._error = f"embeddings: {self.name} failed to load ({type(exc).__name__}: {exc}); keyword selection used"
            log.warning("recall: %s", self._error)
        finally:
            self._done.set()

    def get(self, wait: float = LOAD_WAIT) -> tuple[QueryEmbedder | None, str | None]:
        """``(model, None)`` once loaded, else ``(None, why recall selects by keyword)``; starts
        the load if nothing has yet (a client whose first line was not ``initialize``)."""
        self.start()
        if not self._done.wait(wait):
            return None, f"embeddings: {self.name} still loading after {wait:.0f} s; keyword selection used"
        return self._embedder, self._error
