"""Serving the console: ``dreamd ui`` in the foreground, or a thread of the daemon when
``[ui] enabled`` is set. Either way it binds loopback on a free port unless told otherwise,
and its URL carries a fresh random token."""

from __future__ import annotations

import contextlib
import secrets
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dreamd.config import Config
from memory.errors import ConfigError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
IDLE_TICK = 1.0
"""Seconds between the server's own wake-ups when no request comes."""


class ConsoleServer:
    """One bound console. ``run()`` serves in the calling thread; ``start()`` in a thread of its
    own (the daemon's), stopped by ``stop()``."""

    def __init__(self, config: Config, *, dirs: Sequence[Path] = (), host: str = "127.0.0.1", port: int = 0,
                 allow_remote: bool = False, token: str | None = None) -> None:  # fmt: skip
        from dreamd.console.app import ConsoleState
        from dreamd.console.views import Directories

        if host not in LOOPBACK and not allow_remote:
            raise ConfigError(f"ui: refusing to bind {host}: pass --allow-remote (or [ui] allow_remote) to serve beyond this machine")
        self.host = host
        self.sock = _bind(host, port)
        self.port = int(self.sock.getsockname()[1])
        bracketed = f"[{host}]" if ":" in host else host
        self.state = ConsoleState(
            config=config, token=token or secrets.token_urlsafe(24), port=self.port, hosts={bracketed},
            dirs=Directories(roots=tuple(config.daemon.roots) if not dirs else (), explicit=[Path(d) for d in dirs]),
        )  # fmt: skip
        shown = "127.0.0.1" if host in ("127.0.0.1", "localhost") else bracketed
        self.base = f"http://{shown}:{self.port}/"
        self.url = f"{self.base}?token={self.state.token}"
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def remote(self) -> bool:
        return self.host not in LOOPBACK

    def _make(self) -> Any:
        import asyncio

        import uvicorn

        from dreamd.console.app import create_app

        class QuietServer(uvicorn.Server):
            """uvicorn wakes ten times a second to refresh its Date header and look for a
            stop request; the console wakes once a second (a stop takes up to a second)."""

            async def main_loop(self) -> None:
                counter = 0
                should_exit = await self.on_tick(counter)
                while not should_exit:
                    counter = (counter + 10) % 864000  # on_tick refreshes the Date header at multiples of 10
                    await asyncio.sleep(IDLE_TICK)
                    should_exit = await self.on_tick(counter)

        config = uvicorn.Config(create_app(self.state), log_level="warning", access_log=False, lifespan="off")
        self._server = QuietServer(config)
        return self._server

    def run(self) -> None:
        self._make().run(sockets=[self.sock])

    def start(self) -> None:
        server = self._make()
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [self.sock]}, name="console", daemon=True)
        self._thread.start()

    def publish(self, spool: Path) -> None:
        """Tell ``dreamd status`` where this (the daemon's) console is."""
        from dreamd.status.console import write_state

        write_state(spool, url=self.url, base=self.base)

    @staticmethod
    def withdraw(spool: Path) -> None:
        from dreamd.status.console import clear_state

        clear_state(spool)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self.sock.close()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: a response's head and body leave at once instead of
    # the body waiting ~40 ms for the client's delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"ui: cannot bind {host}:{port}: {exc.strerror}") from None
    sock.listen(64)
    return sock


def serve(config: Config, *, dirs: Sequence[Path] = (), host: str = "127.0.0.1", port: int = 0,
          allow_remote: bool = False) -> int:  # fmt: skip
    """``dreamd ui``: serve until SIGINT/SIGTERM. Binding anything but loopback needs
    ``allow_remote`` and prints a warning: the token is then all that guards every memory."""
    server = ConsoleServer(config, dirs=dirs, host=host, port=port, allow_remote=allow_remote)
    if server.remote:
        print(f"dreamd: ui: WARNING: serving on {host}, reachable from other machines; anyone with the URL can change memory",
              file=sys.stderr)  # fmt: skip
    print(f"dreamd console: {server.url}", flush=True)
    server.run()
    return 0
