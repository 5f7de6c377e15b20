"""The secret scan of record files that ``dreamd doctor`` runs, with its verdicts kept by content.

Redacting every record file of every managed directory was most of doctor's own work (issue
20). A verdict (the kinds of secret :func:`memory.redact.redact` finds in a file's text) is a
function of the file's bytes and of the redactor's code, so
``$XDG_CACHE_HOME/dreamd/secret-scan.json`` (default ``~/.cache/dreamd``) keeps
``sha256 -> kinds`` under a version that is the hash of ``memory/redact``'s sources. Hashing
those sources (~140 KB) is itself ~7 M instructions, so the file also keeps what they were
(name, inode, mtime, ctime and size of each, :func:`source_stamp`): while every one is as it was,
the version kept with them is used without hashing them again (the manifest cache's rule).

Invariants:

- Derived and rebuildable, never authoritative: every file is still read and hashed; a hash
  not in the cache, or a cache written by another redactor, means the file is redacted again.
  A source of the redactor replaced or edited changes its stamp (a new ctime at least), and
  then the sources are hashed again.
  Deleting the file costs the next doctor its scans, nothing else.
- The file holds hashes and kind names only, never a value or any text of a record.
- Never read or written through a symlink, never read over :data:`MAX_CACHE_BYTES` or when
  another user owns it; a cache that cannot be read is ignored and one that cannot be written
  is not kept: the check never fails because of it. It keeps the hashes of the last scan only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # not typing's: doctor's start-up (issue 20)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CACHE_NAME", "MAX_CACHE_BYTES", "cache_path", "redactor_version", "scan_secrets", "source_stamp"]

CACHE_NAME = "secret-scan.json"
FORMAT = 1
MAX_CACHE_BYTES = 8 * 1024 * 1024


def cache_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/dreamd/secret-scan.json``, else ``~/.cache/dreamd/secret-scan.json``."""
    from memory.settings import cache_home

    return cache_home(env) / CACHE_NAME


def _sources() -> tuple[Path, list[str]]:
    """The redactor's folder and its source files' names, sorted (OSError when unlistable):
    what :func:`source_stamp` and :func:`redactor_version` both read."""
    import memory

    folder = Path(memory.__file__).parent / "redact"
    return folder, sorted(n for n in os.listdir(folder) if n.endswith(".py"))


def source_stamp() -> list[list[int | str]] | None:
    """``[name, inode, mtime_ns, ctime_ns, size]`` of each of the redactor's sources, as the
    version hashes them (None when they cannot be listed: then the version is hashed)."""
    try:
        folder, names = _sources()
        stats = [(n, os.stat(folder / n)) for n in names]
    except OSError:
        return None
    return [[n, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size] for n, st in stats]


def redactor_version() -> str | None:
    """A hash of the redactor's sources (None when they cannot be read: then nothing is cached)."""
    from memory.store.records import sha256_hex

    try:
        folder, names = _sources()
        parts = [n.encode() + b"\0" + (folder / n).read_bytes() for n in names]
    except OSError:
        return None
    return sha256_hex(b"\0".join(parts)) if parts else None


def _load(path: Path) -> dict[str, Any]:
    from memory.errors import DreamdError
    from memory.fsutil import open_regular

    try:
        doc = json.loads(open_regular(path, max_bytes=MAX_CACHE_BYTES))
    except (OSError, ValueError, DreamdError):
        return {}
    return doc if isinstance(doc, dict) and doc.get("format") == FORMAT else {}


def _version(doc: Mapping[str, Any], stamp: list[list[int | str]] | None) -> str | None:
    """The redactor's version: the one ``doc`` keeps when its sources' ``stamp`` is unchanged, else hashed."""
    kept = doc.get("redactor")
    if stamp is not None and isinstance(kept, str) and doc.get("sources") == stamp:
        return kept
    return redactor_version()


def _verdicts(doc: Mapping[str, Any], version: str) -> dict[str, list[str]]:
    if doc.get("redactor") != version:
        return {}
    verdicts = doc.get("verdicts")
    if not isinstance(verdicts, dict):
        return {}
    return {
        sha: kinds for sha, kinds in verdicts.items()
        if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)
    }  # fmt: skip


def _write(
    path: Path, version: str, stamp: list[list[int | str]] | None, verdicts: Mapping[str, list[str]]
) -> None:
    from memory.settings import write_user_cache

    doc = {"format": FORMAT, "redactor": version, "sources": stamp, "verdicts": verdicts}
    data = json.dumps(doc).encode()
    if len(data) <= MAX_CACHE_BYTES:
        write_user_cache(path, data)


def scan_secrets(
    files: Sequence[tuple[Path, bytes]], cache: Path | None
) -> list[tuple[list[str], list[str]]]:
    """The kinds of secret in each ``(path, bytes)``: in its bytes, and in its name when that
    is not one dreamd made (``<name>-<10 hex>.md``); empty lists: none. Only files whose bytes
    (or names) the cache at ``cache`` (None: no cache) has no verdict for are redacted; a
    name's verdict is kept under the hash of ``name:<stem>``, so the cache holds no name."""
    from memory.store.layout import OUR_FILE_RE
    from memory.store.records import sha256_hex

    doc = _load(cache) if cache is not None else {}
    stamp = source_stamp() if cache is not None else None
    version = _version(doc, stamp) if cache is not None else None
    known = _verdicts(doc, version) if version is not None else {}
    out: list[tuple[list[str], list[str]]] = []
    seen: dict[str, list[str]] = {}
    for path, data in files:
        sha = sha256_hex(data)
        kinds = known.get(sha)
        if kinds is None:
            from memory.redact import redact

            kinds = redact(data.decode("utf-8", "replace"))[1]
        seen[sha] = kinds
        named: list[str] = []
        if not OUR_FILE_RE.match(path.name):
            key = sha256_hex(b"name:" + path.stem.encode("utf-8", "surrogateescape"))
            found = known.get(key)
            if found is None:
                from memory.redact import name_kinds

                found = name_kinds(path.stem)
            seen[key] = named = found
        out.append((kinds, named))
    if cache is not None and version is not None and (seen != known or doc.get("sources") != stamp):
        _write(cache, version, stamp, seen)
    return out
