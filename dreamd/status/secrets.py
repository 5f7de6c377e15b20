"""The secret scan of record files that ``dreamd doctor`` runs, with its verdicts kept by content.

Redacting every record file of every managed directory was most of doctor's own work (issue
20). A verdict (the kinds of secret :func:`memory.redact.redact` finds in a file's text) is a
function of the file's bytes and of the redactor's code, so
``$XDG_CACHE_HOME/dreamd/secret-scan.json`` (default ``~/.cache/dreamd``) keeps
``sha256 -> kinds`` under a version that is the hash of ``memory/redact``'s sources.

Invariants:

- Derived and rebuildable, never authoritative: every file is still read and hashed; a hash
  not in the cache, or a cache written by another redactor, means the file is redacted again.
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

__all__ = ["CACHE_NAME", "MAX_CACHE_BYTES", "cache_path", "redactor_version", "scan_secrets"]

CACHE_NAME = "secret-scan.json"
FORMAT = 1
MAX_CACHE_BYTES = 8 * 1024 * 1024


def cache_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/dreamd/secret-scan.json``, else ``~/.cache/dreamd/secret-scan.json``."""
    from memory.settings import cache_home

    return cache_home(env) / CACHE_NAME


def redactor_version() -> str | None:
    """A hash of the redactor's sources (None when they cannot be read: then nothing is cached)."""
    import memory
    from memory.store.records import sha256_hex

    folder = Path(memory.__file__).parent / "redact"
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
        parts = [n.encode() + b"\0" + (folder / n).read_bytes() for n in names]
    except OSError:
        return None
    return sha256_hex(b"\0".join(parts)) if parts else None


def _read(path: Path, version: str) -> dict[str, list[str]]:
    from memory.errors import DreamdError
    from memory.fsutil import open_regular

    try:
        doc = json.loads(open_regular(path, max_bytes=MAX_CACHE_BYTES))
    except (OSError, ValueError, DreamdError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("redactor") != version:
        return {}
    verdicts = doc.get("verdicts")
    if not isinstance(verdicts, dict):
        return {}
    return {
        sha: kinds for sha, kinds in verdicts.items()
        if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)
    }  # fmt: skip


def _write(path: Path, version: str, verdicts: Mapping[str, list[str]]) -> None:
    from memory.settings import write_user_cache

    data = json.dumps({"format": FORMAT, "redactor": version, "verdicts": verdicts}).encode()
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

    version = redactor_version() if cache is not None else None
    known = _read(cache, version) if cache is not None and version is not None else {}
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
    if cache is not None and version is not None and seen != known:
        _write(cache, version, seen)
    return out
