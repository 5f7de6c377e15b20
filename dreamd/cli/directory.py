"""``dreamd init`` and ``dreamd adopt``: a directory comes under management."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import EXIT_OK


def cmd_init(args: argparse.Namespace) -> int:
    from dreamd.cli.roots import check_init_target
    from memory.store.transaction import MemoryStore

    added = check_init_target(Path(args.dir), add=args.add_root, explicit=Path(args.config) if args.config else None)
    if added:
        print(f"{added} (a running daemon takes it in at its next reload: SIGHUP, or a restart)")
    store = MemoryStore.init(Path(args.dir))
    print(f"initialised {store.path} (generation {store.read().generation})")
    return EXIT_OK


def cmd_adopt(args: argparse.Namespace) -> int:
    from memory.store.adopt import adopt

    report = adopt(Path(args.dir))
    print(f"adopted {args.dir}: {len(report.adopted)} record(s), generation {report.generation}")
    for name in report.notes:
        print(f"  index notes kept as record {name}")
    if report.index_archived:
        print(f"  original MEMORY.md archived as {report.index_archived}")
    for file, reason in report.malformed:
        print(f"  left in place (malformed): {file}: {reason}", file=sys.stderr)
    return EXIT_OK


def _init(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_init)
    sp.add_argument("dir", metavar="DIR")
    sp.add_argument("--add-root", action="store_true", help="DIR is outside [daemon] roots: add it to the config file first")


def _adopt(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_adopt)
    sp.add_argument("dir", metavar="DIR")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"init": _init, "adopt": _adopt}
