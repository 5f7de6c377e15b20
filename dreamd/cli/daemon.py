"""``dreamd run`` and ``dreamd once``: the daemon in the foreground, or one pass of it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import config_of


def cmd_run(args: argparse.Namespace) -> int:
    from dreamd.daemon.supervisor import run

    config = config_of(args)
    return int(run(config, config_path=Path(args.config) if args.config else None, log_format=args.log_format))


def cmd_once(args: argparse.Namespace) -> int:
    from dreamd.daemon.supervisor import once

    config = config_of(args)
    return int(once(config, log_format=args.log_format))


def _log_format(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--log-format", choices=("auto", "json", "console"), default=None)


def _run(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_run)
    _log_format(sp)


def _once(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_once)
    _log_format(sp)


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"run": _run, "once": _once}
