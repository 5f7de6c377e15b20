"""``dreamd status``: what the daemon would see, read from disk without touching anything.

:func:`collect_status` gathers a plain dict (the stable ``--json`` shape, documented in
``docs/operations.md`` and below) and :func:`render_status` turns it into text. Collecting is
read-only: it takes no lock, writes no file and never needs the daemon to be running, so it is
safe to run at any time, as any user who can read the directories.

JSON shape (``format`` 1; keys are only ever added)::

    {"format": 1, "generated_at": ISO, "config": path | null,
     "daemon": {"running": bool | null, "pid", "host", "since"},
     "model": {"backend", "model",
               "misconfigured": null | {"error", "at", "memory_dir"}},   # the daemon's last call
     "spool": {"path", "exists", "new", "cur", "deferred", "failed", "done",
               "drained_5m", "drained_1h",          # jobs finished in the last 5 min / hour
               "drain_per_min": float | null,       # over the last 5 min (else the hour)
               "backlog_eta_s": float | null,       # new + deferred at that rate
               "failures": [{"job", "failed_at", "reason"}],           # newest first, at most 5
               "error": null | "why the spool could not be read"},
     "other_spools": [{"path", "new", "cur", "deferred"}],   # jobs waiting where no daemon looks
     "directories": [
       {"path", "managed": true, "records", "generation", "committed_at", "consolidated_at",
        "paused", "gates": {"open", "first_closed", "gates": [{"name", "open", "reason"}]},
        "lease": null | {"pid", "host", "started_at", "heartbeat_at", "state", "stale_reason"},
        "malformed": [{"file", "error"}], "error": null,
        "jobs": {"new", "cur", "deferred", "failed"}, "inside_roots": bool},
       {"path", "managed": false, "records": N, "hint": "unmanaged — run dreamd adopt DIR",
        "error": null, "jobs": {…}, "inside_roots": bool}],
     "unplaced": null | {"count", "first_at", "last_at", "recent": [{"at", "reason", "cwd",
                 "session_id", "hook"}], "summary"}}   # sessions the hook could not place

Every directory a job in the spool names is listed, outside the roots or unmanaged included
(``jobs`` counts them per queue), so a directory whose jobs all fail is never invisible.

A directory whose manifest cannot be read keeps ``managed: true`` with ``error`` set and the
other keys null, so one broken directory never hides the others. ``model.misconfigured`` is
the note the daemon keeps when a model call was refused as misconfigured (a bad key or login,
no such model, no CLI: :mod:`dreamd.models.health`); it clears at the next successful call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from dreamd.config import Config
from dreamd.embeddings.progress import embeddings_status, render_embeddings_status
from dreamd.jobs.gates import evaluate, is_paused, read_last_scan
from memory.errors import DreamdError
from memory.fsutil import open_regular
from memory.roots import expand_roots
from memory.spool.queue import Spool
from memory.store.locks import LEASE_NAME, LeaseInfo
from memory.store.transaction import MANIFEST, MemoryStore

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

    from dreamd.jobs.state import StateSource

__all__ = [
    "FAILURES_SHOWN",
    "SPOOL_QUEUES",
    "collect_status",
    "daemon_status",
    "dir_status",
    "discover_dirs",
    "model_status",
    "render_status",
    "spool_status",
]

STATUS_FORMAT = 1
SPOOL_QUEUES = ("new", "cur", "deferred", "failed", "done")
FAILURES_SHOWN = 5


def _iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- discovery


def _record_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".md" and p.name != "MEMORY.md")
    except OSError:
        return []


def discover_dirs(roots: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """(managed, unmanaged) directories under the roots.

    Managed: ``manifest.json`` present. Unmanaged: no manifest but Markdown files (a Claude
    Code memory folder, say) — dreamd never writes there until ``dreamd adopt``. Empty
    directories matched by a root are neither.
    """
    managed: list[Path] = []
    unmanaged: list[Path] = []
    for d in expand_roots(roots):
        if (d / MANIFEST).is_file():
            managed.append(d)
        elif _record_files(d) or (d / "MEMORY.md").is_file():
            unmanaged.append(d)
    return managed, unmanaged


# --------------------------------------------------------------------------- spool


def _failure(spool: Spool, job: str) -> dict[str, Any]:
    """One failed job: its id, when it failed and why (from ``failed/X.error.json``)."""
    doc = spool.failure(job)
    reason = doc.get("reason") or doc.get("last_error")
    failed_at = doc.get("failed_at")
    if not isinstance(failed_at, str):
        try:
            mtime = (spool.root / "failed" / f"{job}.json").stat().st_mtime
            failed_at = _iso(datetime.fromtimestamp(mtime, UTC))
        except OSError:
            failed_at = None
    return {
        "job": job,
        "failed_at": failed_at,
        "reason": str(reason) if reason else "no readable error file",
    }


def spool_status(spool: Path, *, last: int = FAILURES_SHOWN) -> dict[str, Any]:
    """Queue depths and the newest ``last`` failures. The listing is the truth (DESIGN §4).

    Read-only: :class:`memory.spool.queue.Spool` is only asked to count and to read error files,
    never to create or repair the layout.
    """
    sp = Spool(spool)
    out: dict[str, Any] = {"path": str(spool), "exists": spool.is_dir(), "error": None}
    try:
        counts = sp.counts()
        failures = [_failure(sp, job) for job in sp.failed_ids()]
    except OSError as exc:  # e.g. a spool owned by another user: say so, show the rest
        out.update({q: 0 for q in SPOOL_QUEUES}, failures=[], error=f"{spool}: {exc.strerror}")
        return out
    for queue in SPOOL_QUEUES:
        out[queue] = getattr(counts, queue)
    if out["exists"]:
        try:  # the check the daemon, `dreamd once` and every hook make before using it
            sp.check_permissions()
        except DreamdError as exc:
            out["refused"] = str(exc)
    failures.sort(key=lambda f: (f["failed_at"] or "", f["job"]), reverse=True)
    out["failures"] = failures[:last]
    out.update(_drain(sp, backlog=counts.new + counts.deferred))
    return out


JOB_QUEUES = ("new", "cur", "deferred", "failed")
"""The queues whose jobs :func:`spool_dirs` attributes to their memory directory."""
JOB_HEAD_BYTES = 8192
"""A job names its ``memory_dir`` near the start (``memory.spool.jobformat``): only this much
of each file is read."""
MAX_JOBS_READ = 20_000
OWNER_MAX_BYTES = 4096
"""``spool/.owner`` is one short JSON line the daemon writes (pid, host, start time)."""
_DECODER = json.JSONDecoder()


def _job_dir(path: Path) -> str | None:
    """The ``memory_dir`` a job file names, from its first bytes (None when it names none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, JOB_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    at = head.find('"memory_dir"')
    colon = head.find(":", at) if at >= 0 else -1
    if colon < 0:
        return None
    try:
        value, _ = _DECODER.raw_decode(head[colon + 1 :].lstrip())
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def spool_dirs(spool: Path, *, limit: int = MAX_JOBS_READ) -> dict[str, dict[str, int]]:
    """Memory directory → jobs per queue (new, cur, deferred, failed) in the spool, for every
    directory a job names — outside the roots or unmanaged included, so none is invisible.
    Read-only; at most ``limit`` job files are opened (the rest are not attributed)."""
    out: dict[str, dict[str, int]] = {}
    seen = 0
    for queue in JOB_QUEUES:
        try:
            names = sorted(
                n for n in os.listdir(spool / queue)
                if n.endswith(".json") and not n.endswith(".error.json") and not n.startswith(".")
            )  # fmt: skip
        except OSError:
            continue
        for name in names:
            if seen >= limit:
                return out
            seen += 1
            named = _job_dir(spool / queue / name)
            if named is None:
                continue
            counts = out.setdefault(os.path.normpath(named), dict.fromkeys(JOB_QUEUES, 0))
            counts[queue] += 1
    return out


def _drain(sp: Spool, *, backlog: int) -> dict[str, Any]:
    """How fast the backlog drains, from the completion times in ``done/``."""
    try:
        last_5m, last_1h = sp.completed_since(300), sp.completed_since(3600)
    except OSError:
        last_5m = last_1h = 0
    rate = last_5m / 5 if last_5m else (last_1h / 60 if last_1h else None)
    eta = round(backlog / rate * 60, 1) if rate and backlog else (0.0 if not backlog else None)
    return {"drained_5m": last_5m, "drained_1h": last_1h,
            "drain_per_min": None if rate is None else round(rate, 2), "backlog_eta_s": eta}


def _lock_lines(text: str, ino: int) -> list[int]:
    """Pids of the FLOCK lines of a lock table (``/proc/locks`` or a ``fdinfo`` file's ``lock:``
    lines, the same fields) held on inode ``ino``."""
    suffix = f":{ino}"
    pids = []
    for line in text.splitlines():
        fields = line.removeprefix("lock:").split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5].endswith(suffix):
            try:
                pids.append(int(fields[4]))
            except ValueError:
                continue
    return pids


def _holds_lock(pid: int, path: Path, st: os.stat_result, proc: Path) -> bool:
    """Whether process ``pid`` holds a flock on ``path`` through one of its descriptors, per
    ``/proc/PID/fdinfo`` (False when that cannot be read: the caller then reads the table)."""
    fds = proc / str(pid) / "fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return False
    target = os.path.realpath(path)
    for fd in names:
        try:
            if os.readlink(fds / fd) != target:
                continue
            info = (proc / str(pid) / "fdinfo" / fd).read_text()
        except OSError:
            continue
        if _lock_lines(info, st.st_ino):
            return True
    return False


def _flock_holders(path: Path, proc: Path, *, hint: int | None = None) -> list[int] | None:
    """Pids holding a flock on ``path`` per ``/proc/locks`` (None: cannot tell on this system).

    Reading the kernel's lock table answers "is the daemon running?" without touching the
    lock, so status can never make a starting daemon believe another one holds the spool.
    The table is read only when needed: its first read in a process costs milliseconds on a
    busy machine (every lock of the system), so a missing lock file answers "none", and the
    pid the daemon wrote (``hint``) is asked first through its own ``fdinfo``.
    """
    table = proc / "locks"
    try:
        st = path.stat()
    except OSError:  # no lock file: no daemon has ever held this spool
        return [] if table.exists() else None
    if hint is not None and _holds_lock(hint, path, st, proc):
        return [hint]
    try:
        text = table.read_text()
    except OSError:
        return None
    return _lock_lines(text, st.st_ino)


def daemon_status(spool: Path, *, proc: Path = Path("/proc")) -> dict[str, Any]:
    """Whether a daemon holds the spool's single-instance lock, and who it says it is.

    ``running`` is None where the kernel's lock table cannot be read (not Linux); ``pid``,
    ``host`` and ``since`` come from ``spool/.owner``, written by the daemon when it took
    the lock (stale after a crash, hence only shown next to a held lock).
    """
    owner: dict[str, Any] = {}
    try:  # fsutil's read: a FIFO planted as .owner must not hang status, nor a link or /dev/zero fill it
        raw = json.loads(open_regular(spool / ".owner", max_bytes=OWNER_MAX_BYTES))
        if isinstance(raw, dict):
            owner = raw
    except (OSError, ValueError, DreamdError):
        pass
    pid = owner.get("pid") if isinstance(owner.get("pid"), int) else None
    holders = _flock_holders(spool / ".lock", proc, hint=pid)
    running = None if holders is None else bool(holders)
    if not running:
        return {"running": running, "pid": None, "host": None, "since": None}
    if holders and pid not in holders:
        pid = holders[0]
    return {
        "running": True,
        "pid": pid,
        "host": owner.get("host") if isinstance(owner.get("host"), str) else None,
        "since": owner.get("since") if isinstance(owner.get("since"), str) else None,
    }


# --------------------------------------------------------------------------- one directory


def _lease(directory: Path, config: Config, now: datetime) -> dict[str, Any] | None:
    """The ``.dream.lock`` holder for display; whether it is stale is judged as the daemon does."""
    info = LeaseInfo.read(directory / LEASE_NAME)
    if info is None:
        return None
    import socket  # only a held lease needs the host name

    stale = info.stale_reason(
        now=now, stale_after=config.gates.lock_stale_after, host=socket.gethostname()
    )
    return {
        "pid": info.pid,
        "host": info.host,
        "started_at": info.started_at or None,
        "heartbeat_at": info.heartbeat_at or None,
        "state": "stale" if stale else "held",
        "stale_reason": stale,
    }


class _StatusSource:
    """Status's read-only source for :func:`dreamd.jobs.state.dir_state`: the daemon's usage
    ledger and a fixed clock; no model, no job logic imported."""

    def __init__(self, config: Config, now: datetime) -> None:
        from dreamd.models.usage import UsageLedger, default_ledger_path

        self.config = config
        self.clock: Callable[[], datetime] = lambda: now
        self._ledger = UsageLedger(default_ledger_path())

    def store(self, memory_dir: str | Path) -> MemoryStore:
        return MemoryStore(Path(memory_dir))

    def spent_today(self, memory_dir: str | Path) -> int:
        try:
            return self._ledger.spent_today(str(memory_dir), now=self.clock())
        except Exception:
            return 0


def _context(config: Config, now: datetime) -> StateSource:
    """The gate inputs' source for status (the daemon's ledger, a fixed clock, no model), so
    status and the daemon agree by construction: both run :func:`dreamd.jobs.state.dir_state`."""
    return _StatusSource(config, now)


def dir_status(
    directory: Path, config: Config, *, now: datetime, ctx: StateSource | None = None
) -> dict[str, Any]:
    """Status of one directory (managed or not); never raises for a broken directory."""
    path = Path(directory)
    store = MemoryStore(path)
    if not store.is_managed():
        if not path.is_dir():
            return {
                "path": str(path),
                "managed": False,
                "records": 0,
                "hint": None,
                "error": "no such directory",
            }
        return {
            "path": str(path),
            "managed": False,
            "records": len(_record_files(path)),
            "hint": f"unmanaged — run dreamd adopt {path}",
            "error": None,
        }
    out: dict[str, Any] = {
        "path": str(path),
        "managed": True,
        "records": None,
        "generation": None,
        "committed_at": None,
        "consolidated_at": None,
        "paused": is_paused(path),
        "gates": None,
        "lease": None,
        "malformed": [],
        "error": None,
    }
    from dreamd.jobs.state import dir_state

    try:
        manifest = store.read()
        state = dir_state(path, ctx or _context(config, now), last_scan_at=read_last_scan(path))
        lease = _lease(path, config, now)
        malformed = [{"file": f, "error": e} for f, e in store.scan_malformed()]
    except DreamdError as exc:
        out["error"] = str(exc)
        return out
    except OSError as exc:  # unreadable (another user's directory): report, never raise
        out["error"] = f"{exc.filename or path}: {exc.strerror}"
        return out
    decision = evaluate(state, config.gates, now)
    out.update(
        records=len(manifest.records),
        generation=manifest.generation,
        committed_at=manifest.committed_at,
        consolidated_at=manifest.consolidated_at,
        gates={
            "open": decision.open,
            "first_closed": decision.first_closed,
            "gates": [{"name": g.name, "open": g.open, "reason": g.reason} for g in decision.gates],
        },
        lease=lease,
        malformed=malformed,
    )
    out.update(embeddings_status(path, config.recall, manifest))
    if (path / ".git").is_dir():  # attached for sync (dreamd.sync.flow.is_attached), checked first
        from dreamd.sync.flow import sync_status

        try:
            out["sync"] = sync_status(path)
        except DreamdError as exc:
            out["sync"] = {"remote": None, "ahead": 0, "last_error": str(exc), "last_error_at": None, "last_sync_at": None, "failures": 0}
    return out


def other_spools(config: Config, env: Any = None) -> list[dict[str, Any]]:
    """Spools other than the one in use that hold jobs (``memory.spool.queue.spool_candidates``):
    ``$DREAMD_SPOOL`` set for some processes only, or a config that moved the spool, leaves
    jobs no daemon will ever claim."""
    from memory.spool.queue import spool_candidates

    env = os.environ if env is None else env
    out = []
    for path in spool_candidates(env, config.source):
        if path == config.daemon.spool or not path.is_dir():
            continue
        counts = {q: _count_jobs(path / q) for q in ("new", "cur", "deferred")}
        if any(counts.values()):
            out.append({"path": str(path), **counts})
    return out


def _count_jobs(folder: Path) -> int:
    try:
        return sum(
            1 for e in os.scandir(folder) if e.name.endswith(".json") and ".error" not in e.name
        )
    except OSError:
        return 0


def _console(config: Config) -> dict[str, Any] | None:
    """The daemon's web console (``[ui] enabled``) while it serves: its URL with the token."""
    from dreamd.status.console import read_state

    return read_state(config.daemon.spool)


def model_status(config: Config) -> dict[str, Any]:
    """The configured backend and, when the daemon found it misconfigured, why and since when."""
    from dreamd.models.health import health_path, read_health

    note = read_health(health_path(config.daemon.spool))
    misconfigured = None
    if note is not None and note.get("state") == "misconfigured":  # doctor reports unreadable ones
        misconfigured = {
            "error": str(note.get("error")),
            "at": note.get("at") if isinstance(note.get("at"), str) else None,
            "memory_dir": note.get("memory_dir") if isinstance(note.get("memory_dir"), str) else None,
        }
    model = None if config.model.backend == "offline" else config.model.model
    return {"backend": config.model.backend, "model": model, "misconfigured": misconfigured}


def collect_status(
    config: Config, dirs: Iterable[Path] | None = None, *, now: datetime | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The whole picture. ``dirs`` None → every managed and unmanaged dir under the roots."""
    from dreamd.hook.placement import describe_unplaced, read_unplaced
    from memory.roots import dir_allowed
    from memory.spool.queue import state_home

    now = now or datetime.now(UTC)
    ctx = _context(config, now)
    queued = spool_dirs(config.daemon.spool)
    if dirs is None:
        managed, unmanaged = discover_dirs(config.daemon.roots)
        targets = managed + unmanaged
        known = {os.path.realpath(t) for t in targets}
        targets += [Path(d) for d in sorted(queued) if os.path.realpath(d) not in known]
    else:
        targets = [Path(os.path.realpath(os.path.expanduser(str(d)))) for d in dirs]
    by_real: dict[str, dict[str, int]] = {}
    for named, counts in queued.items():
        merged = by_real.setdefault(os.path.realpath(named), dict.fromkeys(JOB_QUEUES, 0))
        for queue, n in counts.items():
            merged[queue] += n
    directories = []
    for d in targets:
        entry = dir_status(d, config, now=now, ctx=ctx)
        entry["jobs"] = by_real.get(os.path.realpath(d), dict.fromkeys(JOB_QUEUES, 0))
        entry["inside_roots"] = dir_allowed(d, config.daemon.roots)
        directories.append(entry)
    unplaced = read_unplaced(state_home(os.environ if env is None else env))  # the hook's state
    return {
        "format": STATUS_FORMAT,
        "generated_at": _iso(now),
        "config": str(config.source) if config.source else None,
        "daemon": daemon_status(config.daemon.spool),
        "model": model_status(config),
        "spool": spool_status(config.daemon.spool),
        "other_spools": other_spools(config),
        "console": _console(config),
        "directories": directories,
        "unplaced": {**unplaced, "summary": describe_unplaced(unplaced)} if unplaced else None,
    }


# --------------------------------------------------------------------------- rendering


def _render_jobs(d: dict[str, Any]) -> list[str]:
    jobs = d.get("jobs") or {}
    lines = []
    if any(jobs.values()):
        lines.append("  jobs: " + " · ".join(f"{q} {jobs.get(q, 0)}" for q in JOB_QUEUES))
    if d.get("inside_roots") is False:
        lines.append(
            "  outside [daemon] roots: the daemon refuses its jobs (add it to roots, then dreamd retry)"
        )
    return lines


def _render_dir(d: dict[str, Any]) -> list[str]:
    lines = [str(d["path"]), *_render_jobs(d)]
    if d.get("error"):
        lines.append(f"  error: {d['error']}")
        return lines
    if not d["managed"]:
        lines.append(f"  {d['hint']} ({d['records']} record files)")
        return lines
    last = d["consolidated_at"] or "never"
    lines.append(
        f"  records {d['records']} · generation {d['generation']} · committed {d['committed_at']}"
        f" · last dream {last}"
    )
    gates = d["gates"]
    verdict = "open: a dream is due" if gates["open"] else f"closed at {gates['first_closed']}"
    lines.append(f"  gates: {verdict}")
    for g in gates["gates"]:
        lines.append(f"    {'open  ' if g['open'] else 'closed'} {g['name']}: {g['reason']}")
    lease = d["lease"]
    if lease is None:
        lines.append("  lease: free")
    else:
        extra = f" — {lease['stale_reason']}" if lease["stale_reason"] else ""
        lines.append(
            f"  lease: {lease['state']} by pid {lease['pid']} on {lease['host'] or '?'}"
            f" since {lease['started_at']}, heartbeat {lease['heartbeat_at']}{extra}"
        )
    for m in d["malformed"]:
        lines.append(f"  malformed: {m['file']}: {m['error']}")
    lines.extend(render_embeddings_status(d))
    if d.get("sync"):
        from dreamd.sync.flow import render_sync_status

        lines.append("  " + render_sync_status(d["sync"]))
    return lines


def _render_drain(sp: dict[str, Any]) -> str:
    backlog = sp["new"] + sp["deferred"]
    rate = sp.get("drain_per_min")
    done = f"{sp.get('drained_5m', 0)} done in 5 min, {sp.get('drained_1h', 0)} in the hour"
    if not backlog:
        return f"backlog empty ({done})"
    if not rate:
        return f"backlog {backlog}, not draining ({done})"
    eta = float(sp["backlog_eta_s"] or 0)
    when = f"{eta / 60:.0f} min" if eta < 7200 else f"{eta / 3600:.1f} h"
    return f"backlog {backlog}, draining {rate:g}/min, about {when} to empty ({done})"


def render_status(status: dict[str, Any]) -> str:
    """Readable text for a terminal; the same facts as the JSON, nothing more."""
    sp = status["spool"]
    lines = [f"config: {status['config'] or 'defaults (no config file)'}"]
    daemon = status["daemon"]
    if daemon["running"]:
        lines.append(f"daemon: running, pid {daemon['pid']} since {daemon['since']}")
    elif daemon["running"] is False:
        lines.append("daemon: not running (jobs wait in new/ until it starts)")
    if status.get("console"):
        lines.append(f"console: {status['console']['url']}")
    model = status.get("model")
    if model is not None:
        named = f" ({model['model']})" if model["model"] else ""
        lines.append(f"model: {model['backend']}{named}")
        bad = model["misconfigured"]
        if bad is not None:
            lines.append(f"  model misconfigured: {bad['error']} (since {bad['at'] or '?'})")
            lines.append("  (fix [model] in the config, then dreamd retry; docs/models.md)")
    if sp.get("error"):
        lines.append(f"spool {sp['path']}: cannot read it: {sp['error']}")
    elif sp["exists"]:
        depths = " · ".join(f"{q} {sp[q]}" for q in ("new", "cur", "deferred", "failed"))
        lines.append(f"spool {sp['path']}: {depths}")
        if sp.get("refused"):
            lines.append(f"  REFUSED: {sp['refused']} (the daemon, dreamd once, submit and every hook refuse this spool: no job in it is applied)")
        else:
            lines.append("  " + _render_drain(sp))
    else:
        lines.append(f"spool {sp['path']}: not created yet")
    for f in sp["failures"]:
        lines.append(f"  failed {f['job']} at {f['failed_at']}: {f['reason']}")
    if sp["failed"]:
        lines.append("  (dreamd retry puts failed jobs back once the cause is fixed)")
    for other in status.get("other_spools", []):
        lines.append(
            f"another spool {other['path']} holds jobs no daemon here reads: new {other['new']}"
            f" · cur {other['cur']} · deferred {other['deferred']} (one spool for all: $DREAMD_SPOOL,"
            " else [daemon] spool, else the default; move them into new/ of the spool above)"
        )
    unplaced = status.get("unplaced")
    if unplaced and unplaced.get("summary"):
        lines.append(f"hook: {unplaced['summary']}")
    dirs = status["directories"]
    if not dirs:
        lines.append("no memory directories under the configured roots (dreamd init DIR)")
    for d in dirs:
        lines.append("")
        lines.extend(_render_dir(d))
    return "\n".join(lines) + "\n"
