"""``dreamd log`` and ``dreamd rollback``: the generations that changed the set, and going back."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import DIR_HELP, EXIT_OK, open_store_of


def cmd_log(args: argparse.Namespace) -> int:
    from memory.store.history import log_entries, render_log, render_log_json
    from memory.store.transaction import open_store

    entries = log_entries(open_store(Path(args.dir)), limit=args.limit, every=args.all)
    sys.stdout.write(render_log_json(entries) + "\n" if args.json else render_log(entries))
    return EXIT_OK


def cmd_rollback(args: argparse.Namespace) -> int:
    from memory.store.history import rollback

    result = rollback(open_store_of(args), to=args.to)
    print(
        f"rolled back to generation {args.to} as generation {result.generation}: "
        f"{len(result.added)} restored, {len(result.updated)} reverted, {len(result.removed)} removed"
    )
    return EXIT_OK


def _log(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_log)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--limit", type=int, default=None, metavar="N")
    sp.add_argument("--all", action="store_true", help="also generations that changed no record (kept by stores from before such commits stopped making one)")


def _rollback(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_rollback)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--to", type=int, required=True, metavar="GEN")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"log": _log, "rollback": _rollback}
