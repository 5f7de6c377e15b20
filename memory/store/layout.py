"""What a memory directory holds on disk, by name (DESIGN §2): the vocabulary every module that
reads or writes one shares, so a file name or pattern is defined once.

``manifest.json`` is the authority, ``MEMORY.md`` the derived index, ``<slug>-<10 hex>.md`` a
record dreamd wrote (:data:`OUR_FILE_RE`), any other top-level ``*.md`` a record someone else
wrote, and ``.history/`` what the set stopped naming. Nothing here writes; the store
(:mod:`memory.store.transaction`), the archive (:mod:`memory.store.archive`), reconcile, adoption, rollback and
sync all build on these names.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from pathlib import Path

from memory.errors import RecordError

MANIFEST = "manifest.json"
INDEX = "MEMORY.md"
HISTORY = ".history"
OUR_FILE_RE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_-]{0,63})-(?P<id>[0-9a-f]{10})\.md$")
"""Files dreamd writes: only these may ever be collected as orphans or pruned from history."""
ORPHAN_PREFIX = "orphan."
"""Prefix of our own files an interrupted commit left unnamed, once moved into ``.history/``.
It keeps them out of pruning: a file only *named* like ours may be a person's."""
ARCHIVE_SUFFIX = ".hist"
"""Every file kept in ``.history/`` ends with this, never with ``.md``: Claude Code reads every
``*.md`` below its memory directory as a live memory, forgotten ones included (DESIGN §2)."""
PREVIOUS_INDEX_PREFIX = "MEMORY.previous-"
"""A copy of an index dreamd itself rendered and replaced, kept one commit to catch late edits."""
HISTORY_MANIFEST_RE = re.compile(r"manifest-(\d+)\.json")


def history_manifest_name(generation: int) -> str:
    """The name, inside ``.history/``, of the manifest of ``generation``."""
    return f"manifest-{generation}.json"


def record_file_name(name: str) -> str:
    """A fresh file name for a record dreamd writes (created with ``link()``, never reused)."""
    return f"{name}-{secrets.token_hex(5)}.md"


def record_files(directory: Path) -> list[Path]:
    """Every top-level ``*.md`` of ``directory`` that may be a record (not MEMORY.md, not hidden),
    sorted; whether it is named by the manifest or well-formed is the caller's question."""
    out = []
    with os.scandir(directory) as it:
        for de in it:
            if de.name.endswith(".md") and de.name != INDEX and not de.name.startswith(".") and de.is_file():
                out.append(Path(de.path))
    return sorted(out)


def read_regular(path: Path) -> bytes:
    """A record file's bytes, never through a symlink or from a FIFO/device.

    Records are files *inside* the directory (DESIGN §2.2): a link whose content lives
    elsewhere is reported as malformed, not followed. FileNotFoundError passes through.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordError(f"{path}: is a symbolic link; only regular files inside the directory are records") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RecordError(f"{path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


__all__ = [
    "ARCHIVE_SUFFIX",
    "HISTORY",
    "HISTORY_MANIFEST_RE",
    "INDEX",
    "MANIFEST",
    "ORPHAN_PREFIX",
    "OUR_FILE_RE",
    "PREVIOUS_INDEX_PREFIX",
    "history_manifest_name",
    "read_regular",
    "record_file_name",
    "record_files",
]
