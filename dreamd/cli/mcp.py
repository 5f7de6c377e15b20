"""``dreamd mcp``: the MCP server over stdio, for the project it is started in."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from dreamd.cli.common import config_of


def cmd_mcp(args: argparse.Namespace) -> int:
    import os

    from dreamd.mcp.server import main as mcp_main

    config = config_of(args)
    return int(mcp_main(config, memory_dir=args.memory_dir, cwd=os.getcwd(), env=os.environ))


def _mcp(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_mcp)
    sp.add_argument("--memory-dir", metavar="DIR", help="memory directory to serve (default: the hook's project rules)")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"mcp": _mcp}
