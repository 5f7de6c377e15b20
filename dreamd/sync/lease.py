"""The team dream lease: at most one machine of the team dreams a synced directory at a time
(issue 12). A ref on the shared remote, taken and released by compare-and-swap pushes.

The claim holds because a dream needs a *confirmed* lease at both ends: it starts only after
this machine's push of the lease landed on the remote (an unreachable remote means no dream
now, not a dream alone), and it commits only while that lease is still ours — not taken over
(a renewal was refused) and not past the expiry it last pushed, less :data:`FENCE_MARGIN`
(a machine suspended past it may already have been replaced). That assumes the machines'
clocks agree to within the margin, as any lease does.
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

from dreamd.sync.daemon import wants_sync
from dreamd.sync.flow import REMOTE, is_attached, sync
from dreamd.sync.git import Git, SyncTransient, first_line
from memory.errors import DreamdError, LeaseLost

if TYPE_CHECKING:
    from dreamd.config import Config

LEASE_REF = "refs/dreamd/lease"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
DEFAULT_TEAM_LEASE_TTL = 3600.0
LEASE_GIT_TIMEOUT = 60.0
"""Seconds a lease fetch or push may take: a stuck remote must not hold a dream's worker."""
FENCE_MARGIN = 60.0
"""Seconds before the pushed expiry at which a dream stops counting the lease as its own
(a quarter of the TTL when that is shorter): room for the commit and for clock skew."""


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
        self.expires_at: float | None = None
        """The expiry of our last push that landed: until then no other machine may take over."""
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
        self.expires_at = payload["expires_at"]
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
            self.expires_at = payload["expires_at"]
            return True

    def held_until(self) -> float | None:
        """When the lease stops being safely ours (the pushed expiry less the fence margin), or
        None when it is not ours at all (never taken, released, or a renewal was refused)."""
        with self._mutex:
            if self.commit is None or self.expires_at is None:
                return None
            return self.expires_at - min(FENCE_MARGIN, self.ttl / 4)

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
            self.expires_at = None
            return done


class Heartbeat:
    """Renews a held :class:`TeamLease` every ``ttl / 3`` seconds while a dream runs.

    Without it a dream longer than the TTL (a slow local model, a huge directory) would let a
    second machine take the lease over mid-dream. A refused renewal (taken over) sets ``lost``
    and stops the thread; an unreachable remote is recorded in ``errors`` and retried next beat
    (the lease stays ours until the expiry we last pushed). The dream itself is stopped at its
    commit by :meth:`TeamDream.fence`, never by this thread."""

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


@dataclass(frozen=True)
class TeamDream:
    """What :func:`team_dream_lease` says about one dream: may it run, and how it proves, at
    its commit, that the lease is still this machine's."""

    busy: LeaseHolder | None = None
    """Another machine holds the lease: do not dream."""
    unconfirmed: str | None = None
    """The lease could not be confirmed (remote unreachable): do not dream now."""
    lease: TeamLease | None = None
    beat: Heartbeat | None = None
    clock: Callable[[], float] = time.time

    def fence(self) -> None:
        """Raise LeaseLost unless the lease is still ours (called right before the dream
        commits; no network: a renewal refused, or the clock past our pushed expiry, is enough)."""
        if self.lease is None:
            return  # not a synced directory: only the local lease applies
        if self.beat is not None and self.beat.lost:
            raise LeaseLost(f"{self.lease.git.workdir}: the team dream lease was taken over during the dream")
        until = self.lease.held_until()
        if until is None or float(self.clock()) >= until:
            raise LeaseLost(f"{self.lease.git.workdir}: the team dream lease is no longer confirmed "
                            "(past the expiry this machine last pushed: another machine may dream now)")


@contextlib.contextmanager
def team_dream_lease(directory: Path, config: Config, *, clock: Callable[[], float] | None = None) -> Iterator[TeamDream]:
    """Around a dream of a synced directory: the team lease taken and confirmed on the remote,
    and the remote's changes merged first so the plan sees the latest set; or why not (another
    holder, or an unreachable remote: no dream without a confirmed lease). The dream calls
    :meth:`TeamDream.fence` before it commits. Directories not synced by this daemon dream
    under the local lease only."""
    clock = clock or time.time
    patterns, remotes = config.sync.dirs, config.sync.remotes
    if not (patterns or remotes) or not wants_sync(directory, patterns, remotes) or not is_attached(directory):
        yield TeamDream()
        return
    lease = TeamLease(directory, ttl=float(config.gates.lock_stale_after), clock=clock)
    try:
        busy = lease.acquire()
    except SyncTransient as exc:
        yield TeamDream(unconfirmed=str(exc))
        return
    if busy is not None:
        yield TeamDream(busy=busy)
        return
    try:
        with Heartbeat(lease) as beat:
            with contextlib.suppress(DreamdError):
                sync(directory)
            yield TeamDream(lease=lease, beat=beat, clock=clock)
    finally:
        with contextlib.suppress(DreamdError):
            lease.release()


__all__ = ["DEFAULT_TEAM_LEASE_TTL", "FENCE_MARGIN", "LEASE_REF", "Heartbeat", "LeaseHolder", "TeamDream", "TeamLease", "team_dream_lease"]
