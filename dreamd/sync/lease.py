"""The team dream lease: at most one machine of the team dreams a synced directory at a time
(issue 12). A ref on the shared remote, taken and released by compare-and-swap pushes.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamd.logs import get_logger
from dreamd.sync.daemon import wants_sync
from dreamd.sync.flow import REMOTE, is_attached, sync
from dreamd.sync.git import Git, SyncTransient, first_line
from memory.errors import DreamdError

if TYPE_CHECKING:
    from dreamd.config import Config

log = get_logger("dreamd.daemon")

LEASE_REF = "refs/dreamd/lease"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
DEFAULT_TEAM_LEASE_TTL = 3600.0
LEASE_GIT_TIMEOUT = 60.0
"""Seconds a lease fetch or push may take: a stuck remote must not hold a dream's worker."""


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
        from memory.store.locks import pid_alive, process_start_token

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

    def __init__(self, directory: Path, *, ttl: float = DEFAULT_TEAM_LEASE_TTL,
                 clock: Callable[[], float] = time.time) -> None:
        self.git = Git(directory)
        self.ttl = ttl
        self.clock = clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{directory}"
        self.token = os.urandom(8).hex()
        self.commit: str | None = None
        self.acquired_at: float | None = None
        self._mutex = threading.Lock()

    @staticmethod
    def _identity() -> dict[str, Any]:
        from memory.store.locks import process_start_token

        return {"host": socket.gethostname(), "pid": os.getpid(), "start": process_start_token(os.getpid())}

    def read(self) -> LeaseHolder | None:
        proc = self.git.run("fetch", "--quiet", "--no-tags", REMOTE, f"+{LEASE_REF}:refs/dreamd/remote-lease",
                            check=False, timeout=LEASE_GIT_TIMEOUT)
        if proc.returncode != 0:
            if "couldn't find remote ref" in proc.stderr.decode("utf-8", "replace"):
                return None
            raise SyncTransient(f"{self.git.workdir}: cannot read the team dream lease: {first_line(proc.stderr)}")
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
            "push", "--porcelain", f"--force-with-lease={LEASE_REF}:{expect or ''}", REMOTE, f"{commit}:{LEASE_REF}",
            check=False, timeout=LEASE_GIT_TIMEOUT,
        )
        if proc.returncode == 0:
            return commit
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if "[rejected]" in text or "stale info" in text:
            return None
        raise SyncTransient(f"{self.git.workdir}: cannot push the team dream lease: {first_line(proc.stderr)}")

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
        self.acquired_at = now
        return None

    def renew(self) -> bool:
        """Push our lease forward by ``ttl`` (a heartbeat); False when it is no longer ours.

        Compare-and-swap on the commit we last pushed, like :meth:`release`: a lease another
        machine took over (ours had expired, say while this one was suspended) is never
        renewed back from under it."""
        with self._mutex:
            if self.commit is None:
                return False
            now = float(self.clock())
            payload = {"holder": self.holder, "token": self.token, "acquired_at": self.acquired_at or now,
                       "expires_at": now + self.ttl, "released": False, **self._identity()}
            commit = self._push(payload, expect=self.commit)
            if commit is None:
                # Rejected: taken over, or our last push landed although git reported a failure
                # (the connection dropped after the upload). Only the token tells them apart.
                current = self.read()
                if current is not None and current.token == self.token and not current.released:
                    commit = self._push(payload, expect=current.commit)  # renew from what landed
                if commit is None:
                    self.commit = None
                    return False
            self.commit = commit
            return True

    def release(self) -> bool:
        """Mark our lease released; False when it is no longer ours (taken over after expiry)."""
        with self._mutex:
            if self.commit is None:
                return False
            now = float(self.clock())
            payload = {"holder": self.holder, "token": self.token, "acquired_at": now, "expires_at": now,
                       "released": True, **self._identity()}
            done = self._push(payload, expect=self.commit) is not None
            self.commit = None
            return done


class Heartbeat:
    """Renews a held :class:`TeamLease` every ``ttl / 3`` seconds while a dream runs.

    Without it a dream longer than the TTL (a slow local model, a huge directory) would let a
    second machine take the lease over mid-dream. Losing the lease is not fatal — a sync
    merges both machines' dreams three-way and keeps every record — so a failed renewal is
    recorded (``lost``; ``errors`` for an unreachable remote) and the thread stops or retries;
    it never interrupts the dream."""

    def __init__(self, lease: TeamLease, *, every: float | None = None) -> None:
        self.lease = lease
        self.every = every if every is not None else max(1.0, lease.ttl / 3)
        self.lost = False
        self.renewals = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dreamd-team-lease", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                if not self.lease.renew():
                    self.lost = True
                    return
                self.renewals += 1
            except DreamdError as exc:  # remote unreachable for now: try again next beat
                self.errors.append(str(exc))


@contextlib.contextmanager
def team_dream_lease(directory: Path, config: Config) -> Iterator[LeaseHolder | None]:
    """Around a dream of a synced directory: yields None when this machine may dream (the team
    lease is held, and the remote's changes were merged first so the plan sees the latest set),
    else the holder that has the lease. Directories not synced by this daemon are not affected."""
    patterns, remotes = config.sync.dirs, config.sync.remotes
    if not (patterns or remotes) or not wants_sync(directory, patterns, remotes) or not is_attached(directory):
        yield None
        return
    lease = TeamLease(directory, ttl=float(config.gates.lock_stale_after))
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
        with Heartbeat(lease) as beat:
            with contextlib.suppress(DreamdError):
                sync(directory)
            yield None
        if beat.lost:
            log.warning("dream.lease_lost", memory_dir=str(directory),
                        reason="the team lease was taken over during the dream; the next sync merges both")
    finally:
        with contextlib.suppress(DreamdError):
            lease.release()


__all__ = ["DEFAULT_TEAM_LEASE_TTL", "LEASE_REF", "Heartbeat", "LeaseHolder", "TeamLease", "team_dream_lease"]
