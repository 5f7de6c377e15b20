"""``dreamd sync`` and ``dreamd merge-driver``: a memory directory shared through git."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import EXIT_OK


def cmd_sync(args: argparse.Namespace) -> int:
    from dreamd.sync.flow import sync
    from dreamd.sync.merge_driver import install_merge_driver

    if args.install_merge_driver:
        for path in install_merge_driver(Path(args.dir)):
            print(f"merge driver configured; wrote {path} (commit it)")
        return EXIT_OK
    report = sync(Path(args.dir), remote=args.remote, allow_rewrite=args.allow_rewrite,
                  squash_unpushed=args.squash_unpushed)
    print("\n".join(report.lines()))
    return EXIT_OK


def cmd_merge_driver(args: argparse.Namespace) -> int:
    from dreamd.sync.merge_driver import merge_driver

    return merge_driver(Path(args.base), Path(args.ours), Path(args.theirs))


def _sync(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_sync)
    sp.add_argument("dir", metavar="DIR")
    sp.add_argument("--remote", metavar="URL", help="attach DIR to this git remote (first call)")
    sp.add_argument("--allow-rewrite", action="store_true", help="take in a remote whose history was rewritten")
    sp.add_argument("--squash-unpushed", action="store_true",
                    help="after a push refused for a secret (forgotten or redacted since): publish the current set "
                         "as one commit, leaving out the unpushed generations that held it")
    sp.add_argument("--install-merge-driver", action="store_true", help="DIR is tracked in a project repository: configure the three-way manifest merge driver there")


def _merge_driver(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_merge_driver)
    sp.add_argument("base", metavar="BASE")
    sp.add_argument("ours", metavar="OURS")
    sp.add_argument("theirs", metavar="THEIRS")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"sync": _sync, "merge-driver": _merge_driver}
