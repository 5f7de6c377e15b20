"""What a memory directory holds on disk, by name (DESIGN §2): the vocabulary every module that
reads or writes one shares, so a file name or pattern is defined once.

``manifest.json`` is the authority, ``MEMORY.md`` the derived index, ``<slug>-<10 hex>.md`` a
record dreamd wrote (:data:`OUR_FILE_RE`), any other top-level ``*.md`` a record someone else
wrote, and ``.history/`` what the set stopped naming. Nothing here writes; the store
(:mod:`memory.store.transaction`), the archive (:mod:`memory.store.archive`), reconcile, adoption, rollback and
sync all build on these names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memory.errors import RecordError, UnsafeFileError
from memory.fsutil import open_regular, printable

MANIFEST = "manifest.json"
INDEX = "MEMORY.md"
HISTORY = ".history"
OUR_FILE_RE = re.compile(r"(?P<name>[a-z0-9][a-z0-9_-]{0,63})-(?P<id>[0-9a-f]{10})\.md\Z")
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
MAX_RECORD_FILE_BYTES = 80 * 1024
"""The most of a record file ever read: frontmatter (8 KiB) and body (64 KiB) with room for a
BOM and CRLF line ends; a larger file is reported, not read (DESIGN §2, "A directory is not trusted")."""
MAX_MANIFEST_BYTES = 256 * 1024 * 1024
"""The most of a ``manifest.json`` ever read (a set of 100,000 records is about 50 MB)."""
MAX_INDEX_BYTES = 4 * 1024 * 1024
"""The most of a ``MEMORY.md`` ever read (dreamd renders at most ``index_max_bytes``)."""


def history_manifest_name(generation: int) -> str:
    """The name, inside ``.history/``, of the manifest of ``generation``."""
    return f"manifest-{generation}.json"


def record_file_name(name: str) -> str:
    """A fresh file name for a record dreamd writes (created with ``link()``, never reused)."""
    return f"{name}-{os.urandom(5).hex()}.md"


def record_files(directory: Path) -> list[Path]:
    """Every top-level ``*.md`` of ``directory`` that may be a record (not MEMORY.md, not hidden),
    sorted; whether it is named by the manifest or well-formed is the caller's question."""
    out = []
    with os.scandir(directory) as it:
        for de in it:
            if is_record_name(de.name) and not de.is_dir(follow_symlinks=False):
                out.append(Path(de.path))
    return sorted(out)


def is_record_name(name: str) -> bool:
    """Whether a top-level name may be a record file: ``*.md``, not MEMORY.md, not hidden.
    A name that is not valid UTF-8 (``caf\xe9.md``) still is one; :func:`bad_file_name` says
    why it cannot be taken in."""
    return name.endswith(".md") and name != INDEX and not name.startswith(".")


def bad_file_name(directory: Path, name: str) -> str | None:
    """Why a record file's name cannot go into a manifest (None when it can): bytes that are
    not UTF-8 (``os.listdir`` hands them over as surrogates, which JSON cannot hold), or a
    line break (it would split MEMORY.md's link line in two)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{directory / shown_name(name)}: file name is not valid UTF-8; rename it to take it in"
    if "\n" in name or "\r" in name:
        return f"{printable(directory / name)}: file name holds a line break; rename it to take it in"
    return None


def shown_name(name: str) -> str:
    """``name`` as it can be printed and logged: bytes that are not UTF-8 as ``\\xe9``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def manifest_merge_attribute(directory: Path) -> str | None:
    """The line of ``directory/.gitattributes`` that gives ``manifest.json`` a merge other than
    dreamd's (``manifest.json merge=union``, ``*.json merge=text``), None when there is none.
    git merges such a manifest as text: ``union`` keeps both sides' lines and leaves invalid JSON
    behind, which is what a reader then meets. The last matching line wins, as in git."""
    try:
        text = open_regular(directory / ".gitattributes", max_bytes=256 * 1024).decode("utf-8", "replace")
    except (OSError, UnsafeFileError):
        return None
    found: str | None = None
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#") or parts[0] not in (MANIFEST, "*.json", "*", f"**/{MANIFEST}", f"/{MANIFEST}"):
            continue
        merges = [a for a in parts[1:] if a in ("merge", "-merge", "!merge") or a.startswith("merge=")]
        if merges:
            found = None if merges[-1] == "merge=dreamd-manifest" else line.strip()
    return found


def read_regular(path: Path, *, single_link: bool = False) -> bytes:
    """A record file's bytes, never through a symlink, from a FIFO/device or over
    :data:`MAX_RECORD_FILE_BYTES`.

    Records are files *inside* the directory (DESIGN §2.2): a link whose content lives
    elsewhere is reported as malformed, not followed; ``single_link`` also refuses a file with
    a second hard link (a file about to be taken in). FileNotFoundError passes through.
    """
    try:
        return open_regular(path, max_bytes=MAX_RECORD_FILE_BYTES, single_link=single_link)
    except UnsafeFileError as exc:
        raise RecordError(str(exc)) from None


__all__ = [
    "ARCHIVE_SUFFIX",
    "HISTORY",
    "HISTORY_MANIFEST_RE",
    "INDEX",
    "MANIFEST",
    "MAX_INDEX_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_RECORD_FILE_BYTES",
    "ORPHAN_PREFIX",
    "OUR_FILE_RE",
    "PREVIOUS_INDEX_PREFIX",
    "bad_file_name",
    "history_manifest_name",
    "is_record_name",
    "manifest_merge_attribute",
    "read_regular",
    "record_file_name",
    "record_files",
    "shown_name",
]
