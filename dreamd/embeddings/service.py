"""The daemon's embedding service: the model kept warm, caches kept current, a query socket.

Started by the daemon only when ``[recall] embeddings`` is set. One thread loads the model
(a failure is one ``embeddings.unavailable`` warning; the daemon runs on, recall stays
keyword-only) and then embeds: every managed directory once at start (a 10,000-record set in
the background, checkpointed, progress in ``dreamd status``), then each directory a job or a
dream committed to (only the records whose hash is new). Another thread answers the hook on
``<state>/embed.sock``: one JSON line ``{"dir", "query", "limit", "exclude"}`` in, one
``{"names": [...]}`` out, for managed directories only.

The socket is created owner-only (umask 0o177 around bind, in a folder made 0o700 when
created) and a stale socket file of ours is replaced; anything else at that path is left
alone and the service does not listen.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dreamd.embeddings.client import MAX_ANSWER, connect_address, socket_path
from dreamd.embeddings.model import Embedder, EmbeddingsUnavailable, load
from dreamd.logs import get_logger

log = get_logger("dreamd.embeddings")

MAX_REQUEST = 256 * 1024
CONNECTION_TIMEOUT = 1.0
RECHECK = 60.0
"""Seconds between passes over every managed directory (a pass over an embedded set costs a
manifest read and a stat of its cache)."""


class EmbeddingService:
    def __init__(
        self,
        model: str,
        state_dir: Path,
        managed: Callable[[], Iterable[Path]],
        *,
        loader: Callable[[str], Embedder] = load,
    ) -> None:
        self.model_name = model
        self.state_dir = state_dir
        self.socket_path = socket_path(state_dir)
        self.managed = managed
        self.loader = loader
        self.embedder: Embedder | None = None
        self.error: str | None = None
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._warm: set[Path] = set()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        t = threading.Thread(target=self._run, name="embeddings", daemon=True)
        t.start()
        self._threads.append(t)

    def changed(self, directory: Path) -> None:
        """A commit happened in ``directory``: embed what it added or edited."""
        self._queue.put(directory)

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            with contextlib.suppress(OSError):
                st = os.lstat(self.socket_path)
                if stat.S_ISSOCK(st.st_mode):
                    os.unlink(self.socket_path)
        for t in self._threads:
            t.join(timeout=2.0)

    def _run(self) -> None:
        try:
            self.embedder = self.loader(self.model_name)
        except EmbeddingsUnavailable as exc:
            self.error = str(exc)
            log.warning("embeddings.unavailable", model=self.model_name, error=str(exc))
            return
        log.info("embeddings.loaded", model=self.model_name)
        self._listen()
        for d in sorted(self.managed()):
            self._queue.put(d)
        while not self._stop.is_set():
            try:
                directory = self._queue.get(timeout=RECHECK)
            except queue.Empty:
                for d in sorted(self.managed()):  # dreams, reconciles, hand edits
                    self._refresh(d)
                continue
            if directory is None:
                return
            self._refresh(directory)

    def _refresh(self, directory: Path) -> None:
        from dreamd.embeddings.refresh import update_directory

        assert self.embedder is not None
        try:
            done, total = update_directory(directory, self.embedder, should_stop=self._stop.is_set)
        except Exception as exc:  # a cache is never worth stopping the daemon for
            log.warning("embeddings.failed", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}")
            return
        if done:
            log.info("embeddings.updated", memory_dir=str(directory), embedded=done, records=total)
        if directory not in self._warm:  # the first prompt then finds the index and vectors loaded
            from memory.retrieval.recall import fused_names

            with contextlib.suppress(Exception):
                fused_names(directory, "warm up", 1, embedder=self.embedder)
            self._warm.add(directory)

    # ------------------------------------------------------------------ the socket

    def _listen(self) -> None:
        path = self.socket_path
        try:
            if not self.state_dir.exists():
                self.state_dir.mkdir(parents=True, mode=0o700)
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(path)
                if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
                    raise OSError(f"{path}: exists and is not our socket; not listening")
                os.unlink(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address, fd = connect_address(path)
            old = os.umask(0o177)
            try:
                sock.bind(address)
            finally:
                os.umask(old)
                if fd is not None:
                    os.close(fd)
            sock.listen(16)
            sock.settimeout(0.5)
        except OSError as exc:
            log.warning("embeddings.socket_error", path=str(path), error=str(exc))
            return
        self._sock = sock
        t = threading.Thread(target=self._serve, name="embeddings-socket", daemon=True)
        t.start()
        self._threads.append(t)

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    self._answer(conn)
                except (BrokenPipeError, ConnectionResetError, TimeoutError):
                    pass  # the hook gave up waiting and selected by keyword, as designed
                except Exception as exc:
                    log.warning("embeddings.query_failed", error=f"{type(exc).__name__}: {exc}")

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(CONNECTION_TIMEOUT)
        data = b""
        while not data.endswith(b"\n") and len(data) <= MAX_REQUEST:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        reply = self.query(data)
        out = json.dumps(reply, ensure_ascii=False).encode("utf-8")
        conn.sendall(out[:MAX_ANSWER] + b"\n")

    def query(self, data: bytes) -> dict[str, Any]:
        """One request's answer (also used by tests without a socket)."""
        from memory.retrieval.recall import fused_names

        try:
            req = json.loads(data)
        except ValueError:
            return {"error": "request is not JSON"}
        if not isinstance(req, dict):
            return {"error": "request is not an object"}
        directory, query, limit, exclude = req.get("dir"), req.get("query"), req.get("limit"), req.get("exclude", [])
        if not (isinstance(directory, str) and isinstance(query, str) and isinstance(limit, int)
                and isinstance(exclude, list) and all(isinstance(e, str) for e in exclude)):
            return {"error": "expected dir, query, limit and exclude"}
        real = Path(os.path.realpath(directory))
        if real not in {Path(os.path.realpath(d)) for d in self.managed()}:
            return {"error": "not a managed directory"}
        if self.embedder is None:
            return {"error": "model not loaded"}
        limit = max(0, min(limit, 100))
        return {"names": fused_names(real, query, limit, embedder=self.embedder, exclude=exclude)}


def for_config(recall: Any, state_dir: Path, managed: Callable[[], Iterable[Path]]) -> EmbeddingService | None:
    """The daemon's service, or None when ``[recall] embeddings`` is unset (nothing imported)."""
    return EmbeddingService(recall.embeddings, state_dir, managed) if recall.embeddings else None
