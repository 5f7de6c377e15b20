"""Locks (DESIGN §3): the short store lock and the long consolidation lease.

``.lock`` is a ``filelock.FileLock`` (flock): the kernel releases it when a holder dies, so it
needs no staleness logic — and its file is never deleted. In-process callers are serialised by a
per-directory ``threading.Lock`` as well (flock is per open file description, not per thread).

``.dream.lock`` is a lease for one consolidation that may run for minutes. It is created with
O_EXCL and holds ``{pid, host, start_token, started_at, heartbeat_at, token}``. Staleness: the
holder is on this host and its pid is gone or belongs to a newer process (start time differs),
or the heartbeat is older than ``stale_after``. Breaking is race-free: rename to a private name
(exactly one breaker wins), re-check it is the same lease that was judged stale, archive it,
then create a new lease. The ``token`` fences: the store re-checks it inside the commit, so a
holder whose lease was broken can never commit.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from memory.errors import LeaseLost, LockError, LockTimeout, UnsafeFileError
from memory.fsutil import ensure_dir, fsync_dir, read_regular_stat, write_new
from memory.lazylog import get_logger
from memory.store.manifest import parse_iso, utcnow_iso
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

log = get_logger("memory.locks")

LOCK_NAME = ".lock"
LEASE_NAME = ".dream.lock"
DEFAULT_STALE_AFTER = 3600.0
HEARTBEAT_EVERY = 30.0

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


def _thread_lock(directory: Path) -> threading.Lock:
    key = os.path.realpath(directory)
    with _thread_locks_guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


@contextlib.contextmanager
def store_lock(directory: Path, timeout: float = 10.0) -> Iterator[None]:
    """Hold the directory's store lock (thread lock, then flock), always with a timeout."""
    check_lock_file(directory / LOCK_NAME)
    tlock = _thread_lock(directory)
    deadline = time.monotonic() + timeout
    if not tlock.acquire(timeout=max(timeout, 0.0)):
        raise LockTimeout(f"{directory / LOCK_NAME}: busy for {timeout:g}s (another commit in this process)")
    import filelock  # here, not at import: readers (log, status, recall) never take the lock

    try:
        flock = filelock.FileLock(str(directory / LOCK_NAME), timeout=max(deadline - time.monotonic(), 0.0))
        try:
            flock.acquire()
        except filelock.Timeout:
            raise LockTimeout(f"{directory / LOCK_NAME}: busy for {timeout:g}s (another writer holds it)") from None
        try:
            yield
        finally:
            flock.release()
    finally:
        tlock.release()


def check_lock_file(path: Path) -> None:
    """UnsafeFileError unless ``path`` is missing or a regular file: filelock opens it with
    ``O_CREAT`` and would follow a planted link (creating or locking a file outside)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFileError(f"{path}: is not a regular file (a link, a FIFO or a directory); the store lock is not taken through it")


def process_start_token(pid: int) -> str:
    """Start time of ``pid`` (Linux: clock ticks since boot); '' when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return ""
    # Field 22 after the parenthesised command (which may contain spaces).
    rest = stat[stat.rfind(")") + 2 :].split()
    return rest[19] if len(rest) > 19 else ""


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LeaseInfo(FrozenValue):
    """What a ``.dream.lock`` says about its holder (a :class:`~memory.values.FrozenValue`, not
    a dataclass: issue 20)."""

    __slots__ = ("pid", "host", "start_token", "started_at", "heartbeat_at", "token", "inode")  # noqa: RUF023 (field order)
    pid: int
    host: str
    start_token: str
    started_at: str
    heartbeat_at: str
    token: str
    inode: int

    def __init__(
        self, pid: int, host: str, start_token: str, started_at: str, heartbeat_at: str, token: str, inode: int
    ) -> None:
        self.set_fields(
            pid=pid, host=host, start_token=start_token, started_at=started_at, heartbeat_at=heartbeat_at,
            token=token, inode=inode,
        )  # fmt: skip

    @classmethod
    def read(cls, path: Path) -> LeaseInfo | None:
        """The lease at ``path``, None when absent. Unreadable content counts as an old lease."""
        try:
            st, got = read_regular_stat(path, max_bytes=64 * 1024, oversize="truncate")
            raw = got or b""
        except FileNotFoundError:
            return None
        except (OSError, UnsafeFileError):
            raw, st = b"", os.lstat(path)  # not a lease dreamd wrote: an old, unreadable one
        try:
            data: Any = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError
        except ValueError:
            data = {}
        def text(key: str) -> str:
            return str(data.get(key) or "")
        pid = data.get("pid")
        return cls(
            pid=pid if isinstance(pid, int) else -1,
            host=text("host"),
            start_token=text("start_token"),
            started_at=text("started_at"),
            heartbeat_at=text("heartbeat_at"),
            token=text("token"),
            inode=st.st_ino,
        )

    def stale_reason(self, *, now: datetime, stale_after: float, host: str) -> str | None:
        """Why this lease is stale, or None when its holder may still be working."""
        if self.host == host:
            if not pid_alive(self.pid):
                return f"holder pid {self.pid} is gone"
            current = process_start_token(self.pid)
            if self.start_token and current and current != self.start_token:
                return f"pid {self.pid} now belongs to another process"
        beat = parse_iso(self.heartbeat_at)
        if beat is None:
            return "lease has no readable heartbeat"
        age = (now - beat).total_seconds()
        if age > stale_after:
            return f"heartbeat {int(age)}s old (limit {int(stale_after)}s)"
        return None

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host or '?'} since {self.started_at or '?'}"


class DreamLease:
    """A held ``.dream.lock``. Create with :meth:`acquire`; use :meth:`verify` to fence."""

    def __init__(self, directory: Path, token: str, clock: Callable[[], datetime]) -> None:
        self.directory = directory
        self.path = directory / LEASE_NAME
        self.token = token
        self._clock = clock

    @classmethod
    def acquire(
        cls,
        directory: Path,
        *,
        stale_after: float = DEFAULT_STALE_AFTER,
        clock: Callable[[], datetime] | None = None,
    ) -> DreamLease:
        """Take the lease, breaking a stale one. LockError (naming the holder) when busy."""
        clock = clock or (lambda: datetime.now(UTC))
        path = directory / LEASE_NAME
        import socket  # only a dream takes the lease: reading it costs no socket module

        host = socket.gethostname()
        for _ in range(5):
            token = f"{time.time_ns():x}-{os.urandom(6).hex()}"
            now = clock()
            body = {
                "pid": os.getpid(),
                "host": host,
                "start_token": process_start_token(os.getpid()),
                "started_at": utcnow_iso(now),
                "heartbeat_at": utcnow_iso(now),
                "token": token,
            }
            try:
                write_new(path, json.dumps(body).encode(), mode=0o644)
                return cls(directory, token, clock)
            except FileExistsError:
                pass
            info = LeaseInfo.read(path)
            if info is None:
                continue
            reason = info.stale_reason(now=now, stale_after=stale_after, host=host)
            if reason is None:
                raise LockError(f"{path}: dream lease held by {info.describe()}")
            break_stale_lease(directory, info, reason)
        raise LockError(f"{path}: could not take the dream lease (contended)")

    def verify(self) -> None:
        """Raise LeaseLost unless the lease file is still ours (the fencing check)."""
        info = LeaseInfo.read(self.path)
        if info is None or info.token != self.token:
            raise LeaseLost(f"{self.path}: dream lease is no longer ours (broken or replaced)")

    def heartbeat(self) -> None:
        """Refresh ``heartbeat_at`` in place (same inode); LeaseLost if it is no longer ours."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise LeaseLost(f"{self.path}: dream lease vanished") from None
        try:
            with os.fdopen(fd, "r+b", closefd=False) as f:
                data = json.loads(f.read(64 * 1024) or b"{}")
                if not isinstance(data, dict) or data.get("token") != self.token:
                    raise LeaseLost(f"{self.path}: dream lease is no longer ours")
                data["heartbeat_at"] = utcnow_iso(self._clock())
                f.seek(0)
                f.write(json.dumps(data).encode())
                f.truncate()
                f.flush()
                os.fsync(fd)
        except ValueError:
            raise LeaseLost(f"{self.path}: dream lease is unreadable") from None
        except OSError as exc:  # a full disk: the write and the fsync name no file of their own
            if exc.filename is None:
                raise OSError(exc.errno, exc.strerror or str(exc), str(self.path)) from None
            raise
        finally:
            os.close(fd)

    def release(self) -> None:
        """Remove the lease if it is still ours; a lost lease is left to its new owner."""
        try:
            self.verify()
        except LeaseLost:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        fsync_dir(self.directory)

    def __enter__(self) -> DreamLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def break_stale_lease(directory: Path, judged: LeaseInfo, reason: str) -> bool:
    """Break the lease judged stale; True if this caller won the break.

    Only one of several concurrent breakers wins the rename. The winner re-checks that what it
    renamed is the very lease it judged (same inode, token and heartbeat); if the holder
    refreshed it meanwhile, the lease is put back (or archived if a new one already exists).
    """
    path = directory / LEASE_NAME
    private = directory / f"{LEASE_NAME}.break-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.rename(path, private)
    except FileNotFoundError:
        return False
    current = LeaseInfo.read(private)
    same = (
        current is not None
        and current.inode == judged.inode
        and current.token == judged.token
        and current.heartbeat_at == judged.heartbeat_at
    )
    if not same:
        try:
            os.link(private, path)
            os.unlink(private)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
            _archive_lease(directory, private)
        return False
    _archive_lease(directory, private)
    log.warning(
        "lease.recovered: broke stale dream lease in %s held by %s: %s",
        directory,
        judged.describe(),
        reason,
        extra={"event": "lease.recovered", "memory_dir": str(directory), "previous_holder": judged.describe(), "reason": reason},
    )
    return True


def _archive_lease(directory: Path, private: Path) -> None:
    history = ensure_dir(directory / ".history")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = history / f"dream.lock-broken-{stamp}-{os.urandom(3).hex()}.json"
    os.rename(private, target)
    fsync_dir(directory)
