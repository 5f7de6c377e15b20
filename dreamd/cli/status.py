"""``dreamd status``: the daemon, the model, the spool and every directory, in one report."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import EXIT_OK, config_of


def cmd_status(args: argparse.Namespace) -> int:
    from dreamd.status.collect import collect_status, render_status

    config = config_of(args)
    status = collect_status(config, [Path(d) for d in args.dirs] or None)
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_status(status))
    return EXIT_OK


def _status(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_status)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("dirs", nargs="*", metavar="DIR")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"status": _status}
