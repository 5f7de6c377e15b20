"""The ``dreamd`` command line (DESIGN §10, stable): a thin dispatcher.

Exit codes: 0 success, 1 failure (one line on stderr naming what and where), 2 usage.
:data:`COMMANDS` names every command, its help line and its group's module
(``dreamd/cli/<group>.py``). Only the group of the command being run is imported; its
``ARGUMENTS[command](parser)`` adds that command's arguments and handler, and every handler
imports what it runs, so ``dreamd hook`` and ``dreamd submit`` stay fast and never load
anthropic, watchdog or apscheduler.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from dreamd.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, PLACED_COMMANDS, place_dir

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

COMMANDS: tuple[tuple[str, str, bool, str], ...] = (
    # (command, group module, takes --config, help), in the order `dreamd --help` lists them
    ("run", "daemon", True, "foreground daemon (what the service runs)"),
    ("once", "daemon", True, "drain the spool, reconcile, run due dreams, exit"),
    ("status", "status", True, "records, generation, gates, lease, spool depth, failures"),
    ("init", "directory", True, "create an empty managed memory directory (inside [daemon] roots)"),
    ("adopt", "directory", False, "take an existing directory (e.g. Claude Code's) under management"),
    ("submit", "spool", True, "enqueue a transcript, print the job id"),
    ("explain", "explain", False, "what the offline extractor keeps from a transcript, and which rule decided, turn by turn"),
    ("hook", "hook", False, "Claude Code hooks: enqueue the session, answer SessionStart/UserPromptSubmit with memory"),
    ("remember", "records", True, "add or update one record"),
    ("forget", "records", True, "remove records (kept in .history/)"),
    ("recall", "recall", True, "the records relevant to a query"),
    ("consolidate", "dreams", True, "run a dream now (gates bypassed with --force; the lease never)"),
    ("log", "history", True, "generations that changed the set: what was added, merged, removed, by which session or dream"),
    ("rollback", "history", True, "commit a new generation equal to an old one"),
    ("retry", "spool", True, "failed/ -> new/"),
    ("pause", "dreams", True, "close the enabled gate (kept in the directory)"),
    ("resume", "dreams", True, "reopen the enabled gate"),
    ("setup", "setup", True, "make a working installation: Claude Code hooks (absolute path), the MCP server, the config's roots, the service; --undo puts it all back"),
    ("demo", "demo", False, "the newcomer's tour: sample transcript -> memories -> dream, offline"),
    ("sync", "sync", False, "attach to / clone from a git remote, then fetch, merge (three-way manifest merge) and push"),
    ("merge-driver", "sync", False, "git merge driver for manifest.json (%%O %%A %%B)"),
    ("doctor", "doctor", True, "config, permissions, inotify limits, model reachability, Claude Code hooks run as Claude Code runs them, MCP server, service"),
    ("mcp", "mcp", True, "MCP server over stdio (recall, list_memories, get_memory, remember, forget, memory_log)"),
    ("ui", "ui", True, "local web console: see, search, compare and undo memory in a browser"),
)  # fmt: skip


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil: argparse's formatter
    asks it for every argument added, and shutil brings zlib, bz2 and lzma (issue 20)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse prints usage and exits 2 on its own
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"dreamd: {_redacted(message)}\n")


def _redacted(message: str) -> str:
    """An error line as it may be shown: errors quote what they were given, which may hold a
    secret (``--name ci-token-<token>``), so it goes through the redactor first (issue 22)."""
    from memory.store.redaction import redact_words

    return redact_words(message)


def _fail(message: str) -> None:
    print(f"dreamd: {_redacted(message)}", file=sys.stderr)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line. With ``only``, just that subcommand is built (building all of them is
    most of a command's start-up after the interpreter's own); an unknown ``only`` builds all,
    so the usage error lists every command."""
    p = _Parser(prog="dreamd", description="Long-term memory for LLM agents, kept by a daemon.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, group, config, help_ in [c for c in COMMANDS if c[0] == only] or COMMANDS:
        sp = sub.add_parser(name, help=help_, description=help_)
        if config:
            sp.add_argument("--config", metavar="F", help="config file (default: $DREAMD_CONFIG, then $XDG_CONFIG_HOME/dreamd/config.toml)")
        import_module(f"dreamd.cli.{group}").ARGUMENTS[name](sp)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # Fast path: the hook runs at every session end and must never disturb the agent.
        from dreamd.hook.main import main as hook_main

        return int(hook_main())
    only = argv[0] if argv and not argv[0].startswith("-") else None
    args = build_parser(only).parse_args(argv)
    from memory.errors import DreamdError, UsageError

    try:
        if args.command in PLACED_COMMANDS:
            place_dir(args)
        code: int = args.handler(args)
        return code
    except DreamdError as exc:
        _fail(str(exc))
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_FAILURE
    except BrokenPipeError:
        # `dreamd status --json | head`: the reader left; that is not our failure.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except FileNotFoundError as exc:
        _fail(f"{exc.filename}: no such file or directory")
        return EXIT_FAILURE
    except PermissionError as exc:
        _fail(f"{exc.filename}: permission denied")
        return EXIT_FAILURE
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""  # every dreamd write names its file (fsutil)
        _fail(f"{where}{exc.strerror or exc}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
