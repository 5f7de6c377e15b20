"""``dreamd setup [--undo]``: a working installation in one command, and back."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def cmd_setup(args: argparse.Namespace) -> int:
    import os

    from dreamd.setup.command import dreamd_argv
    from dreamd.setup.main import Options, setup_main, undo_main
    from dreamd.setup.service import subprocess_runner

    runner = subprocess_runner(os.environ)
    if args.undo:
        return undo_main(env=os.environ, runner=runner, out=sys.stdout, dry_run=args.dry_run)
    opts = Options(
        argv=tuple(dreamd_argv(sys.argv[0], sys.executable)),
        roots=tuple(args.root),
        plugin=args.plugin,
        dry_run=args.dry_run,
        config=Path(args.config) if args.config else None,
    )
    return setup_main(opts, env=os.environ, runner=runner, out=sys.stdout)


def _setup(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_setup)
    sp.add_argument("--root", action="append", default=[], metavar="DIR", help="a code root: DIR/*/.memory joins [daemon] roots (repeatable)")
    sp.add_argument("--plugin", action="store_true", help="the Claude Code plugin brings the hooks and the MCP server: record this dreamd for its launcher instead")
    sp.add_argument("--dry-run", action="store_true", help="print every change as a diff and the commands it would run; touch nothing")
    sp.add_argument("--undo", action="store_true", help="restore what setup changed (recorded in $XDG_STATE_HOME/dreamd/setup.json)")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"setup": _setup}
