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
* the remote's set is taken in with the three-way manifest merge (:mod:`memory.store.merge`) against
  the git merge base; a remote that only moved ahead is installed as it is (same manifest bytes,
  so both machines then share the commit); everything from the remote is validated with the same
  parser and limits as local files before anything is written, and everything about to be pushed
  passes the redaction check first;
* the last remote commit taken in is kept as ``refs/dreamd/synced``: a remote whose history no
  longer contains it was rewritten, and is refused unless the operator passes ``allow_rewrite``.

The parts: :mod:`dreamd.sync.git` (the ``git`` executable), :mod:`dreamd.sync.remote` (reading and
validating a commit's set), :mod:`dreamd.sync.install` (writing a set through the commit
protocol), this module (the flow: local generations → commits, fetch, merge, push),
:mod:`dreamd.sync.daemon` (``[sync]`` in the daemon), :mod:`dreamd.sync.lease` (one dreamer per
team), :mod:`dreamd.sync.merge_driver` (plain ``git merge`` of a tracked ``.memory``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamd.sync.git import Git, SyncError, SyncTransient, first_line, git_blob_id
from dreamd.sync.install import install, locate
from dreamd.sync.outgoing import file_secrets, message_secrets
from dreamd.sync.remote import RemoteSet, fetch_records, manifest_at, read_remote_set
from memory.errors import DreamdError, StoreError
from memory.fsutil import open_regular, replace_atomic
from memory.redact import redact
from memory.store.index import render_index
from memory.store.layout import MAX_INDEX_BYTES, MAX_MANIFEST_BYTES, MAX_RECORD_FILE_BYTES
from memory.store.locks import store_lock
from memory.store.manifest import Manifest, ManifestEntry, check_file_name, utcnow_iso
from memory.store.merge import THEIRS, merge_manifests
from memory.store.records import sha256_hex
from memory.store.redaction import redact_words
from memory.store.transaction import INDEX, MANIFEST, MemoryStore, record_file_name

REMOTE = "origin"
BRANCH = "main"
REMOTE_REF = f"refs/remotes/{REMOTE}/{BRANCH}"
SYNCED_REF = "refs/dreamd/synced"
STATE_FILE = "dreamd-sync.json"
SYNC_LOCK = "dreamd-sync.lock"
ZERO = "0" * 40
PUSH_ATTEMPTS = 5
GITIGNORE = """\
# Written by dreamd sync: only record files, manifest.json and MEMORY.md are shared.
# .history/, .lock, .dream.lock and staging files stay on this machine.
/*
!/*.md
!/manifest.json
/.*
"""


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
    squashed: int = 0
    """Unpushed commits ``--squash-unpushed`` left out (their set is published as one commit)."""

    def lines(self) -> list[str]:
        out = [f"synced {self.directory} (generation {self.generation})"]
        if self.squashed:
            out.append(f"  left out {self.squashed} unpushed commit(s): the current set is published as one commit")
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




# ---------------------------------------------------------------------------- state


def state_path(directory: Path) -> Path:
    return directory / ".git" / STATE_FILE


MAX_STATE_BYTES = 1024 * 1024


def _read_regular(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of this user's under ``max_bytes``; None when
    it is missing or refused (a link, a FIFO, another uid's, too large: :func:`open_regular`)."""
    try:
        return open_regular(path, max_bytes=max_bytes)
    except (OSError, StoreError):
        return None


def read_state(directory: Path) -> dict[str, Any]:
    data = _read_regular(state_path(directory), MAX_STATE_BYTES)
    try:
        raw = json.loads(data) if data is not None else {}
    except ValueError:
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
        head_gen = manifest_at(git, head).generation if head else -1
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




# ---------------------------------------------------------------------------- the directory side


def _message(m: Manifest, *, folded: Sequence[int] = (), note: str = "",
             parent: Manifest | None = None, against_parent: bool = False) -> str:
    """A generation's commit message. With ``against_parent`` (a commit whose parents are
    not the previous local generation: the set after ``--squash-unpushed``, a merge, the
    remote's set on an unborn HEAD) the counts and lines say what the commit changes against
    its first parent's set (``parent``; None: the empty tree), not what the local generation
    changed against the local one before it, which that parent may never have held."""
    from memory.store.history import log_entry, render_log

    e = log_entry(m)
    if against_parent:
        added, updated, removed = _changes(parent, m)
        e = e.replace(added=added, updated=updated, removed=removed, merged=[], foreign={}, index_archived=None)
    counts = f"+{len(e.added)} ~{len(e.updated)} -{len(e.removed)}"
    who = e.actor + (f" job {e.job_id}" if e.job_id else "")
    lines = [f"dreamd generation {m.generation}: {who} ({counts}, {e.records} records)", "", render_log([e]).rstrip()]
    if folded:
        lines += ["", f"Includes generations {folded[0]}–{folded[-1]}, no longer kept in .history/."]
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _changes(old: Manifest | None, new: Manifest) -> tuple[list[str], list[str], list[str]]:
    """The record names ``new`` adds, updates (other bytes) and removes against ``old``."""
    before = {e.name: e.sha256 for e in old.records} if old is not None else {}
    after = {e.name: e.sha256 for e in new.records}
    return ([n for n in after if n not in before], [n for n in after if n in before and before[n] != after[n]],
            [n for n in before if n not in after])


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
            self._found[key] = locate(self.store, entry)
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

    def commit_generations(self, *, parents: list[str] | None = None, note: str = "") -> int:
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
            want[MANIFEST] = git.hash_bytes(open_regular(mpath, max_bytes=MAX_MANIFEST_BYTES))
            index = _read_regular(self.dir / INDEX, MAX_INDEX_BYTES) if i == len(gens) - 1 else None
            if index is not None and sha256_hex(index) == m.index_sha256:
                want[INDEX] = git.hash_bytes(index)
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
                input=redact(_message(m, folded=folded, note=note if i == len(gens) - 1 else "",
                                      parent=self.manifest_at(base) if parents is not None and base else None,
                                      against_parent=parents is not None))[0].encode(),
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
                m = Manifest.loads(open_regular(path, max_bytes=MAX_MANIFEST_BYTES), where=str(path))
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
            m = self._manifests[commit] = manifest_at(self.git, commit)
        return m

    def _have(self, entry: ManifestEntry, current: set[tuple[str, str]] | None = None) -> bool:
        """The exact bytes of ``entry`` are in the directory already (the current manifest's
        own versions are taken as present: the commit protocol never names a missing file)."""
        if current is not None and (entry.file, entry.sha256) in current:
            return True
        data = _read_regular(self.dir / entry.file, MAX_RECORD_FILE_BYTES)
        return data is not None and sha256_hex(data) == entry.sha256

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

    def squash_unpushed(self) -> int:
        """Replace the commits HEAD has and the remote does not by one commit of the current
        generation on top of the newest remote commit HEAD holds (the root commit when nothing
        was ever pushed); returns how many commits were left out. Caller holds the store lock
        and has committed every local generation.

        The way out of a refused push (issue 21 §4): once the record holding a secret is
        forgotten or redacted, the current set is clean but the unpushed generations between
        the remote and it still hold the secret, and every sync would publish them (HEAD keeps
        them; a reset branch is rebuilt from ``.history/``). This publishes the current set
        without them. Nothing local is lost: ``.history/`` keeps every generation, and the
        left-out commits stay in this repository's objects until git prunes them.
        """
        git = self.git
        head = self.head()
        if head is None:
            return 0
        remote = git.rev(REMOTE_REF)
        base = git.merge_base(head, remote) if remote else None
        spec = [head] + ([f"^{base}"] if base else [])
        dropped = int(git.out("rev-list", "--count", *spec) or 0)
        if dropped <= 1:
            return 0  # at most the current generation's own commit: nothing to leave out
        first = self.manifest_at(base).generation + 1 if base else None
        current = self.store.read().generation
        span = f"generations {first}–{current - 1}" if first is not None and first < current else "earlier generations"
        self.commit_generations(
            parents=[base] if base else [],
            note=f"Publishes the set of generation {current} alone: {span} were never pushed and are left out "
                 "(dreamd sync --squash-unpushed).",
        )
        return dropped

    def outgoing_secrets(self) -> list[tuple[str, bool]]:
        """(what, in the current set) for every outgoing blob with a secret shape."""
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
        found: list[tuple[str, bool]] = []
        current: set[str] | None = None
        for oid, data in git.blobs(blob_ids).items():
            kinds = file_secrets(names.get(oid, ""), data)
            if kinds:
                if current is None:
                    current = {item[2] for item in git.tree(head).values()}
                found.append((f"{names.get(oid, oid[:12])} ({', '.join(kinds)})", oid in current))
        # A message is rewritten by --squash-unpushed, so it never counts as in the current set.
        for commit, _, message in (c.strip().partition("\n") for c in git.out("log", "--format=%H%n%B%x00", *spec).split("\0")):
            kinds = message_secrets(message)
            if kinds and commit.strip():
                found.append((f"the message of commit {commit.strip()[:12]} ({', '.join(kinds)})", False))
        return sorted(found)

    def push(self) -> bool:
        """Push HEAD; False when the remote moved on (fetch, merge and try again)."""
        leaks = self.outgoing_secrets()
        if leaks:
            raise SyncError(self._refusal(leaks))
        proc = self.git.run("push", "--porcelain", REMOTE, f"HEAD:refs/heads/{BRANCH}", check=False)
        if proc.returncode == 0:
            return True
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if any(m in text for m in ("[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref")):
            return False  # the remote moved (or another push is landing right now): fetch, merge, retry
        raise SyncTransient(f"{self.dir}: git push to {REMOTE} failed: {first_line(proc.stderr)}")

    def _refusal(self, leaks: Sequence[tuple[str, bool]]) -> str:
        """The refused push's one line, naming the command that gets out: ``--squash-unpushed``
        once the current set no longer holds the secret (first forget or redact what does)."""
        shown = redact_words("; ".join(text for text, _ in leaks[:5]))  # a file's name may be the secret
        recover = f"dreamd sync {self.dir} --squash-unpushed"
        still = [text for text, now in leaks if now]
        if still:
            files = {text.rsplit(" (", 1)[0] for text in still}
            names = sorted(e.name for e in self.store.read().records if e.file in files)
            first = (f"forget it ('dreamd forget {self.dir} {' '.join(names)}') or redact it by hand"
                     if names else "redact it by hand")
            return (f"{self.dir}: refusing to push: {shown} look(s) like a secret; nothing was pushed. "
                    f"{first}, then run '{recover}' to publish the current set without the unpushed "
                    "generations that still hold it")
        return (f"{self.dir}: refusing to push: {shown} look(s) like a secret, held by unpushed generations "
                f"the current set no longer has; nothing was pushed. Run '{recover}' to publish the current "
                "set as one commit without them")

    def fetch(self) -> str | None:
        proc = self.git.run(
            "fetch", "--quiet", "--prune", "--no-tags", REMOTE, f"+refs/heads/{BRANCH}:{REMOTE_REF}", check=False
        )
        if proc.returncode != 0:
            text = proc.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in text:
                return None  # an empty remote: nothing to take in yet
            raise SyncTransient(f"{self.dir}: git fetch from {REMOTE} failed: {first_line(proc.stderr)}")
        return self.git.rev(REMOTE_REF)


def _with_file(entry: ManifestEntry, file: str) -> ManifestEntry:
    return entry.replace(file=check_file_name(file, where="merge"))


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
    squash_unpushed: bool = False,
    lock_timeout: float = 60.0,
    clock: Any = None,
) -> SyncReport:
    """Attach (first call with ``remote``), then fetch, merge and push. See the module docstring.

    Raises SyncTransient when the remote cannot be reached (local work is committed to the local
    repository first and stays; the next sync pushes it), SyncError when the remote's content or
    history is refused (nothing applied), or a push is refused for a secret (its message names
    the way out: ``squash_unpushed``, see :meth:`Repo.squash_unpushed`).
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
            if squash_unpushed:
                with store_lock(directory, store.lock_timeout):
                    if repo.head() is not None:
                        repo.commit_generations()
                        report.squashed = repo.squash_unpushed()
            for _ in range(PUSH_ATTEMPTS):
                with store_lock(directory, store.lock_timeout):
                    if repo.head() is not None or store.snapshot().records:
                        report.commits_created += repo.commit_generations()
                theirs = repo.fetch()
                with store_lock(directory, store.lock_timeout):
                    if repo.head() is not None or store.snapshot().records:
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
    except (DreamdError, OSError) as exc:
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


__all__ = [
    "GITIGNORE",
    "Repo",
    "SyncError",
    "SyncReport",
    "SyncTransient",
    "backoff_seconds",
    "is_attached",
    "read_state",
    "render_sync_status",
    "sync",
    "sync_status",
]
