"""``dreamd ui``: the local web console."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import config_of, quiet_logs


def cmd_ui(args: argparse.Namespace) -> int:
    from dreamd.console.serve import serve

    config = config_of(args)
    quiet_logs(args)
    return serve(config, dirs=[Path(d) for d in args.dirs], host=args.host, port=args.port, allow_remote=args.allow_remote)


def _ui(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_ui)
    sp.add_argument("dirs", nargs="*", metavar="DIR", help="directories to show (default: every managed directory under the roots)")
    sp.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sp.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    sp.add_argument("--allow-remote", action="store_true", help="allow binding an address other machines reach (prints a warning)")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"ui": _ui}
