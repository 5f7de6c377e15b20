"""``dreamd submit`` and ``dreamd retry``: a transcript into the spool, failed jobs back into it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import EXIT_OK, TRANSCRIPT_FORMATS, config_of


def cmd_submit(args: argparse.Namespace) -> int:
    from memory.client import submit
    from memory.errors import JobRejected

    config = config_of(args)
    limit = config.retention.max_job_bytes
    content: str | bytes | Path
    if args.file == "-":
        content = sys.stdin.buffer.read(limit + 1)
        if len(content) > limit:
            raise JobRejected(f"transcript on stdin is over the {limit}-byte job limit; not read")
    else:
        content = Path(args.file)  # read by submit with a size check first
    job_id = submit(
        content,
        memory_dir=str(Path(args.memory_dir).resolve()),
        session_id=args.session,
        format=args.format,
        spool=config.daemon.spool,
        max_job_bytes=limit,
    )
    print(job_id)
    return EXIT_OK


def cmd_retry(args: argparse.Namespace) -> int:
    from memory.spool.queue import Spool

    config = config_of(args)
    moved = Spool(config.daemon.spool).retry(args.jobs or None)
    print(f"requeued {len(moved)} job(s)")
    return EXIT_OK


def _submit(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_submit)
    sp.add_argument("file", metavar="FILE|-")
    sp.add_argument("--memory-dir", required=True, metavar="DIR")
    sp.add_argument("--session", metavar="ID")
    sp.add_argument("--format", default="auto", choices=TRANSCRIPT_FORMATS)


def _retry(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_retry)
    sp.add_argument("jobs", nargs="*", metavar="JOB")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"submit": _submit, "retry": _retry}
