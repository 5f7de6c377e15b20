"""The spool (DESIGN §4): a Maildir-style durable hand-off from agents to the daemon.

::

    spool/.lock        single-instance lock (flock), held by the daemon for its lifetime
    spool/.owner       pid/host of the daemon holding the lock (for the error message only)
    spool/tmp/         submitters write here first (O_EXCL, 0600, fsync)
    spool/new/         visible jobs: ``link``ed from tmp/ (never clobbers), then new/ fsynced
    spool/cur/         claimed jobs (``rename`` new/ → cur/; exactly one claimer wins)
    spool/deferred/    transient failures waiting; a job's *mtime is its due time*
    spool/done/        completed jobs, pruned after ``done_days`` (7)
    spool/failed/      ``X.json`` + ``X.error.json``; nothing here is ever deleted

Invariants:

* A job file only ever appears under ``new/`` complete and fsynced (temp + fsync + link), so a
  submitter killed at any instant leaves at most a stray ``tmp/`` file (pruned after 36 h).
* A job is in exactly one of new/ cur/ deferred/ done/ failed/ (moves are renames). A daemon
  killed while holding claims gets them back with :meth:`Spool.recover`, which it runs at
  start-up under the spool lock; jobs are idempotent downstream (``applied_jobs``), so a job
  that completed but whose move to done/ was lost runs again harmlessly.
* Every file in ``new/`` ends in ``done/`` or ``failed/`` (with a reason): a file whose *name*
  is not a job name is moved to ``failed/`` under a fresh id by :meth:`Spool.pending`.
  Dot-files are not jobs (Maildir convention) and are never touched.
* Attempts survive the defer → new → claim cycle in a sidecar ``deferred/.X.state.json``
  (``{"attempts", "first_error", "first_error_at", "last_error", "last_error_at", "due_at"}``),
  removed when the job completes or fails. Backoff is ``base · 2^(attempts-1)`` capped; after
  ``max_attempts`` failures the job goes to ``failed/``. A claim :meth:`Spool.recover` takes
  back after the daemon died mid-job counts as one of them (a poison job must not loop).
* ``retry`` moves ``failed/X.json`` back to ``new/`` and keeps the old reason as
  ``failed/X.error-<n>.json`` (n = 1, 2, …): the history of a job's failures is never lost.
* A group- or world-writable spool directory is refused (ConfigError) unless
  ``allow_insecure``: anyone able to write there could read transcripts or forge jobs.

Imports stay light (no filelock until the daemon takes the lock): agents submit through this.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from memory.errors import ConfigError, DreamdError, JobRejected, LockError
from memory.fsutil import fsync_dir, open_regular, replace_atomic, write_temp
from memory.settings import config_data, expand_home
from memory.spool.jobformat import JOB_ID_RE, MAX_JOB_BYTES, encode_job, new_job_id
from memory.textutil import one_line

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs agents ~15 ms
if TYPE_CHECKING:
    from typing import Any, Literal

    import filelock

    Outcome = Literal["deferred", "failed"]


# --- the spool ----------------------------------------------------------------------------------

SUBDIRS: tuple[str, ...] = ("tmp", "new", "cur", "deferred", "done", "failed")
LOCK_NAME = ".lock"
OWNER_NAME = ".owner"
JOB_SUFFIX = ".json"
PEEK_BYTES = 4096
SUPERSEDE_LOOK_BACK = 256
_HEAD_FIELDS = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*("(?:[^"\\]|\\.)*"|null)')
    for key in ("kind", "memory_dir", "session_id")
}
_MEMORY_DIR_FIELD = re.compile(rb'"memory_dir"\s*:\s*("(?:[^"\\]|\\.)*")')
ERROR_SUFFIX = ".error.json"
SIDECAR_MAX_BYTES = 64 * 1024
"""Cap on reading a job's ``.state.json`` or ``.error.json`` (dreamd writes a few hundred bytes)."""
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_DONE_DAYS = 7.0
DEFAULT_TMP_STALE_HOURS = 36.0
DEFAULT_BACKOFF_BASE = 30.0
DEFAULT_BACKOFF_MAX = 3600.0
RECOVERED_ERROR = (
    "the daemon died while running this job (a crash, a kill, or a worker restarted as hung); "
    "its claim was recovered at start-up"
)
_RESERVED_ID = re.compile(r"\.(?:error|state)(?:-\d+)?\Z")
_ERROR_HISTORY = re.compile(r"\.error-(\d+)\.json$")


def state_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/dreamd``, else ``~/.local/state/dreamd`` (a relative XDG value is
    ignored, as the XDG spec says): where the spool and the hook's state live by default."""
    env = os.environ if env is None else env
    state = env.get("XDG_STATE_HOME", "")
    if state and os.path.isabs(state):
        return Path(state) / "dreamd"
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".local" / "state" / "dreamd"


def configured_spool(env: Mapping[str, str] | None = None, path: Path | None = None) -> Path | None:
    """``[daemon] spool`` of ``path`` (default: the config file the environment names), or
    None when unset.

    Only that key is read (tomllib, loaded only when a file exists); a file that cannot be
    read or parsed is a ConfigError naming it, never a silent fallback to another spool.
    """
    env = os.environ if env is None else env
    found = config_data(env, path)
    if found is None:
        return None
    path, data = found
    daemon = data.get("daemon")
    value = daemon.get("spool") if isinstance(daemon, dict) else None
    if value is None:
        return None
    expanded = expand_home(value, env) if isinstance(value, str) else ""
    if not os.path.isabs(expanded):
        raise ConfigError(
            f"{path}: [daemon] spool: expected an absolute path (or ~/...), got {value!r}"
        )
    return Path(os.path.normpath(expanded))


def resolve_spool(configured: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """THE spool rule, for every command and the library: ``$DREAMD_SPOOL``, else the config's
    ``[daemon] spool`` (``configured``), else ``$XDG_STATE_HOME/dreamd/spool``.

    One rule everywhere, so a hook and the daemon can never pick different spools from one
    environment (issue 13 item 2: jobs sat unseen in the other one).
    """
    env = os.environ if env is None else env
    if env.get("DREAMD_SPOOL"):
        return Path(os.path.normpath(expand_home(env["DREAMD_SPOOL"], env)))
    if configured is not None:
        return configured
    return state_home(env) / "spool"


def spool_candidates(
    env: Mapping[str, str] | None = None, config: Path | None = None
) -> list[Path]:
    """Every spool some part of this setup could pick: ``$DREAMD_SPOOL``, the config's
    ``[daemon] spool`` and the XDG default (distinct, in that order). ``dreamd status`` and
    ``doctor`` look for jobs waiting in the ones the rule did not choose."""
    env = os.environ if env is None else env
    found: list[Path] = []
    if env.get("DREAMD_SPOOL"):
        found.append(resolve_spool(None, env))
    try:
        configured = configured_spool(env, config)
    except ConfigError:
        configured = None
    if configured is not None:
        found.append(configured)
    found.append(state_home(env) / "spool")
    return list(dict.fromkeys(found))


def default_spool_path(env: Mapping[str, str] | None = None) -> Path:
    """The spool the library uses without ``spool=``: :func:`resolve_spool` with the config
    file the environment names. Not ``/tmp``: a service with PrivateTmp sees another ``/tmp``."""
    env = os.environ if env is None else env
    if env.get("DREAMD_SPOOL"):
        return resolve_spool(None, env)
    return resolve_spool(configured_spool(env), env)


def backoff_delay(
    attempts: int, *, base: float = DEFAULT_BACKOFF_BASE, cap: float = DEFAULT_BACKOFF_MAX
) -> float:
    """Seconds to wait after the ``attempts``-th failure: base, 2·base, 4·base, … up to cap."""
    return float(min(cap, base * 2 ** max(attempts - 1, 0)))


def check_job_file(st: os.stat_result, *, allow_insecure: bool = False) -> None:
    """JobRejected (one line) unless a job file is this user's and writable by no one else: a
    job another uid left in the spool is never applied, whoever made the directory loose."""
    euid = os.geteuid()
    if st.st_uid != euid:
        raise JobRejected(f"job file is owned by uid {st.st_uid}, not by this user (uid {euid}); not applied")
    if st.st_mode & 0o022 and not allow_insecure:
        raise JobRejected(f"job file is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); not applied")


def is_job_id(job_id: str) -> bool:
    """A name the spool accepts for a job file (``<id>.json``)."""
    return bool(JOB_ID_RE.match(job_id)) and not _RESERVED_ID.search(job_id)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Value:
    """A small immutable value (plain class: dataclasses would cost agents an import)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **fields: int) -> None:
        if set(fields) != set(self.__slots__):
            raise TypeError(f"{type(self).__name__} needs exactly {', '.join(self.__slots__)}")
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.as_dict().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in self.as_dict().items())})"


class SpoolCounts(_Value):
    """Queue depths for ``dreamd status``."""

    __slots__ = ("cur", "deferred", "done", "failed", "new")
    new: int
    cur: int
    deferred: int
    failed: int
    done: int


class PruneResult(_Value):
    """How many files :meth:`Spool.prune` removed, per kind."""

    __slots__ = ("done", "sidecars", "tmp")
    done: int
    tmp: int
    sidecars: int


class Spool:
    """One spool directory. Producers call :meth:`submit`; the daemon uses the rest.

    ``clock`` returns epoch seconds; tests pass a fake one (due times, pruning and error
    timestamps all come from it).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        allow_insecure: bool = False,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        done_days: float = DEFAULT_DONE_DAYS,
        tmp_stale_hours: float = DEFAULT_TMP_STALE_HOURS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root = Path(root) if root is not None else default_spool_path()
        self.allow_insecure = allow_insecure
        self.max_attempts = max(1, max_attempts)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.done_days = done_days
        self.tmp_stale_hours = tmp_stale_hours
        self.clock = clock
        self._ready = False
        self._lock: filelock.BaseFileLock | None = None
        self.recovered_failed: list[str] = []
        """The claims the last :meth:`recover` filed in ``failed/`` (out of attempts)."""

    def dir(self, name: str) -> Path:
        return self.root / name

    # --- setup and permissions -----------------------------------------------------------------

    def ensure(self) -> Spool:
        """Create the layout (0700) on first use and refuse an insecure spool."""
        if self._ready:
            return self
        try:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            for name in SUBDIRS:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(self.root / name, 0o700)
        except OSError as exc:
            raise ConfigError(f"spool {self.root}: cannot create ({exc.strerror or exc})") from None
        self.check_permissions()
        self._ready = True
        return self

    def check_permissions(self) -> None:
        """Raise ConfigError (one line) unless the spool and each subdirectory is a directory
        owned by this user and writable by no one else: whoever can write there could plant a
        job the daemon applies, or read transcripts. The spool itself may be reached through a
        link (a configured path); ``new/``, ``cur/`` … never are — a link there could lead into
        a directory someone else owns. ``allow_insecure`` lets the mode pass, never the owner."""
        euid = os.geteuid()
        for path in (self.root, *(self.root / n for n in SUBDIRS)):
            try:
                st = os.stat(path) if path == self.root else os.lstat(path)
            except OSError as exc:
                raise ConfigError(f"spool {path}: {exc.strerror or exc}") from None
            if stat.S_ISLNK(st.st_mode):
                raise ConfigError(f"spool {path} is a symbolic link; the spool's queues must be its own directories")
            if not stat.S_ISDIR(st.st_mode):
                raise ConfigError(f"spool {path}: not a directory")
            if st.st_uid != euid:
                raise ConfigError(
                    f"spool {path} is owned by uid {st.st_uid}, not by this user (uid {euid}); "
                    "refused: its owner could plant jobs"
                )
            if st.st_mode & 0o022 and not self.allow_insecure:
                raise ConfigError(
                    f"spool {path} is group- or world-writable (mode {stat.S_IMODE(st.st_mode):o}); "
                    "run chmod go-w on it: anyone who can write there could forge jobs"
                )

    # --- producer --------------------------------------------------------------------------------

    def submit(self, job: Mapping[str, Any], *, max_bytes: int | None = None) -> str:
        """Write ``job`` durably into ``new/`` and return its id.

        The id is ``job["id"]`` when given, else a fresh one; if that name is somehow taken in
        ``new/`` a fresh id is drawn (``link`` never clobbers), so ids are unique. A job whose
        encoding exceeds ``max_bytes`` raises JobRejected before anything is written.
        """
        self.ensure()
        new_dir, tmp_dir = self.root / "new", self.root / "tmp"
        body = dict(job)
        job_id = str(body.get("id") or new_job_id())
        while True:
            body["id"] = job_id
            if not is_job_id(job_id):
                raise DreamdError(f"job id {job_id!r} is not a valid spool job name")
            data = encode_job(body)
            if max_bytes is not None and len(data) > max_bytes:
                raise JobRejected(
                    f"job for {body.get('memory_dir')} is {len(data)} bytes, over the {max_bytes}-byte limit"
                )
            tmp = write_temp(tmp_dir, data, mode=0o600, prefix=f"{job_id}.", final=new_dir / f"{job_id}{JOB_SUFFIX}")
            try:
                os.link(tmp, new_dir / f"{job_id}{JOB_SUFFIX}")
            except FileExistsError:
                job_id = new_job_id()
                continue
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            break
        fsync_dir(new_dir)
        return job_id

    # --- the single-instance lock ----------------------------------------------------------------

    def acquire_lock(self) -> None:
        """Take ``spool/.lock`` for this daemon's lifetime; LockError if another holds it."""
        import socket

        import filelock

        self.ensure()
        if self._lock is not None:
            return
        path = str(self.root / LOCK_NAME)
        try:
            lock = filelock.FileLock(path, timeout=0, thread_local=False, preserve_lock_file=True)
        except TypeError:  # filelock < 4 has no preserve_lock_file (and never deletes on flock)
            lock = filelock.FileLock(path, timeout=0, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            owner = self._owner_text()
            raise LockError(
                f"spool {self.root} is in use by another dreamd{owner} (lock {path} is held)"
            ) from None
        self._lock = lock
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": _iso(self.clock())}
        replace_atomic(self.root / OWNER_NAME, json.dumps(holder).encode(), mode=0o600)

    def release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[Spool]:
        self.acquire_lock()
        try:
            yield self
        finally:
            self.release_lock()

    @property
    def holds_lock(self) -> bool:
        return self._lock is not None

    def _owner_text(self) -> str:
        try:
            owner = json.loads(open_regular(self.root / OWNER_NAME, max_bytes=4096))
            return f" (pid {int(owner['pid'])} on {owner['host']})"
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    # --- consumer --------------------------------------------------------------------------------

    def _ids(self, sub: str) -> list[str]:
        try:
            names = os.listdir(self.root / sub)
        except FileNotFoundError:
            return []
        return sorted(
            n[: -len(JOB_SUFFIX)]
            for n in names
            if n.endswith(JOB_SUFFIX) and not n.startswith(".") and is_job_id(n[: -len(JOB_SUFFIX)])
        )

    def recover(self) -> list[str]:
        """Take back every claim left in ``cur/`` (start-up, under the lock); the ids, sorted.

        A claim left behind means the daemon that held it died while the job was running: a
        crash, a SIGKILL, or the supervisor restarting a hung worker. That run counts as an
        attempt (``"recovered": true`` in the sidecar), so a job that kills or hangs its daemon
        every time (a poison job) reaches ``failed/`` after ``max_attempts`` instead of looping
        forever and holding its directory; the others go back to ``new/``. Jobs are idempotent
        downstream, so a job whose commit landed just before the crash completes as a duplicate.
        :attr:`recovered_failed` names the ones this call filed in ``failed/``.
        """
        if self._lock is None:
            raise LockError(
                f"spool {self.root}: recover() needs the spool lock (acquire_lock first)"
            )
        moved: list[str] = []
        failed: list[str] = []
        for job_id in self._ids("cur"):
            if self._recover_one(job_id) == "failed":
                failed.append(job_id)
            moved.append(job_id)
        if moved:
            fsync_dir(self.root / "new")
            fsync_dir(self.root / "cur")
        self.recovered_failed = failed
        return moved

    def _recover_one(self, job_id: str) -> str:
        state = self._read_state(job_id)
        now = self.clock()
        attempts = int(state.get("attempts", 0)) + 1
        error = RECOVERED_ERROR
        state.setdefault("first_error", error)
        state.setdefault("first_error_at", _iso(now))
        state.update(attempts=attempts, last_error=error, last_error_at=_iso(now), recovered=True)
        if attempts >= self.max_attempts:
            with contextlib.suppress(FileNotFoundError):
                self._fail(job_id, f"gave up after {attempts} attempts: {error}", state)
                return "failed"
            return "gone"
        replace_atomic(
            self._state_path(job_id), json.dumps(state).encode(), mode=0o600, sync_dir=False
        )
        with contextlib.suppress(FileNotFoundError):
            os.rename(self._path("cur", job_id), self._path("new", job_id))
        return "new"

    def pending(self) -> list[str]:
        """Job ids waiting in ``new/``, oldest first.

        Entries whose name is not a job name (``<id>.json``) are moved to ``failed/`` under a
        fresh id with a reason, so nothing dropped into ``new/`` sits there forever.
        """
        self.ensure()
        ids = []
        for name in sorted(os.listdir(self.root / "new")):
            if name.startswith("."):
                continue
            job_id = name[: -len(JOB_SUFFIX)] if name.endswith(JOB_SUFFIX) else ""
            if job_id and is_job_id(job_id):
                ids.append(job_id)
            else:
                self._quarantine(name)
        return ids

    def _quarantine(self, name: str) -> None:
        job_id = new_job_id()
        reason = f"unexpected file name {name[:80]!r} in new/ (not <job-id>.json)"
        self._write_error(job_id, reason=reason, state={}, extra={"original_name": name})
        with contextlib.suppress(FileNotFoundError):
            os.rename(self.root / "new" / name, self._path("failed", job_id))
            fsync_dir(self.root / "failed")

    def _path(self, sub: str, job_id: str) -> Path:
        return self.root / sub / f"{job_id}{JOB_SUFFIX}"

    def _state_path(self, job_id: str) -> Path:
        return self.root / "deferred" / f".{job_id}.state.json"

    def peek_memory_dir(self, job_id: str, *, max_bytes: int = MAX_JOB_BYTES) -> str | None:
        """The ``memory_dir`` a waiting job names; None if it cannot be told.

        Lets the daemon leave a job in ``new/`` while its directory is busy. Jobs we build put
        ``memory_dir`` before the transcript, so the first 4 KiB usually answer; otherwise the
        whole job (at most ``max_bytes``) is parsed, since key order is not part of the format.
        A job that cannot be read or parsed gives None, and the caller claims it so validation
        can say what is wrong with it.
        """
        try:
            fd = os.open(self._path("new", job_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = os.read(fd, PEEK_BYTES)
            m = _MEMORY_DIR_FIELD.search(head)
            if m is None and len(head) == PEEK_BYTES:
                head += _read_up_to(fd, max_bytes + 1 - len(head))
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            if m is not None:
                value = json.loads(m.group(1))
            else:
                data = json.loads(head)
                value = data.get("memory_dir") if isinstance(data, dict) else None
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, str) else None

    def supersede(self, newer_id: str, *, look_back: int = SUPERSEDE_LOOK_BACK) -> list[str]:
        """Take out of ``new/`` the older unclaimed extract jobs that job ``newer_id`` contains.

        Claude Code's Stop hook submits the whole, growing transcript after every turn: each
        job repeats the one before. An older extract job for the same memory directory and
        session, in the same transcript format, whose transcript is a prefix of the newer one's
        carries nothing the newer job does not, so it is moved to ``done/`` as a small record
        saying what superseded it (the newer job extracts every turn it had). Anything else —
        another session, a delta that is not a prefix, a job already claimed — is left alone.
        Only the ``look_back`` newest older jobs are examined, so a large backlog costs little.
        Returns the ids superseded.
        """
        newer_head = self._head("new", newer_id)
        if newer_head.get("kind") != "extract" or not newer_head.get("session_id"):
            return []
        older = [j for j in reversed(self._ids("new")) if j < newer_id][:look_back]  # read only
        same = [j for j in older if self._head("new", j) == newer_head]
        if not same:
            return []
        newer = self._transcript("new", newer_id)
        if newer is None:
            return []
        done: list[str] = []
        for job_id in same:
            old = self._transcript("new", job_id)
            if old is None or old[0] != newer[0] or not newer[1].startswith(old[1]):
                continue
            held = self.root / "tmp" / f".superseded-{job_id}{JOB_SUFFIX}"
            try:
                os.rename(self._path("new", job_id), held)  # the daemon may have claimed it
            except FileNotFoundError:
                continue
            stub = {**newer_head, "format": 1, "id": job_id, "superseded_by": newer_id,
                    "transcript_chars": len(old[1]), "superseded_at": _iso(self.clock())}
            replace_atomic(self._path("done", job_id), (json.dumps(stub) + "\n").encode())
            os.unlink(held)
            done.append(job_id)
        if done:
            fsync_dir(self.root / "new")
        return done

    def _head(self, sub: str, job_id: str) -> dict[str, Any]:
        """``kind``, ``memory_dir`` and ``session_id`` from a job's first bytes ({} if unknown)."""
        try:
            head = open_regular(self._path(sub, job_id), max_bytes=PEEK_BYTES, oversize="truncate")
        except (OSError, DreamdError):
            return {}
        out: dict[str, Any] = {}
        for key, m in ((k, _HEAD_FIELDS[k].search(head)) for k in _HEAD_FIELDS):
            if m is None:
                return {}
            try:
                out[key] = json.loads(m.group(1))
            except ValueError:
                return {}
        return out

    def _transcript(self, sub: str, job_id: str) -> tuple[str, str] | None:
        """A job's transcript ``(format, content)``, or None when it cannot be read."""
        try:
            data = json.loads(open_regular(self._path(sub, job_id), max_bytes=MAX_JOB_BYTES))
            t = data["transcript"]
            fmt, content = t["format"], t["content"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError, DreamdError):
            return None
        return (fmt, content) if isinstance(fmt, str) and isinstance(content, str) else None

    def completed_since(self, seconds: float) -> int:
        """Jobs that reached ``done/`` in the last ``seconds`` (its mtime is the completion time)."""
        cutoff = self.clock() - seconds
        count = 0
        try:
            entries = os.scandir(self.root / "done")
        except FileNotFoundError:
            return 0
        with entries:
            for entry in entries:
                if not entry.name.endswith(JOB_SUFFIX):
                    continue
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                        count += 1
        return count

    def claim(self, job_id: str) -> Path | None:
        """Rename ``new/X`` to ``cur/X`` and return the claimed path; None if someone else won."""
        target = self._path("cur", job_id)
        try:
            os.rename(self._path("new", job_id), target)
        except FileNotFoundError:
            return None
        return target

    def unclaim(self, job_id: str) -> bool:
        """Put a claimed job back: ``cur/X`` → ``new/X`` (shutdown, a full worker pool).

        Attempts are unchanged. False when the job is no longer in ``cur/``.
        """
        try:
            os.rename(self._path("cur", job_id), self._path("new", job_id))
        except FileNotFoundError:
            return False
        fsync_dir(self.root / "new")
        return True

    def read(self, job_id: str, max_bytes: int) -> bytes:
        """A claimed job's bytes, at most ``max_bytes + 1`` (so oversize is detectable).

        Only a regular file is read: a symlink, directory or FIFO dropped into the spool under a
        job name raises JobRejected (the daemon never follows a path it was handed, and a FIFO
        must not block it).
        """
        path = self._path("cur", job_id)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise JobRejected("job file is a symlink, not a regular file") from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise JobRejected("job file is not a regular file")
            check_job_file(st, allow_insecure=self.allow_insecure)
            return _read_up_to(fd, max_bytes + 1)
        finally:
            os.close(fd)

    def complete(self, job_id: str) -> None:
        """``cur/X`` → ``done/X``; its mtime becomes the completion time (for pruning).
        FileNotFoundError when the job is not in ``cur/``."""
        if not self.complete_all([job_id]):
            src = self._path("cur", job_id)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(src))

    def complete_all(self, job_ids: Sequence[str]) -> list[str]:
        """:meth:`complete` for several claimed jobs with one fsync of ``done/`` (a group commit's
        jobs, DESIGN §5); the ids moved (one no longer in ``cur/`` is passed over)."""
        now_ns = int(self.clock() * 1e9)
        moved: list[str] = []
        for job_id in job_ids:
            src = self._path("cur", job_id)
            try:
                os.utime(src, ns=(now_ns, now_ns))
                os.rename(src, self._path("done", job_id))
            except FileNotFoundError:
                continue
            moved.append(job_id)
        if moved:
            fsync_dir(self.root / "done")
        for job_id in moved:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._state_path(job_id))
        return moved

    def attempted(self, job_id: str) -> bool:
        """Whether the job ran before without finishing (deferred, or recovered after a crash):
        its state sidecar exists. One ``lstat``; the daemon runs such a job alone, never in a
        group, so a job that kills its daemon takes no other job's attempts with it."""
        return os.path.lexists(self._state_path(job_id))

    def attempts(self, job_id: str) -> int:
        return int(self._read_state(job_id).get("attempts", 0))

    def defer(self, job_id: str, error: str, *, counted: bool = True) -> Outcome:
        """A transient failure: back off in ``deferred/``, or fail after ``max_attempts``.

        ``counted=False`` is a wait the job is not at fault for (its directory's disk is full):
        it backs off the same way, by how many such waits it had, but never uses up an attempt,
        so a disk that stays full for hours, across any number of daemon restarts, leaves the
        job waiting in ``deferred/`` instead of filing it in ``failed/``."""
        state = self._read_state(job_id)
        now = self.clock()
        attempts = int(state.get("attempts", 0)) + (1 if counted else 0)
        waits = int(state.get("waits", 0)) + (0 if counted else 1)
        error = one_line(error, 1000)
        state.setdefault("first_error", error)
        state.setdefault("first_error_at", _iso(now))
        state.update(attempts=attempts, last_error=error, last_error_at=_iso(now))
        if waits:
            state["waits"] = waits
        if counted and attempts >= self.max_attempts:
            self._fail(job_id, f"gave up after {attempts} attempts: {error}", state)
            return "failed"
        tries = attempts if counted else waits
        due = now + backoff_delay(tries, base=self.backoff_base, cap=self.backoff_max)
        state["due_at"] = _iso(due)
        replace_atomic(
            self._state_path(job_id), json.dumps(state).encode(), mode=0o600, sync_dir=False
        )
        src = self._path("cur", job_id)
        due_ns = int(due * 1e9)
        os.utime(src, ns=(due_ns, due_ns))
        os.rename(src, self._path("deferred", job_id))
        fsync_dir(self.root / "deferred")
        return "deferred"

    def fail(self, job_id: str, reason: str) -> None:
        """A permanent failure: ``cur/X`` → ``failed/X`` with ``failed/X.error.json``."""
        state = self._read_state(job_id)
        state.setdefault("first_error", one_line(reason, 1000))
        state.setdefault("first_error_at", _iso(self.clock()))
        state["last_error"] = one_line(reason, 1000)
        state["last_error_at"] = _iso(self.clock())
        self._fail(job_id, reason, state)

    def _fail(self, job_id: str, reason: str, state: Mapping[str, Any]) -> None:
        self._write_error(job_id, reason=reason, state=state)
        os.rename(self._path("cur", job_id), self._path("failed", job_id))
        fsync_dir(self.root / "failed")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._state_path(job_id))

    def _write_error(
        self,
        job_id: str,
        *,
        reason: str,
        state: Mapping[str, Any],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        now = _iso(self.clock())
        doc: dict[str, Any] = {
            "format": 1,
            "id": job_id,
            "reason": one_line(reason, 1000),
            "attempts": int(state.get("attempts", 0)),
            "first_error": state.get("first_error", one_line(reason, 1000)),
            "first_error_at": state.get("first_error_at", now),
            "last_error": state.get("last_error", one_line(reason, 1000)),
            "last_error_at": state.get("last_error_at", now),
            "failed_at": now,
            **(extra or {}),
        }
        replace_atomic(
            self.root / "failed" / f"{job_id}{ERROR_SUFFIX}",
            json.dumps(doc, ensure_ascii=False, indent=1).encode(),
            mode=0o600,
            sync_dir=False,
        )

    def _read_state(self, job_id: str) -> dict[str, Any]:
        try:  # a link, a FIFO or a big file under the sidecar's name is no state (fsutil)
            data = json.loads(open_regular(self._state_path(job_id), max_bytes=SIDECAR_MAX_BYTES))
        except (OSError, ValueError, DreamdError):
            return {}
        return data if isinstance(data, dict) else {}

    def release_due(self) -> list[str]:
        """Move deferred jobs whose due time (mtime) has come back to ``new/``."""
        now_ns = int(self.clock() * 1e9)
        released = []
        for job_id in self._ids("deferred"):
            src = self._path("deferred", job_id)
            try:
                if os.stat(src).st_mtime_ns > now_ns:
                    continue
                os.rename(src, self._path("new", job_id))
            except FileNotFoundError:
                continue
            released.append(job_id)
        if released:
            fsync_dir(self.root / "new")
        return released

    def next_due(self) -> float | None:
        """Epoch seconds when the next deferred job is due (for the scheduler), or None."""
        times = []
        for job_id in self._ids("deferred"):
            with contextlib.suppress(FileNotFoundError):
                times.append(os.stat(self._path("deferred", job_id)).st_mtime_ns / 1e9)
        return min(times) if times else None

    def prune(self) -> PruneResult:
        """Delete ``done/`` jobs older than ``done_days``, stale ``tmp/`` files and orphan sidecars.

        Never touches ``failed/``.
        """
        now = self.clock()
        done = _unlink_older(
            self.root / "done", now - self.done_days * 86400, lambda n: n.endswith(JOB_SUFFIX)
        )
        tmp = _unlink_older(self.root / "tmp", now - self.tmp_stale_hours * 3600, lambda n: True)
        live = set(self._ids("new")) | set(self._ids("cur")) | set(self._ids("deferred"))

        def orphan(name: str) -> bool:
            if not (name.startswith(".") and name.endswith(".state.json")):
                return False
            return name[1 : -len(".state.json")] not in live

        sidecars = _unlink_older(self.root / "deferred", now - self.done_days * 86400, orphan)
        return PruneResult(done=done, tmp=tmp, sidecars=sidecars)

    def failed_ids(self) -> list[str]:
        return self._ids("failed")

    def failure(self, job_id: str) -> dict[str, Any]:
        """The ``failed/X.error.json`` document for a failed job ({} if it has none)."""
        try:
            data = json.loads(open_regular(self.root / "failed" / f"{job_id}{ERROR_SUFFIX}", max_bytes=SIDECAR_MAX_BYTES))
        except (OSError, ValueError, DreamdError):
            return {}
        return data if isinstance(data, dict) else {}

    def retry(self, job_ids: Sequence[str] | None = None) -> list[str]:
        """Move failed jobs (all when ``job_ids`` is None) back to ``new/``.

        The current reason is kept as ``failed/X.error-<n>.json``. Unknown ids raise
        DreamdError before anything moves.
        """
        self.ensure()
        failed = self.failed_ids()
        wanted = failed if job_ids is None else list(dict.fromkeys(job_ids))
        missing = [j for j in wanted if j not in failed]
        if missing:
            raise DreamdError(f"no failed job {missing[0]!r} in {self.root / 'failed'}")
        fdir = self.root / "failed"
        history = [n for n in os.listdir(fdir) if _ERROR_HISTORY.search(n)]
        for job_id in wanted:
            err = fdir / f"{job_id}{ERROR_SUFFIX}"
            if err.exists():
                prefix = f"{job_id}.error-"
                used = [
                    int(m.group(1))
                    for n in history
                    if n.startswith(prefix) and (m := _ERROR_HISTORY.search(n))
                ]
                os.rename(err, fdir / f"{prefix}{max(used, default=0) + 1}.json")
            os.rename(self._path("failed", job_id), self._path("new", job_id))
        if wanted:
            fsync_dir(fdir)
            fsync_dir(self.root / "new")
        return wanted

    def counts(self) -> SpoolCounts:
        """Queue depths for ``dreamd status``."""
        return SpoolCounts(
            new=len(self._ids("new")),
            cur=len(self._ids("cur")),
            deferred=len(self._ids("deferred")),
            failed=len(self._ids("failed")),
            done=len(self._ids("done")),
        )


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    while limit > 0:
        chunk = os.read(fd, min(limit, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def _unlink_older(directory: Path, cutoff: float, want: Callable[[str], bool]) -> int:
    removed = 0
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    for name in names:
        if not want(name):
            continue
        path = directory / name
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(path)
                removed += 1
        except FileNotFoundError:
            continue
    return removed
