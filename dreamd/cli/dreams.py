"""``dreamd consolidate``, ``dreamd pause`` and ``dreamd resume``: a dream now, and its gate."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import DIR_HELP, EXIT_FAILURE, EXIT_OK, config_of, quiet_logs


def cmd_consolidate(args: argparse.Namespace) -> int:
    from dreamd.jobs.work import Context, dream
    from memory.store.transaction import open_store

    config = config_of(args)
    quiet_logs(args)
    open_store(Path(args.dir))
    ctx = Context.create(config)
    result = dream(Path(args.dir), ctx, force=args.force, dry_run=args.dry_run)
    if args.dry_run and result.status == "dry-run":
        from dreamd.jobs.preview import render_plan

        sys.stdout.write(render_plan(Path(args.dir), result.plan))
        return EXIT_OK
    if result.status in ("applied", "nothing"):
        ops = len(result.plan)
        print(f"dream {result.status}: {ops} operation(s), generation {result.generation}")
        return EXIT_OK
    if result.status == "gated" and result.gates is not None:
        print(f"dream not run: gates closed ({result.reason}); use --force to bypass the gates")
        return EXIT_OK
    print(f"dreamd: dream {result.status}: {result.reason}", file=sys.stderr)
    return EXIT_FAILURE


def cmd_pause(args: argparse.Namespace) -> int:
    from dreamd.jobs.gates import pause
    from memory.store.transaction import open_store

    open_store(Path(args.dir))
    pause(Path(args.dir), reason=args.reason)
    print(f"paused dreams in {args.dir}")
    return EXIT_OK


def cmd_resume(args: argparse.Namespace) -> int:
    from dreamd.jobs.gates import resume
    from memory.store.transaction import open_store

    open_store(Path(args.dir))
    resume(Path(args.dir))
    print(f"resumed dreams in {args.dir}")
    return EXIT_OK


def _consolidate(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_consolidate)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--force", action="store_true")
    sp.add_argument("--dry-run", action="store_true")


def _pause(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_pause)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--reason", default=None)


def _resume(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_resume)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "consolidate": _consolidate, "pause": _pause, "resume": _resume,
}
