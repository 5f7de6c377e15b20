"""What the command groups share: exit codes, the config and store of a command, its directory.

A group module (``dreamd/cli/<group>.py``) maps each of its commands to a function that adds the
command's arguments and its handler (``ARGUMENTS``); :mod:`dreamd.cli.main` imports only the
group of the command being run. Handlers import what they run, so a command's start-up pays for
that command alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from dreamd.config import Config
    from memory.store.transaction import MemoryStore

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


DIR_HELP = (
    "memory directory (default: the one a session started here uses: the nearest managed .memory "
    "up to the git root, then [daemon] projects, then Claude Code's auto-memory directory)"
)

TRANSCRIPT_FORMATS = ("auto", "claude-code", "anthropic", "openai", "text", "codex", "gemini", "copilot")
"""``--format`` of the commands that read a transcript (``submit``, ``explain``)."""


def config_of(args: argparse.Namespace) -> Config:
    from dreamd.config import load_config

    return load_config(Path(args.config) if getattr(args, "config", None) else None)


def open_store_of(args: argparse.Namespace) -> MemoryStore:
    """The store of ``args.dir``, with the config's history window (every committing command)."""
    from memory.store.transaction import open_store

    config = config_of(args)
    return open_store(Path(args.dir), history_generations=config.retention.history_generations)


PLACED_COMMANDS = frozenset({"remember", "forget", "recall", "consolidate", "log", "rollback", "pause", "resume"})
"""Commands whose DIR may be left out: then the directory is the one a session started here
would use (:func:`dreamd.hook.placement.place`), the rule the hook and ``dreamd mcp`` follow."""


def place_dir(args: argparse.Namespace) -> None:
    """Fill in ``args.dir`` when the command was given none (see :data:`PLACED_COMMANDS`)."""
    import os

    from memory.errors import UsageError

    if args.command == "forget" and args.dir is None and len(args.names) > 1:
        first = args.names[0]
        if os.sep in first or first.startswith("~") or os.path.isdir(first):
            args.dir, args.names = first, args.names[1:]  # `dreamd forget DIR NAME…` as before
    if args.dir is not None:
        return
    from dreamd.hook.placement import place

    config = config_of(args)
    cwd = os.getcwd()
    target, why = place(cwd, projects=config.daemon.projects, roots=config.daemon.roots, env=os.environ, check_roots=False)
    if target is None:
        raise UsageError(f"no memory directory for {cwd} ({why}); name one: dreamd {args.command} DIR …")
    if target.adopt and not (target.memory_dir / "manifest.json").is_file():
        raise UsageError(
            f"no memory directory for {cwd} yet (Claude Code's auto-memory {target.memory_dir} is adopted by "
            f"the daemon on the first session; or name one: dreamd {args.command} DIR …)"
        )
    args.dir = str(target.memory_dir)


def quiet_logs(args: argparse.Namespace) -> None:
    """One-shot commands log warnings to stderr, so stdout stays the command's output."""
    import logging

    from dreamd.logs import configure

    configure(getattr(args, "log_format", None) or "auto", stream=sys.stderr, level=logging.WARNING)
