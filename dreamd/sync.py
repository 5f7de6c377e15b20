"""Team memory through git: ``dreamd sync DIR [--remote URL]`` (issue 12).

The memory directory is the git work tree (``DIR/.git``), but git never writes into it: every
change that arrives from the remote goes through the store's commit protocol (new files created
without clobbering, MEMORY.md rendered, the manifest rename as the commit point, replaced files
moved to ``.history/``), and every git commit is built with plumbing (``hash-object``,
``update-index``, ``commit-tree``) from what the manifests say. So:

* only the files the manifest names, ``manifest.json`` and ``MEMORY.md`` are ever in a git tree;
  ``.history/``, locks, leases and staging files never are (a ``.gitignore`` says so to people);
* each generation this machine committed since the last sync becomes one git commit, in order,
  whose message is that generation's ``dreamd log`` entry and whose author date is its
  ``committed_at`` (generations ``.history/`` no longer keeps are folded into the next one and
  the message says so);
* the remote's set is taken in with the three-way manifest merge (:mod:`memory.merge`) against
  the git merge base; a remote that only moved ahead is installed as it is (same manifest bytes,
  so both machines then share the commit); everything from the remote is validated with the same
  parser and limits as local files before anything is written, and everything about to be pushed
  passes the redaction check first;
* the last remote commit taken in is kept as ``refs/dreamd/synced``: a remote whose history no
  longer contains it was rewritten, and is refused unless the operator passes ``allow_rewrite``.

Runs the real ``git`` so remotes, SSH config and credential helpers work as they do for the user;
``GIT_TERMINAL_PROMPT=0`` keeps a daemon from ever waiting on a password prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import DreamdError, StoreError, TransientError
from memory.fsutil import TMP_PREFIX, fsync_dir, replace_atomic, write_new
from memory.index import render_index
from memory.locks import store_lock
from memory.manifest import Manifest, ManifestEntry, check_file_name, utcnow_iso
from memory.merge import THEIRS, merge_manifests
from memory.records import MAX_BODY_BYTES, MAX_FRONTMATTER_BYTES, NAME_RE, parse_record, sha256_hex
from memory.redact import redact
from memory.store import HISTORY, INDEX, MANIFEST, OUR_FILE_RE, MemoryStore, record_file_name

REMOTE = "origin"
BRANCH = "main"
REMOTE_REF = f"refs/remotes/{REMOTE}/{BRANCH}"
SYNCED_REF = "refs/dreamd/synced"
STATE_FILE = "dreamd-sync.json"
SYNC_LOCK = "dreamd-sync.lock"
ZERO = "0" * 40
MAX_RECORD_BLOB = MAX_FRONTMATTER_BYTES + MAX_BODY_BYTES + 1024
MAX_MANIFEST_BLOB = 64 * 1024 * 1024
PUSH_ATTEMPTS = 5
GITIGNORE = """\
# Written by dreamd sync: only record files, manifest.json and MEMORY.md are shared.
# .history/, .lock, .dream.lock and staging files stay on this machine.
/*
!/*.md
!/manifest.json
/.*
"""


class SyncError(DreamdError):
    """Sync cannot go on as asked (bad remote content, rewritten history, refused push)."""


class SyncTransient(SyncError, TransientError):
    """The remote could not be reached or answered with an error: retry later, work goes on."""


@dataclass
class SyncReport:
    directory: Path
    commits_created: int = 0
    merged: bool = False
    fast_forwarded: bool = False
    pushed: bool = False
    generation: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"synced {self.directory} (generation {self.generation})"]
        if self.commits_created:
            out.append(f"  committed {self.commits_created} local generation(s) to git")
        if self.fast_forwarded:
            out.append("  took the remote's newer set as it is")
        if self.merged:
            out.append("  merged the remote's changes (three-way manifest merge)")
        for label, names in (("added", self.added), ("updated", self.updated), ("removed", self.removed)):
            for n in names:
                out.append(f"  {label:<8} {n}")
        for r in self.renamed:
            out.append(f"  renamed  {r}")
        out.append("  pushed" if self.pushed else "  nothing to push")
        return out


# ---------------------------------------------------------------------------- git


class Git:
    """The ``git`` executable run on one repository, with errors turned into one clear line."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(os.path.abspath(workdir))
        env = dict(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        env.pop("GIT_INDEX_FILE", None)
        self.env = env
        self._identity: list[str] | None = None

    @property
    def git_dir(self) -> Path:
        return self.workdir / ".git"

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=self.workdir,
                input=input,
                capture_output=True,
                env={**self.env, **(env or {})},
                check=False,
            )
        except FileNotFoundError:
            raise SyncError("git: executable not found on PATH (dreamd sync runs the real git)") from None
        if check and proc.returncode != 0:
            raise SyncError(f"{self.workdir}: git {args[0]} failed: {_first_line(proc.stderr)}")
        return proc

    def out(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).stdout.decode().strip()

    def rev(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def identity(self) -> list[str]:
        """``-c user.name=… -c user.email=…`` only when the user configured none."""
        if self._identity is None:
            ident: list[str] = []
            if not self.run("config", "user.name", check=False).stdout.strip():
                ident += ["-c", "user.name=dreamd"]
            if not self.run("config", "user.email", check=False).stdout.strip():
                ident += ["-c", f"user.email=dreamd@{socket.gethostname() or 'localhost'}"]
            self._identity = ident
        return self._identity

    def tree(self, commit: str) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, object id) of a commit's top-level tree (no recursion)."""
        raw = self.run("ls-tree", "-z", commit).stdout
        out: dict[str, tuple[str, str, str]] = {}
        for item in raw.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            out[path.decode("utf-8", "surrogateescape")] = (mode, kind, oid)
        return out

    def sizes(self, oids: Sequence[str]) -> dict[str, int]:
        if not oids:
            return {}
        raw = self.run("cat-file", "--batch-check", input="\n".join(oids).encode() + b"\n").stdout
        out: dict[str, int] = {}
        for line in raw.decode().splitlines():
            parts = line.split()
            if len(parts) == 3:
                out[parts[0]] = int(parts[2])
        return out

    def blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """Many blobs in one ``cat-file --batch`` call."""
        if not oids:
            return {}
        raw = self.run("cat-file", "--batch", input="\n".join(oids).encode() + b"\n").stdout
        out: dict[str, bytes] = {}
        pos = 0
        while pos < len(raw):
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode().split()
            if len(header) != 3:
                raise SyncError(f"{self.workdir}: git cat-file: unexpected answer {header!r}")
            oid, size = header[0], int(header[2])
            out[oid] = raw[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        return out

    def hash_paths(self, paths: Sequence[Path]) -> list[str]:
        if not paths:
            return []
        data = "\n".join(str(p) for p in paths).encode("utf-8", "surrogateescape") + b"\n"
        return self.out("hash-object", "-w", "--no-filters", "--stdin-paths", input=data).split()

    def hash_bytes(self, data: bytes) -> str:
        return self.out("hash-object", "-w", "--no-filters", "--stdin", input=data)


def _first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("hint:", "To "))]
    for ln in useful:
        if ln.startswith(("fatal:", "error:", "remote: error:")):
            return ln
    return (useful or lines or ["(no message)"])[0]


# ---------------------------------------------------------------------------- state


def state_path(directory: Path) -> Path:
    return directory / ".git" / STATE_FILE


def read_state(directory: Path) -> dict[str, Any]:
    try:
        raw = json.loads(state_path(directory).read_bytes())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _write_state(directory: Path, **changes: Any) -> None:
    state = read_state(directory)
    state.update(changes)
    replace_atomic(state_path(directory), (json.dumps(state, indent=2, sort_keys=True) + "\n").encode())


def is_attached(directory: Path) -> bool:
    return (directory / ".git").is_dir()


def backoff_seconds(failures: int, *, base: float = 30.0, cap: float = 3600.0) -> float:
    """Delay before the next automatic attempt after ``failures`` failures in a row."""
    if failures <= 0:
        return 0.0
    return float(min(cap, base * 2 ** (failures - 1)))


def sync_status(directory: Path) -> dict[str, Any] | None:
    """What ``dreamd status`` shows: remote, ahead by N, last sync, last error (None: not attached)."""
    if not is_attached(directory):
        return None
    git = Git(directory)
    state = read_state(directory)
    url = git.run("config", f"remote.{REMOTE}.url", check=False).stdout.decode().strip() or None
    head = git.rev("HEAD")
    ahead = 0
    if head is not None:
        spec = [head] + ([f"^{REMOTE_REF}"] if git.rev(REMOTE_REF) else [])
        proc = git.run("rev-list", "--count", *spec, check=False)
        if proc.returncode == 0:
            ahead = int(proc.stdout.strip() or 0)
    try:
        current = MemoryStore(directory).read().generation
        head_gen = _manifest_at(git, head).generation if head else -1
        pending = max(0, current - head_gen)
    except (StoreError, SyncError):
        pending = 0
    return {
        "remote": url,
        "ahead": ahead + pending,
        "last_sync_at": state.get("last_sync_at"),
        "last_error": state.get("last_error"),
        "last_error_at": state.get("last_error_at"),
        "failures": int(state.get("failures") or 0),
    }


def render_sync_status(s: dict[str, Any]) -> str:
    parts = [f"sync: {s.get('remote') or '(no remote)'}", f"ahead by {s.get('ahead', 0)}"]
    if s.get("last_sync_at"):
        parts.append(f"last sync {s['last_sync_at']}")
    if s.get("last_error"):
        parts.append(f"last sync error ({s.get('last_error_at')}): {s['last_error']}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------- reading remote sets


def _manifest_at(git: Git, commit: str) -> Manifest:
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


# ---------------------------------------------------------------------------- the directory side


def _locate(store: MemoryStore, entry: ManifestEntry) -> Path | None:
    """Where the exact bytes an entry committed are on disk: the directory or ``.history/``."""

    def matches(path: Path) -> bool:
        try:
            return sha256_hex(path.read_bytes()) == entry.sha256
        except OSError:
            return False

    hist = store.path / HISTORY
    for path in (store.path / entry.file, hist / entry.file, hist / f"orphan.{entry.file}"):
        if matches(path):
            return path
    if hist.is_dir():
        for path in sorted(hist.glob(f"{entry.file}.*")):
            if matches(path):
                return path
    return None


BULK_FILES = 16


def _syncfs(directory: Path) -> None:
    """Flush the file system holding ``directory`` (Linux ``syncfs``; elsewhere ``sync``)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if getattr(libc, "syncfs", None) is None or libc.syncfs(fd) != 0:
            os.sync()
    except OSError:
        os.sync()
    finally:
        os.close(fd)


def write_files(directory: Path, files: dict[str, bytes]) -> list[str]:
    """Create every file (never overwriting), its bytes durable before its name appears.

    Few files: :func:`write_new` each (temp, fsync, link). Many (a first clone): every temp file
    is written, then one ``syncfs`` makes them all durable, then they are linked to their names;
    the same guarantee for one flush instead of a thousand. Returns the names created (a name
    already present with the same bytes is skipped; with other bytes it is an error).
    """
    todo: dict[str, bytes] = {}
    for file, data in files.items():
        path = directory / file
        if path.exists():
            if sha256_hex(path.read_bytes()) != sha256_hex(data):
                raise SyncError(f"{path}: exists with other content; refusing to overwrite it")
            continue
        todo[file] = data
    if len(todo) < BULK_FILES:
        for file, data in todo.items():
            write_new(directory / file, data, sync_dir=False)
    else:
        temps: dict[str, Path] = {}
        try:
            for file, data in todo.items():
                tmp = directory / f"{TMP_PREFIX}{os.urandom(8).hex()}"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                temps[file] = tmp
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                finally:
                    os.close(fd)
            _syncfs(directory)
            for file, tmp in temps.items():
                os.link(tmp, directory / file)
        finally:
            for tmp in temps.values():
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
    if todo:
        fsync_dir(directory)
    return list(todo)


def install(store: MemoryStore, old: Manifest, new: Manifest, files: dict[str, bytes], *, raw: bytes | None = None) -> Manifest:
    """Commit ``new`` through the store's protocol (DESIGN §2.3 steps 4–7). Caller holds the lock.

    ``files`` are the incoming records (already validated); a name already on disk with the
    same bytes is reused. ``raw``, when given, are the manifest's exact bytes (a remote set taken
    as it is, so this machine's tree equals the remote commit's); its ``index_sha256`` must match
    the index rendered here.
    """
    write_files(store.path, files)
    index = render_index(new.records, max_lines=store.index_max_lines, max_bytes=store.index_max_bytes)
    if raw is None:
        new.index_sha256 = sha256_hex(index)
        raw = new.dumps()
    elif sha256_hex(index) != new.index_sha256:
        raise SyncError(f"{store.path}: the remote index does not match the one rendered here")
    store._archive_foreign_index(old)  # a hand edit of MEMORY.md since the last commit is kept
    replace_atomic(store.path / INDEX, index, sync_dir=False)
    store._link_history_manifest(old.generation)
    replace_atomic(store.manifest_path, raw)
    store._cache = None
    keep = {e.file for e in new.records}
    store._archive_files([e.file for e in old.records if e.file not in keep])
    store._prune_history(new.generation)
    return new


def _message(m: Manifest, *, folded: Sequence[int] = ()) -> str:
    from memory.history import _entry, render_log

    e = _entry(m)
    counts = f"+{len(e.added)} ~{len(e.updated)} -{len(e.removed)}"
    who = e.actor + (f" job {e.job_id}" if e.job_id else "")
    lines = [f"dreamd generation {m.generation}: {who} ({counts}, {e.records} records)", "", render_log([e]).rstrip()]
    if folded:
        lines += ["", f"Includes generations {folded[0]}–{folded[-1]}, no longer kept in .history/."]
    return "\n".join(lines) + "\n"


class Repo:
    """One attached memory directory: its store and its git repository."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.dir = store.path
        self.git = Git(self.dir)
        self._found: dict[tuple[str, str], Path | None] = {}
        self._manifests: dict[str, Manifest] = {}

    @property
    def private_index(self) -> dict[str, str]:
        """Commits are built in a private index, so a sync killed half-way never leaves the
        user's ``.git/index.lock`` behind (see :meth:`clear_stale_locks`)."""
        return {"GIT_INDEX_FILE": str(self.git.git_dir / "dreamd-index")}

    def clear_stale_locks(self) -> list[str]:
        """Remove git lock files a killed sync left. Caller holds the sync lock (flock, released
        by the kernel when its holder dies), so no other sync of this directory is running; git
        commands a person runs by hand hold theirs for moments, hence the age limit for those."""
        removed: list[str] = []
        git_dir = self.git.git_dir
        candidates = [git_dir / "dreamd-index.lock", git_dir / "HEAD.lock", git_dir / "index.lock",
                      git_dir / "packed-refs.lock", *(git_dir / "refs").rglob("*.lock")]
        now = time.time()
        for path in candidates:
            try:
                age = now - path.stat().st_mtime
            except OSError:
                continue
            if path.name == "dreamd-index.lock" or age > 60:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(str(path.relative_to(git_dir)))
        return removed

    def refresh_user_index(self) -> None:
        """Best effort: the user's index follows HEAD so ``git status`` in DIR stays meaningful."""
        if self.head() is not None:
            self.git.run("read-tree", "HEAD", check=False)

    def _find(self, entry: ManifestEntry) -> Path | None:
        key = (entry.file, entry.sha256)
        if key not in self._found:
            self._found[key] = _locate(self.store, entry)
        return self._found[key]

    # -- attaching

    def attach(self, url: str | None) -> None:
        if url is not None and "://" not in url and os.path.exists(url):
            url = os.path.abspath(url)  # a local path is kept as the same place, whatever the cwd later
        if not is_attached(self.dir):
            if url is None:
                raise SyncError(f"{self.dir}: not attached to a git remote; run 'dreamd sync {self.dir} --remote URL' once")
            self.git.run("init", "-q", "-b", BRANCH)
            self.git.run("config", "core.autocrlf", "false")
        current = self.git.run("config", f"remote.{REMOTE}.url", check=False).stdout.decode().strip()
        if url is not None and current and current != url:
            raise SyncError(
                f"{self.dir}: already attached to {current}; change it with 'git -C {self.dir} remote set-url {REMOTE} URL'"
            )
        if url is not None and not current:
            self.git.run("remote", "add", REMOTE, url)
        elif not current:
            raise SyncError(f"{self.dir}: has a git repository but no '{REMOTE}' remote; run 'dreamd sync {self.dir} --remote URL'")
        ignore = self.dir / ".gitignore"
        if not ignore.exists():
            replace_atomic(ignore, GITIGNORE.encode())

    # -- local generations -> git commits

    def head(self) -> str | None:
        return self.git.rev("HEAD")

    def commit_generations(self, *, parents: list[str] | None = None) -> int:
        """Git commits for local generations newer than HEAD's. Caller holds the store lock.

        Without ``parents``: one commit per generation, in order, on top of HEAD. With
        ``parents`` (a merge, or the remote's set taken in on an unborn HEAD): one commit of the
        current generation with exactly those parents. Returns the number of commits made.
        """
        git = self.git
        head = self.head()
        current = self.store.read()
        head_manifest = self.manifest_at(head) if head else None
        # Blobs HEAD already holds for (file, sha256) pairs need no reading or hashing: HEAD is
        # a commit this machine built from verified files (or a remote one it validated).
        known: dict[tuple[str, str], str] = {}
        if head is not None and head_manifest is not None:
            head_tree = git.tree(head)
            known = {(e.file, e.sha256): head_tree[e.file][2] for e in head_manifest.records if e.file in head_tree}
        if parents is not None:
            gens: list[tuple[Manifest, Path, list[int]]] = [(current, self.store.manifest_path, [])]
            base = parents[0] if parents else None
        else:
            if head_manifest is not None and head_manifest.generation >= current.generation:
                return 0
            gens = self._pending(head_manifest.generation if head_manifest else None, current, known)
            base = head
        paths = self._record_paths(gens, known)
        order = list(paths)
        oids = dict(zip(order, git.hash_paths([paths[k] for k in order]), strict=True))
        oids.update(known)
        git.run("read-tree", *([base] if base else ["--empty"]), env=self.private_index)
        prev = {p: v[2] for p, v in git.tree(base).items()} if base else {}
        parent_args = [a for p in (parents or []) for a in ("-p", p)] if parents is not None else (["-p", head] if head else [])
        made = 0
        commit = head
        for i, (m, mpath, folded) in enumerate(gens):
            want = {e.file: oids[(e.file, e.sha256)] for e in m.records}
            want[MANIFEST] = git.hash_bytes(mpath.read_bytes())
            index_path = self.dir / INDEX
            if i == len(gens) - 1 and index_path.is_file() and sha256_hex(index_path.read_bytes()) == m.index_sha256:
                want[INDEX] = git.hash_paths([index_path])[0]
            else:
                want[INDEX] = git.hash_bytes(
                    render_index(m.records, max_lines=self.store.index_max_lines, max_bytes=self.store.index_max_bytes)
                )
            lines = [f"0 {ZERO}\t{p}" for p in prev if p not in want]
            lines += [f"100644 {oid}\t{p}" for p, oid in want.items() if prev.get(p) != oid]
            if lines:
                data = "".join(f"{ln}\0" for ln in lines).encode("utf-8", "surrogateescape")
                git.run("update-index", "-z", "--index-info", input=data, env=self.private_index)
            tree = git.run("write-tree", env=self.private_index).stdout.decode().strip()
            commit = git.run(
                *git.identity(), "commit-tree", tree, *parent_args,
                input=_message(m, folded=folded).encode(),
                env={"GIT_AUTHOR_DATE": m.committed_at or utcnow_iso()},
            ).stdout.decode().strip()
            parent_args = ["-p", commit]
            prev = want
            made += 1
        if commit and commit != head:
            git.run("update-ref", "HEAD", commit, head or ZERO)
        return made

    def _pending(
        self, head_gen: int | None, current: Manifest, known: dict[tuple[str, str], str]
    ) -> list[tuple[Manifest, Path, list[int]]]:
        """Local generations after ``head_gen`` as ``(manifest, its file, folded gens)``.

        A generation ``.history/`` no longer keeps (manifest or record bytes pruned) is folded
        into the next one, whose commit message says so.
        """
        if head_gen is None:
            # First commit of this directory: its history as far back as .history/ keeps it.
            kept = [g for g in self.store.history_manifests() if g < current.generation]
            start = kept[0] if kept else current.generation
        else:
            start = head_gen + 1
        out: list[tuple[Manifest, Path, list[int]]] = []
        carry: list[int] = []
        for g in range(start, current.generation):
            path = self.store.history_path / f"manifest-{g}.json"
            try:
                m = Manifest.loads(path.read_bytes(), where=str(path))
            except (OSError, StoreError):
                carry.append(g)
                continue
            if any((e.file, e.sha256) not in known and self._find(e) is None for e in m.records):
                carry.append(g)
                continue
            out.append((m, path, carry))
            carry = []
        out.append((current, self.store.manifest_path, carry))
        return out

    def _record_paths(
        self, gens: Sequence[tuple[Manifest, Path, list[int]]], known: dict[tuple[str, str], str]
    ) -> dict[tuple[str, str], Path]:
        paths: dict[tuple[str, str], Path] = {}
        for m, _, _ in gens:
            for e in m.records:
                key = (e.file, e.sha256)
                if key in paths or key in known:
                    continue
                found = self._find(e)
                if found is None:
                    raise SyncError(
                        f"{self.dir / e.file}: does not match its manifest entry ({e.name}); "
                        "run 'dreamd once' to reconcile it (or forget it) before syncing"
                    )
                paths[key] = found
        return paths

    # -- taking the remote's set in

    def integrate(self, theirs_commit: str, report: SyncReport, *, allow_rewrite: bool) -> None:
        """Bring the remote commit into the local set and HEAD. Caller holds the store lock and
        has committed every local generation (HEAD's manifest is the current one)."""
        git = self.git
        head = self.head()
        synced = git.rev(SYNCED_REF)
        if synced is not None and not git.is_ancestor(synced, theirs_commit) and not allow_rewrite:
            raise SyncError(
                f"{self.dir}: the remote's history was rewritten ({synced[:12]}, synced before, is no longer in "
                f"{REMOTE}/{BRANCH}); nothing applied. If that was intended, run 'dreamd sync {self.dir} --allow-rewrite'"
            )
        if head is not None and git.is_ancestor(theirs_commit, head):
            return
        remote = read_remote_set(git, theirs_commit)
        old = self.store.read()
        fresh = head is None and not old.records
        fast = fresh or (head is not None and git.is_ancestor(head, theirs_commit))
        if fast and self._take_as_is(old, remote):
            git.run("update-ref", "HEAD", theirs_commit, head or ZERO)
            report.fast_forwarded = True
            self._describe(old, remote.manifest, report)
            return
        base_commit = git.merge_base(head, theirs_commit) if head else None
        base: Manifest | None = None
        if base_commit is not None:
            try:
                base = self.manifest_at(base_commit)
            except (StoreError, SyncError):
                base = None
        note = f"merged {REMOTE}/{BRANCH} {theirs_commit[:12]}"
        result = merge_manifests(base, old, remote.manifest, now=utcnow_iso(self.store.clock()), note=note)
        current = {(e.file, e.sha256) for e in old.records}
        incoming = [e for e in result.from_theirs if not self._have(e, current)]
        blobs = fetch_records(git, remote, incoming)
        files: dict[str, bytes] = {}
        for i, e in enumerate(result.manifest.records):
            if e.file not in blobs or result.origin[e.name] != THEIRS:
                continue
            data = blobs[e.file]
            target = e.file
            if (self.dir / target).exists() or target in files:
                # A foreign file edited differently on both machines: never overwrite ours.
                target = record_file_name(e.name)
                result.manifest.records[i] = _with_file(e, target)
            files[target] = data
        install(self.store, old, result.manifest, files)
        self.commit_generations(parents=[p for p in (head, theirs_commit) if p])
        report.merged = True
        report.added += result.added
        report.updated += result.updated
        report.removed += result.removed
        report.renamed += [f"{r.name} -> {r.to} ({'this machine' if r.side == 'ours' else 'the remote'}'s version)" for r in result.renamed]

    def manifest_at(self, commit: str) -> Manifest:
        """A commit's manifest; commits never change, so each is parsed once per sync."""
        m = self._manifests.get(commit)
        if m is None:
            m = self._manifests[commit] = _manifest_at(self.git, commit)
        return m

    def _have(self, entry: ManifestEntry, current: set[tuple[str, str]] | None = None) -> bool:
        """The exact bytes of ``entry`` are in the directory already (the current manifest's
        own versions are taken as present: the commit protocol never names a missing file)."""
        if current is not None and (entry.file, entry.sha256) in current:
            return True
        path = self.dir / entry.file
        try:
            return sha256_hex(path.read_bytes()) == entry.sha256
        except OSError:
            return False

    def _take_as_is(self, old: Manifest, remote: RemoteSet) -> bool:
        """Install the remote set byte for byte when it is strictly newer and self-consistent."""
        m = remote.manifest
        if m.generation <= old.generation:
            return False
        index = render_index(m.records, max_lines=self.store.index_max_lines, max_bytes=self.store.index_max_bytes)
        item = remote.tree.get(INDEX)
        if sha256_hex(index) != m.index_sha256 or item is None:
            return False
        if git_blob_id(index) != item[2]:
            return False
        current = {(e.file, e.sha256) for e in old.records}
        incoming = [e for e in m.records if not self._have(e, current)]
        if any((self.dir / e.file).exists() for e in incoming):
            return False
        blobs = fetch_records(self.git, remote, incoming)
        install(self.store, old, m, blobs, raw=remote.raw)
        return True

    @staticmethod
    def _describe(old: Manifest, new: Manifest, report: SyncReport) -> None:
        before = {e.name: (e.file, e.sha256) for e in old.records}
        after = {e.name: (e.file, e.sha256) for e in new.records}
        report.added += [n for n in after if n not in before]
        report.updated += [n for n in after if n in before and before[n] != after[n]]
        report.removed += [n for n in before if n not in after]

    # -- pushing

    def outgoing_secrets(self) -> list[str]:
        """Every record, manifest and index version about to be pushed that holds a secret shape."""
        git = self.git
        head = self.head()
        if head is None:
            return []
        spec = [head] + ([f"^{REMOTE_REF}"] if git.rev(REMOTE_REF) else [])
        listing = git.out("rev-list", "--objects", "--no-object-names", *spec)
        objs = listing.split()
        check = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)", input=("\n".join(objs) + "\n").encode()).stdout.decode()
        blob_ids = [line.split()[0] for line in check.splitlines() if line.endswith(" blob")]
        named = git.out("rev-list", "--objects", *spec)
        names: dict[str, str] = {}
        for line in named.splitlines():
            oid, _, path = line.partition(" ")
            if path:
                names.setdefault(oid, path)
        found: list[str] = []
        for oid, data in git.blobs(blob_ids).items():
            kinds = redact(data.decode("utf-8", "replace"))[1]
            if kinds:
                found.append(f"{names.get(oid, oid[:12])} ({', '.join(kinds)})")
        return sorted(found)

    def push(self) -> bool:
        """Push HEAD; False when the remote moved on (fetch, merge and try again)."""
        leaks = self.outgoing_secrets()
        if leaks:
            raise SyncError(
                f"{self.dir}: refusing to push: {'; '.join(leaks[:5])} look(s) like a secret; "
                "forget or edit the record (dreamd forget) and sync again"
            )
        proc = self.git.run("push", "--porcelain", REMOTE, f"HEAD:refs/heads/{BRANCH}", check=False)
        if proc.returncode == 0:
            return True
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if any(m in text for m in ("[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref")):
            return False  # the remote moved (or another push is landing right now): fetch, merge, retry
        raise SyncTransient(f"{self.dir}: git push to {REMOTE} failed: {_first_line(proc.stderr)}")

    def fetch(self) -> str | None:
        proc = self.git.run(
            "fetch", "--quiet", "--prune", "--no-tags", REMOTE, f"+refs/heads/{BRANCH}:{REMOTE_REF}", check=False
        )
        if proc.returncode != 0:
            text = proc.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in text:
                return None  # an empty remote: nothing to take in yet
            raise SyncTransient(f"{self.dir}: git fetch from {REMOTE} failed: {_first_line(proc.stderr)}")
        return self.git.rev(REMOTE_REF)


def _with_file(entry: ManifestEntry, file: str) -> ManifestEntry:
    import dataclasses

    return dataclasses.replace(entry, file=check_file_name(file, where="merge"))


def git_blob_id(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (sha1), without running git."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@contextlib.contextmanager
def _sync_lock(directory: Path, timeout: float) -> Iterator[None]:
    import filelock

    lock = filelock.FileLock(str(directory / ".git" / SYNC_LOCK), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise SyncTransient(f"{directory}: another sync of this directory is running") from None
    try:
        yield
    finally:
        lock.release()


def _prepare(directory: Path, url: str | None) -> MemoryStore:
    """The store to sync; a missing or empty directory becomes managed when a remote is given."""
    store = MemoryStore(directory)
    if store.is_managed():
        return store
    if url is None:
        store.read()  # UnmanagedError with the usual hint
    if directory.exists() and any(p for p in directory.iterdir() if p.name != ".git"):
        store.read()
    return MemoryStore.init(directory)


def sync(
    directory: Path,
    *,
    remote: str | None = None,
    allow_rewrite: bool = False,
    lock_timeout: float = 60.0,
    clock: Any = None,
) -> SyncReport:
    """Attach (first call with ``remote``), then fetch, merge and push. See the module docstring.

    Raises SyncTransient when the remote cannot be reached (local work is committed to the local
    repository first and stays; the next sync pushes it), SyncError when the remote's content or
    history is refused (nothing applied).
    """
    directory = Path(os.path.abspath(directory))  # git runs inside it: every path must be absolute
    store = _prepare(directory, remote)
    if clock is not None:
        store.clock = clock
    repo = Repo(store)
    repo.attach(remote)
    report = SyncReport(directory=directory)
    now = utcnow_iso()
    try:
        with _sync_lock(directory, lock_timeout):
            repo.clear_stale_locks()
            store.reconcile()
            for _ in range(PUSH_ATTEMPTS):
                with store_lock(directory, store.lock_timeout):
                    if repo.head() is not None or store._load().records:
                        report.commits_created += repo.commit_generations()
                theirs = repo.fetch()
                with store_lock(directory, store.lock_timeout):
                    if repo.head() is not None or store._load().records:
                        report.commits_created += repo.commit_generations()
                    if theirs is not None:
                        repo.integrate(theirs, report, allow_rewrite=allow_rewrite)
                    if repo.head() is None:
                        report.commits_created += repo.commit_generations()
                head = repo.head()
                if theirs is not None and head == theirs:
                    repo.git.run("update-ref", SYNCED_REF, theirs)
                    break
                if repo.push():
                    report.pushed = True
                    repo.git.run("update-ref", SYNCED_REF, head or "HEAD")
                    repo.git.run("update-ref", REMOTE_REF, head or "HEAD")
                    break
            else:
                raise SyncTransient(f"{directory}: the remote kept moving; gave up after {PUSH_ATTEMPTS} attempts")
    except DreamdError as exc:
        if is_attached(directory):
            state = read_state(directory)
            _write_state(
                directory,
                last_error=str(exc),
                last_error_at=now,
                failures=int(state.get("failures") or 0) + 1,
            )
        raise
    repo.refresh_user_index()
    report.generation = store.read().generation
    _write_state(directory, last_sync_at=now, last_error=None, last_error_at=None, failures=0)
    return report


# ---------------------------------------------------------------------------- git merge driver

GITATTRIBUTES = """\
# dreamd: manifest.json gets the three-way manifest merge; MEMORY.md is derived (dreamd rebuilds it)
manifest.json merge=dreamd-manifest
MEMORY.md merge=dreamd-index
"""


def merge_driver(base_path: Path, ours_path: Path, theirs_path: Path) -> int:
    """``git merge`` driver for ``manifest.json`` (``%O %A %B``): the merged manifest goes to %A.

    For a ``.memory`` directory tracked in a project's own repository, where git itself merges
    the record files (new, uniquely named files never conflict). Exit 0 merged, 1 refused (git
    then reports a conflict and leaves %A as it was). ``index_sha256`` is set for the index the
    merged set renders to; git keeps one side's MEMORY.md (``merge=dreamd-index`` is ``true``),
    which the next reconcile sees as stale and rebuilds.
    """
    def load(path: Path, *, allow_empty: bool) -> Manifest | None:
        data = path.read_bytes()
        if allow_empty and not data.strip():
            return None
        return Manifest.loads(data, where=str(path))

    base = load(base_path, allow_empty=True)
    ours = load(ours_path, allow_empty=False)
    theirs = load(theirs_path, allow_empty=False)
    assert ours is not None and theirs is not None
    result = merge_manifests(base, ours, theirs, now=utcnow_iso(), note="merged by the git merge driver")
    m = result.manifest
    # git merges the record files itself: two versions of one file under two names cannot both
    # exist, so the renamed one is dropped here and git's own merge of that file decides.
    files: set[str] = set()
    m.records = [e for e in m.records if not (e.file in files or files.add(e.file))]  # type: ignore[func-returns-value]
    m.index_sha256 = sha256_hex(render_index(m.records))
    replace_atomic(ours_path, m.dumps(), sync_dir=False)
    return 0


def install_merge_driver(memory_dir: Path, *, command: str = "dreamd") -> list[str]:
    """Configure the merge driver in the repository that tracks ``memory_dir`` (its
    ``.git/config``: git never takes drivers from a repository's content, so every clone runs
    this once) and mark ``memory_dir``'s files to use it; also a ``.gitignore`` there so
    ``.history/`` and the locks stay out of the project's commits."""
    probe = Git(memory_dir)
    proc = probe.run("rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise SyncError(f"{memory_dir}: not inside a git repository; the merge driver is for a .memory a project repository tracks")
    git = Git(Path(proc.stdout.decode().strip()))
    git.run("config", "merge.dreamd-manifest.name", "dreamd three-way manifest merge")
    git.run("config", "merge.dreamd-manifest.driver", f"{command} merge-driver %O %A %B")
    git.run("config", "merge.dreamd-index.name", "dreamd: MEMORY.md is derived, keep ours")
    git.run("config", "merge.dreamd-index.driver", "true")
    attrs = memory_dir / ".gitattributes"
    existing = attrs.read_text(encoding="utf-8") if attrs.exists() else ""
    if "merge=dreamd-manifest" not in existing:
        replace_atomic(attrs, (existing + ("\n" if existing and not existing.endswith("\n") else "") + GITATTRIBUTES).encode())
    written = [str(attrs)]
    ignore = memory_dir / ".gitignore"
    if not ignore.exists():
        replace_atomic(ignore, GITIGNORE.replace("/.*\n", "/.*\n!/.gitattributes\n!/.gitignore\n").encode())
        written.append(str(ignore))
    return written


# ---------------------------------------------------------------------------- the daemon side


@dataclass
class _DirSync:
    last_attempt: float | None = None
    failures: int = 0
    synced_generation: int | None = None
    changed_at: float | None = None
    """When a local generation newer than the last synced one was first seen."""


class SyncPlanner:
    """Which synced directories are due, over a monotonic clock (pure; no I/O but what it is given).

    Due when ``interval`` passed since the last attempt, or (``push_after_commit``) a local
    generation newer than the last synced one has been quiet for ``debounce``. After failures the
    next attempt waits ``backoff_seconds`` (30 s doubling, capped at ``max_backoff``) whatever
    else happens, so an unreachable remote is retried with backoff and never hammered.
    """

    def __init__(self) -> None:
        self.dirs: dict[Path, _DirSync] = {}

    def due(self, directory: Path, *, generation: int, now: float, interval: float, push_after_commit: bool,
            debounce: float, max_backoff: float) -> str | None:
        st = self.dirs.setdefault(directory, _DirSync())
        if st.synced_generation is not None and generation > st.synced_generation and st.changed_at is None:
            st.changed_at = now
        if st.last_attempt is None:
            return "start"
        since = now - st.last_attempt
        if st.failures:
            return "retry" if since >= backoff_seconds(st.failures, cap=max_backoff) else None
        if since >= interval:
            return "interval"
        if push_after_commit and st.changed_at is not None and now - st.changed_at >= debounce:
            return "commit"
        return None

    def record(self, directory: Path, *, ok: bool, generation: int | None, now: float) -> None:
        st = self.dirs.setdefault(directory, _DirSync())
        st.last_attempt = now
        if ok:
            st.failures = 0
            st.synced_generation = generation
            st.changed_at = None
        else:
            st.failures += 1


def _matches(directory: Path, pattern: str) -> bool:
    return directory.match(pattern) or Path(os.path.realpath(directory)).match(pattern)


def remote_for(directory: Path, remotes: dict[str, str]) -> str | None:
    """The URL ``[sync] remotes`` gives ``directory`` (first matching pattern), ``{project}``
    replaced by the name of the directory that holds it (``~/code/app/.memory`` → ``app``)."""
    for pattern, url in remotes.items():
        if _matches(directory, pattern):
            return url.replace("{project}", directory.parent.name if directory.name.startswith(".") else directory.name)
    return None


def wants_sync(directory: Path, patterns: Sequence[str], remotes: dict[str, str] | None = None) -> bool:
    """``directory`` is attached and matches a ``[sync] dirs`` pattern, or matches a
    ``[sync] remotes`` pattern (its first sync attaches it to that remote)."""
    if remotes and remote_for(directory, remotes) is not None:
        return True
    return any(_matches(directory, p) for p in patterns) and is_attached(directory)


def queue_due_syncs(daemon: Any) -> list[Path]:
    """The daemon's tick step: queue a sync task for every due directory (one at a time per
    directory, like its jobs and dreams, through the worker pool)."""
    from dreamd.logs import get_logger
    from dreamd.workers import Task

    cfg = daemon.config.sync
    if not cfg.dirs and not cfg.remotes:
        return []
    planner: SyncPlanner = daemon.__dict__.setdefault("sync_planner", SyncPlanner())
    log = get_logger("dreamd.sync")
    queued: list[Path] = []
    for directory in sorted(daemon.managed):
        if not wants_sync(directory, cfg.dirs, cfg.remotes) or f"sync:{directory}" in daemon.pool.labels():
            continue
        try:
            generation = MemoryStore(directory).read().generation
        except DreamdError:
            continue
        now = daemon.clock()
        reason = planner.due(directory, generation=generation, now=now, interval=cfg.interval,
                             push_after_commit=cfg.push_after_commit, debounce=cfg.debounce,
                             max_backoff=cfg.max_backoff)
        if reason is None:
            continue

        def run(directory: Path = directory, reason: str = reason) -> None:
            t0 = time.monotonic()
            try:
                url = None if is_attached(directory) else remote_for(directory, cfg.remotes)
                report = sync(directory, remote=url)
            except DreamdError as exc:
                planner.record(directory, ok=False, generation=None, now=daemon.clock())
                st = planner.dirs[directory]
                log.warning("sync.failed", memory_dir=str(directory), reason=reason, error=str(exc),
                            failures=st.failures, retry_in_s=backoff_seconds(st.failures, cap=cfg.max_backoff))
                return
            planner.record(directory, ok=True, generation=report.generation, now=daemon.clock())
            log.info("sync.done", memory_dir=str(directory), reason=reason, generation=report.generation,
                     merged=report.merged, pushed=report.pushed, commits=report.commits_created,
                     duration_ms=round((time.monotonic() - t0) * 1000, 1))

        if daemon.pool.submit(Task(key=directory, run=run, label=f"sync:{directory}")):
            queued.append(directory)
    return queued


# ---------------------------------------------------------------------------- the team dream lease

LEASE_REF = "refs/dreamd/lease"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
DEFAULT_TEAM_LEASE_TTL = 3600.0


@dataclass(frozen=True)
class LeaseHolder:
    holder: str
    token: str
    acquired_at: float
    expires_at: float
    released: bool
    commit: str
    host: str = ""
    pid: int = 0
    start: str = ""

    def dead_here(self) -> bool:
        """The holder ran on this host and its process is gone (or the pid was reused)."""
        from memory.locks import pid_alive, process_start_token

        if not self.host or self.host != socket.gethostname() or self.pid <= 0:
            return False
        return not pid_alive(self.pid) or (bool(self.start) and process_start_token(self.pid) != self.start)


class TeamLease:
    """At most one machine of the team dreams a directory at a time.

    The lease is a ref on the shared remote, ``refs/dreamd/lease``, pointing at a commit (empty
    tree) whose message is ``{holder, token, acquired_at, expires_at, released}``. Taking it is
    a compare-and-swap push (``--force-with-lease=<ref>:<the value we read>``, empty for "must
    not exist"): of two machines that read the same value, exactly one push succeeds. A lease
    past ``expires_at`` (the holder died or lost its network), or whose holder ran on this host
    and is gone, may be taken over; releasing
    pushes a ``released`` commit, again by compare-and-swap so a lease taken over meanwhile is
    never released by its previous holder. The chain of lease commits is the audit trail.
    """

    def __init__(self, directory: Path, *, ttl: float = DEFAULT_TEAM_LEASE_TTL, clock: Any = time.time) -> None:
        self.git = Git(directory)
        self.ttl = ttl
        self.clock = clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{directory}"
        self.token = os.urandom(8).hex()
        self.commit: str | None = None

    @staticmethod
    def _identity() -> dict[str, Any]:
        from memory.locks import process_start_token

        return {"host": socket.gethostname(), "pid": os.getpid(), "start": process_start_token(os.getpid())}

    def read(self) -> LeaseHolder | None:
        proc = self.git.run("fetch", "--quiet", "--no-tags", REMOTE, f"+{LEASE_REF}:refs/dreamd/remote-lease", check=False)
        if proc.returncode != 0:
            if "couldn't find remote ref" in proc.stderr.decode("utf-8", "replace"):
                return None
            raise SyncTransient(f"{self.git.workdir}: cannot read the team dream lease: {_first_line(proc.stderr)}")
        oid = self.git.rev("refs/dreamd/remote-lease")
        if oid is None:
            return None
        raw = self.git.run("log", "-1", "--format=%B", oid).stdout
        try:
            data = json.loads(raw)
            return LeaseHolder(
                holder=str(data["holder"]), token=str(data["token"]), acquired_at=float(data["acquired_at"]),
                expires_at=float(data["expires_at"]), released=bool(data["released"]), commit=oid,
                host=str(data.get("host", "")), pid=int(data.get("pid", 0)), start=str(data.get("start", "")),
            )
        except (ValueError, KeyError, TypeError):
            # Unreadable lease: treat as expired (it cannot name a live holder) but keep the CAS.
            return LeaseHolder(holder="(unreadable)", token="", acquired_at=0.0, expires_at=0.0, released=True, commit=oid)

    def _push(self, payload: dict[str, Any], *, expect: str | None) -> str | None:
        message = json.dumps(payload, sort_keys=True) + "\n"
        parents = ["-p", expect] if expect else []
        commit = self.git.run(*self.git.identity(), "commit-tree", EMPTY_TREE, *parents, input=message.encode()).stdout.decode().strip()
        proc = self.git.run(
            "push", "--porcelain", f"--force-with-lease={LEASE_REF}:{expect or ''}", REMOTE, f"{commit}:{LEASE_REF}", check=False
        )
        if proc.returncode == 0:
            return commit
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if "[rejected]" in text or "stale info" in text:
            return None
        raise SyncTransient(f"{self.git.workdir}: cannot push the team dream lease: {_first_line(proc.stderr)}")

    def acquire(self) -> LeaseHolder | None:
        """Take the lease; returns None when taken, else the holder that has it."""
        self.git.run("hash-object", "-t", "tree", "-w", "--stdin", input=b"")
        current = self.read()
        now = float(self.clock())
        if (
            current is not None
            and not current.released
            and current.expires_at > now
            and current.token != self.token
            and not current.dead_here()
        ):
            return current
        payload = {"holder": self.holder, "token": self.token, "acquired_at": now, "expires_at": now + self.ttl,
                   "released": False, **self._identity()}
        commit = self._push(payload, expect=current.commit if current else None)
        if commit is None:
            again = self.read()
            return again or LeaseHolder(holder="(raced)", token="", acquired_at=now, expires_at=now, released=False, commit="")
        self.commit = commit
        return None

    def release(self) -> bool:
        """Mark our lease released; False when it is no longer ours (taken over after expiry)."""
        if self.commit is None:
            return False
        now = float(self.clock())
        payload = {"holder": self.holder, "token": self.token, "acquired_at": now, "expires_at": now, "released": True,
                   **self._identity()}
        done = self._push(payload, expect=self.commit) is not None
        self.commit = None
        return done


@contextlib.contextmanager
def team_dream_lease(directory: Path, config: Any) -> Iterator[LeaseHolder | None]:
    """Around a dream of a synced directory: yields None when this machine may dream (the team
    lease is held, and the remote's changes were merged first so the plan sees the latest set),
    else the holder that has the lease. Directories not synced by this daemon are not affected."""
    cfg = getattr(config, "sync", None)
    patterns, remotes = getattr(cfg, "dirs", ()), getattr(cfg, "remotes", {})
    if not (patterns or remotes) or not wants_sync(directory, patterns, remotes) or not is_attached(directory):
        yield None
        return
    lease = TeamLease(directory, ttl=float(getattr(config.gates, "lock_stale_after", DEFAULT_TEAM_LEASE_TTL)))
    try:
        busy = lease.acquire()
    except SyncTransient:
        # Remote unreachable: dreaming alone is safe (the merge keeps both sides), so go on.
        yield None
        return
    if busy is not None:
        yield busy
        return
    try:
        with contextlib.suppress(DreamdError):
            sync(directory)
        yield None
    finally:
        with contextlib.suppress(DreamdError):
            lease.release()
