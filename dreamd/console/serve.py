"""``dreamd ui``: bind, print the URL with its token, serve until interrupted."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from dreamd.config import Config

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(
    config: Config,
    *,
    dirs: Sequence[Path] = (),
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    token: str | None = None,
) -> int:
    """Serve the console until SIGINT/SIGTERM. Binding anything but loopback needs
    ``allow_remote`` and prints a warning: the token is then the only thing between the
    network and every memory."""
    import uvicorn

    from dreamd.console.app import ConsoleState, create_app
    from dreamd.console.views import Directories

    if host not in LOOPBACK and not allow_remote:
        print(f"dreamd: ui: refusing to bind {host}: pass --allow-remote to serve beyond this machine", file=sys.stderr)
        return 1
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    state = ConsoleState(
        config=config,
        token=token or secrets.token_urlsafe(24),
        port=bound,
        hosts={host if ":" not in host else f"[{host}]"},
        dirs=Directories(roots=tuple(config.daemon.roots) if not dirs else (), explicit=[Path(d) for d in dirs]),
    )
    shown = "127.0.0.1" if host in ("127.0.0.1", "localhost") else (f"[{host}]" if ":" in host else host)
    if host not in LOOPBACK:
        print(f"dreamd: ui: WARNING: serving on {host}, reachable from other machines; anyone with the URL can change memory", file=sys.stderr)
    print(f"dreamd console: http://{shown}:{bound}/?token={state.token}", flush=True)
    server = uvicorn.Server(uvicorn.Config(create_app(state), log_level="warning", access_log=False, lifespan="off"))
    server.run(sockets=[sock])
    return 0
