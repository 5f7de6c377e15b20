"""Reading a commit's memory set from git, validated before anything is written (issue 12).

Everything that arrives from a remote passes the same checks as a local file: the manifest parser
(plus the shapes this machine's readers rely on), unique names and files, the record parser with
its size caps, and each file's sha256 against its manifest entry. The first failure refuses the
whole sync with one line naming the file and the commit; nothing is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dreamd.sync.git import Git, SyncError
from memory.errors import DreamdError, StoreError
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import (
    MAX_BODY_BYTES,
    MAX_FRONTMATTER_BYTES,
    NAME_RE,
    parse_record,
    sha256_hex,
)
from memory.store.transaction import MANIFEST, OUR_FILE_RE

MAX_RECORD_BLOB = MAX_FRONTMATTER_BYTES + MAX_BODY_BYTES + 1024
MAX_MANIFEST_BLOB = 64 * 1024 * 1024


def manifest_at(git: Git, commit: str) -> Manifest:
    proc = git.run("cat-file", "blob", f"{commit}:{MANIFEST}", check=False)
    if proc.returncode != 0:
        raise SyncError(f"{git.workdir}: commit {commit[:12]} has no {MANIFEST}")
    return Manifest.loads(proc.stdout, where=f"{MANIFEST} at {commit[:12]}")


@dataclass
class RemoteSet:
    """A commit's manifest with its raw bytes and the tree it was read from, validated."""

    commit: str
    manifest: Manifest
    raw: bytes
    tree: dict[str, tuple[str, str, str]]


def read_remote_set(git: Git, commit: str) -> RemoteSet:
    """A commit's set, refused with one clear line when the manifest or its tree is hostile."""
    where = f"{MANIFEST} at {commit[:12]}"
    tree = git.tree(commit)
    item = tree.get(MANIFEST)
    if item is None or item[1] != "blob":
        raise SyncError(f"{git.workdir}: remote commit {commit[:12]} has no {MANIFEST}; refusing it")
    size = git.sizes([item[2]]).get(item[2], 0)
    if size > MAX_MANIFEST_BLOB:
        raise SyncError(f"{where}: {size} bytes is over the {MAX_MANIFEST_BLOB}-byte limit; refusing it")
    raw = git.blobs([item[2]])[item[2]]
    try:
        manifest = Manifest.loads(raw, where=where)
    except StoreError as exc:
        hint = " (it holds git conflict markers: it was merged as text, not with the dreamd merge driver)" if b"\n<<<<<<< " in raw or raw.startswith(b"<<<<<<< ") else ""
        raise SyncError(f"remote {exc}{hint}; nothing applied") from None
    problem = _shape_problem(manifest)
    if problem:
        raise SyncError(f"{where}: {problem}; nothing applied")
    names: set[str] = set()
    files: set[str] = set()
    for e in manifest.records:
        if not NAME_RE.match(e.name):
            raise SyncError(f"{where}: record name {e.name!r} is not a valid name; nothing applied")
        if e.name in names:
            raise SyncError(f"{where}: record name {e.name!r} appears twice; nothing applied")
        if e.file in files:
            raise SyncError(f"{where}: record file {e.file!r} appears twice; nothing applied")
        if any(ord(c) < 0x20 or c == "\x7f" for c in e.file):
            raise SyncError(f"{where}: record file {e.file!r} has control characters in its name; nothing applied")
        names.add(e.name)
        files.add(e.file)
        entry = tree.get(e.file)
        if entry is None or entry[1] != "blob" or entry[0] not in ("100644", "100755"):
            raise SyncError(f"{where}: names {e.file} ({e.name}) but the commit has no such file; nothing applied")
    return RemoteSet(commit=commit, manifest=manifest, raw=raw, tree=tree)


def _shape_problem(m: Manifest) -> str | None:
    """What the manifest parser lets through but this machine's readers (gates, ``dreamd log``)
    rely on: timestamps that are strings and a ``change`` summary of the documented shape."""
    if m.consolidated_at is not None and not isinstance(m.consolidated_at, str):
        return f"consolidated_at {m.consolidated_at!r} is not a timestamp"
    c = m.change
    for key in ("added", "updated", "removed"):
        value = c.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"change.{key} is not a list of names"
    merged = c.get("merged", [])
    if not isinstance(merged, list) or not all(
        isinstance(op, dict) and isinstance(op.get("from", []), list) and all(isinstance(n, str) for n in op.get("from", []))
        and (op.get("into") is None or isinstance(op.get("into"), str))
        for op in merged
    ):
        return "change.merged is not a list of {from, into} operations"
    for key in ("actor", "job_id", "session_id", "note"):
        if c.get(key) is not None and not isinstance(c.get(key), str):
            return f"change.{key} is not a string"
    return None


def fetch_records(git: Git, remote: RemoteSet, entries: Sequence[ManifestEntry]) -> dict[str, bytes]:
    """The validated bytes of ``entries`` (file -> bytes) from ``remote``'s tree.

    Every file passes the same checks as a local one (size caps, parser, sha256 as named in the
    manifest); the first one that fails refuses the whole sync before anything is written.
    """
    oids = {e.file: remote.tree[e.file][2] for e in entries}
    sizes = git.sizes(sorted(set(oids.values())))
    for e in entries:
        size = sizes.get(oids[e.file], -1)
        if size < 0 or size > MAX_RECORD_BLOB:
            raise SyncError(
                f"remote record {e.file} ({e.name}) at {remote.commit[:12]}: {size} bytes is over the {MAX_RECORD_BLOB}-byte limit; nothing applied"
            )
    blobs = git.blobs(sorted(set(oids.values())))
    out: dict[str, bytes] = {}
    for e in entries:
        data = blobs[oids[e.file]]
        where = f"remote record {e.file} at {remote.commit[:12]}"
        if sha256_hex(data) != e.sha256:
            raise SyncError(f"{where}: sha256 does not match its manifest entry ({e.name}); nothing applied")
        stem = None if OUR_FILE_RE.match(e.file) else Path(e.file).stem
        try:
            parse_record(data, where=where, stem=stem)
        except DreamdError as exc:
            raise SyncError(f"{exc}; nothing applied") from None
        out[e.file] = data
    return out


__all__ = ["MAX_MANIFEST_BLOB", "MAX_RECORD_BLOB", "RemoteSet", "fetch_records", "manifest_at", "read_remote_set"]
