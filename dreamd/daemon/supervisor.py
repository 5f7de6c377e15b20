"""The daemon: ``dreamd run`` (foreground service) and ``dreamd once`` (DESIGN §8).

Threads and who owns what::

    main thread     signals (handlers only set flags and poke a self-pipe), hint dispatch
                    (spool rescans, reconcile debounce), supervision, shutdown
    watchdog        observer on spool/new/ and every managed directory; posts hints only
    scheduler       APScheduler BackgroundScheduler: the tick (roots rescan, deferred release,
                    timer rescans, gate scans, retention) and the WATCHDOG=1 ping
    workers         WorkerPool: jobs, reconciles and dreams, one at a time per memory
                    directory, in parallel across directories

Invariants:

* The directory listing is the truth, events are hints: the spool's ``new/`` is rescanned on
  every (debounced) event *and* on every tick, managed directories are fingerprinted on every
  tick, so a lost event costs latency, never work.
* Nothing dies silently: a task's exception is logged and the job deferred; a dead observer,
  scheduler or worker thread, or a tick/job hung past its limit, is logged as
  ``daemon.component_died`` and the process exits 1 so the service manager restarts it
  (restart is safe: claimed jobs go back to ``new/`` and jobs are idempotent).
* Idle costs ~0: the main loop blocks in ``select`` on a self-pipe with a timeout of at most
  a second; workers block on a condition; the scheduler sleeps until its next run.
* SIGTERM/SIGINT: claim nothing more, let running jobs finish within a grace period, put
  whatever is left back in ``new/``, release the spool lock, ``STOPPING=1``, exit 0. SIGHUP
  re-reads the config (``RELOADING=1`` … ``READY=1``) and picks up new roots at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic

from dreamd.config import Config, format_duration, load_config
from dreamd.daemon.directories import DirectoryKeeper
from dreamd.daemon.dispatch import JobDispatcher, log_task_crash
from dreamd.daemon.pool import WorkerPool
from dreamd.daemon.watch import Debouncer, Watcher
from dreamd.jobs.protocol import C, Work
from dreamd.logs import configure, get_logger
from memory.errors import ConfigError, LockError

if TYPE_CHECKING:
    from dreamd.jobs.work import Context
    from dreamd.notify import Notifier
    from dreamd.sync.daemon import SyncPlanner
    from memory.spool.queue import Spool

__all__ = ["Daemon", "once", "run"]

log = get_logger("dreamd.daemon")

SPOOL_DEBOUNCE = 0.05
"""Leading-edge: the first event after a quiet 50 ms rescans at once (pickup latency), a flood
of events costs at most 20 listings of new/ per second (a listing is ~0.1 ms per 100 jobs)."""
DIR_DEBOUNCE = 1.0
"""Trailing: an editor's delete+create or a burst of writes becomes one reconcile."""
SHUTDOWN_GRACE = 7.0
"""Running jobs get this long after SIGTERM before being put back in new/ (exit stays < 10 s)."""
PRUNE_EVERY = 3600.0
MAIN_WAKE = 1.0


def _hang_limits(config: Config) -> tuple[float, float]:
    """(tick, task) seconds after which the supervisor declares the scheduler / a worker hung."""
    return max(300.0, 10 * config.daemon.tick), max(1800.0, 20 * config.model.timeout)


class _Waker:
    """A self-pipe: any thread or a signal handler pokes it; the main loop selects on it."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        os.set_blocking(self.r, False)
        os.set_blocking(self.w, False)

    def poke(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self.w, b"x")

    def wait(self, timeout: float) -> None:
        ready, _, _ = select.select([self.r], [], [], max(0.0, timeout))
        if ready:
            with contextlib.suppress(BlockingIOError, OSError):
                while os.read(self.r, 4096):
                    pass

    def close(self) -> None:
        for fd in (self.r, self.w):
            with contextlib.suppress(OSError):
                os.close(fd)


class Daemon(Generic[C]):
    """One daemon instance. ``run()`` and ``once()`` below are the public entry points.

    The daemon owns the process: spool lock, threads, the tick, supervision, signals and
    reload. What it does with the spool's jobs is :attr:`jobs` (a
    :class:`~dreamd.daemon.dispatch.JobDispatcher`), what it does with the managed directories
    (roots, reconciles, gate scans, dreams) is :attr:`dirs` (a
    :class:`~dreamd.daemon.directories.DirectoryKeeper`); both hand their work to the one
    :attr:`pool`.

    ``work`` is the job-execution module (``dreamd.jobs.work``; tests pass a stand-in, see
    :class:`dreamd.jobs.protocol.Work`); ``watch=False`` (or ``$DREAMD_NO_WATCH=1``) disables the
    observer to prove the timer rescans alone process everything; ``once=True`` is
    ``dreamd once`` (see :func:`once`).
    """

    def __init__(
        self,
        config: Config,
        *,
        config_path: Path | None = None,
        env: Mapping[str, str] = os.environ,
        work: Work[C],
        notifier: Notifier | None = None,
        watch: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        once: bool = False,
    ) -> None:
        from memory.spool.queue import Spool

        if notifier is None:
            from dreamd.notify import Notifier

            notifier = Notifier.from_env(env)
        self.config = config
        self.config_path = config_path
        self.env = env
        self.work = work
        self.notifier = notifier
        self.watch_enabled = (env.get("DREAMD_NO_WATCH", "") not in ("1", "true", "yes")) if watch is None else watch
        self.clock = clock
        self.spool = Spool(
            config.daemon.spool,
            max_attempts=config.retention.max_attempts,
            done_days=float(config.retention.done_days),
        )
        ctx = work.Context.create(config)
        self.waker = _Waker()
        self.spool_debounce = Debouncer(SPOOL_DEBOUNCE, clock, leading=True)
        self.dir_debounce = Debouncer(DIR_DEBOUNCE, clock, leading=False)
        self.pool = WorkerPool(
            config.daemon.workers, on_error=log_task_crash,
            on_done=self._worker_free, clock=clock,
        )  # fmt: skip
        self.dirs = DirectoryKeeper(config=config, ctx=ctx, work=work, pool=self.pool, clock=clock, wall=wall,
                                    watch_dirs=self._watch_dirs, once=once)
        from dreamd.embeddings.service import for_config
        from memory.spool.queue import state_home

        self.embeddings = None if once else for_config(config.recall, state_home(env), lambda: list(self.dirs.managed))
        """Keeps the embedding model warm and the vector caches current (``[recall] embeddings``)."""
        self.jobs = JobDispatcher(spool=self.spool, pool=self.pool, config=config, ctx=ctx, work=work,
                                  after_job=self._after_job, hint_spool=self.hint_spool, once=once)
        self.watcher: Watcher | None = None
        self.scheduler: Any = None
        self.console: Any = None
        """The web console's server thread when ``[ui] enabled`` (dreamd.console.serve)."""
        self.died: str | None = None
        """The component whose death or hang stopped the daemon."""
        self._stop_signal: int | None = None
        self._hup = False
        self._tick_started: float | None = None
        self._last_prune = -float("inf")
        self._main_beat = clock()
        self._sync_planner: SyncPlanner | None = None
        self.log_format: str | None = None
        """The --log-format override; a reload keeps it over the config's value."""

    # ------------------------------------------------------------------ hints

    def hint_spool(self) -> None:
        self.spool_debounce.hint("spool")
        self.waker.poke()

    def _worker_free(self, _task: object) -> None:
        """A task returned, so a worker is free: claim its next job from this thread at once.

        Not through :meth:`hint_spool`: hints are debounced (a flood of watcher events lists
        ``new/`` at most 20 times a second), and a backlog claimed one debounce window at a
        time left both workers idle half the time (issue 21: 37 jobs/s cursor-only). The scan
        reuses the cached listing (:data:`~dreamd.daemon.dispatch.LISTING_TTL`), so claiming
        after every job costs a rename, not a directory listing."""
        try:
            self.jobs.scan_spool()
        except Exception:  # the main loop's rescan will try again
            self.hint_spool()
            raise

    def _after_job(self, directory: Path) -> None:
        self.dirs.after_write(directory)
        if self.embeddings is not None:
            self.embeddings.changed(directory)

    def hint_dir(self, directory: Path) -> None:
        self.dir_debounce.hint(directory)
        self.waker.poke()

    def _watch_dirs(self, dirs: set[Path]) -> None:
        if self.watcher is not None:
            self.watcher.set_dirs(dirs)

    def _watch_error(self, what: str, exc: BaseException) -> None:
        log.warning("watch.error", path=what, error=f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ the tick

    def tick(self) -> None:
        """One scheduler tick. Each step is isolated: one failing step never skips the rest."""
        self._tick_started = self.clock()
        t0 = time.monotonic()
        try:
            self._step("roots", self.dirs.rescan_roots)
            self._step("release", self._release_deferred)
            self._step("spool", self.hint_spool)
            self._step("fingerprints", self.dirs.check_fingerprints)
            self._step("gates", self.dirs.gate_scans)
            self._step("sync", self._sync_step)
            self._step("stale_claims", self.jobs.stale_claims)
            self._step("prune", self._prune)
            self._step("status", self._send_status)
            log.debug("tick.done", duration_ms=round((time.monotonic() - t0) * 1000, 1),
                      managed_dirs=len(self.dirs.managed), queue=self.pool.pending())
        finally:
            self._tick_started = None

    def _step(self, name: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except Exception as exc:
            log.error("tick.error", step=name, error=f"{type(exc).__name__}: {exc}", exc_info=True)

    def _sync_step(self) -> None:
        from dreamd.daemon.syncing import queue_due_syncs
        from dreamd.sync.daemon import SyncPlanner

        if self._sync_planner is None:
            self._sync_planner = SyncPlanner()
        queue_due_syncs(self.config.sync, self.dirs.managed, self.pool, self._sync_planner, self.clock)

    def _release_deferred(self) -> None:
        released = self.spool.release_due()
        if released:
            log.info("spool.released", count=len(released))
            self.jobs.invalidate_listing()
            self.hint_spool()

    def _prune(self) -> None:
        now = self.clock()
        if now - self._last_prune < PRUNE_EVERY:
            return
        self._last_prune = now
        result = self.spool.prune()
        if result.done or result.tmp or result.sidecars:
            log.info("spool.pruned", count=result.done, tmp=result.tmp, sidecars=result.sidecars)

    def status_text(self) -> str:
        counts = self.spool.counts()
        last = self.dirs.last_dream or "none yet"
        return (f"{counts.new} queued, {self.jobs.in_progress()} in progress, {counts.deferred} deferred, "
                f"{counts.failed} failed; {len(self.dirs.managed)} dirs; last dream: {last}")

    def _send_status(self) -> None:
        if self.notifier.enabled:
            self.notifier.status(self.status_text())

    def _watchdog_ping(self) -> None:
        """WATCHDOG=1 only while the main loop is turning and every component is healthy:
        a wedged main thread must make systemd restart us, not be papered over by this thread."""
        if self.died is None and self.clock() - self._main_beat < 5 * MAIN_WAKE and self.supervise() is None:
            self.notifier.watchdog()

    # ------------------------------------------------------------------ supervision

    def supervise(self) -> str | None:
        """The name of a dead or hung component, or None when all is well."""
        if self.watcher is not None and not self.watcher.alive():
            return "watcher"
        if self.scheduler is not None and not self.scheduler.running:
            return "scheduler"
        if not self.pool.alive():
            return "workers"
        if self.console is not None and not self.console.alive():
            return "console"
        tick_limit, task_limit = _hang_limits(self.config)
        started = self._tick_started
        now = self.clock()
        if started is not None and now - started > tick_limit:
            return f"scheduler (tick hung for {format_duration(now - started)})"
        for task in self.pool.running():  # a job's budget abandons it first, unless it is stuck in a commit
            if task.started_at is not None and now - task.started_at > task_limit + task.budget:
                return f"worker ({task.label} hung for {format_duration(now - task.started_at)})"
        stuck = self.pool.abandoned_alive()
        if stuck > self.config.daemon.workers:
            return f"workers ({stuck} over-budget jobs abandoned and still running)"
        return None

    # ------------------------------------------------------------------ lifecycle

    def _start_scheduler(self) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        # coalesce=True: after a suspend or a long GC pause, the missed ticks collapse into
        # one run rather than a burst. misfire_grace_time=None: a late tick always runs (a tick
        # is idempotent and cheap; skipping it would only delay work). max_instances=1: a slow
        # tick is never overlapped by the next; the supervisor bounds how long one may hang.
        scheduler = BackgroundScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 1},
            daemon=True,
        )
        scheduler.add_job(self.tick, "interval", seconds=self.config.daemon.tick, id="tick",
                          next_run_time=datetime.now(UTC) + timedelta(seconds=self.config.daemon.tick))
        from dreamd.notify import watchdog_interval

        interval = watchdog_interval(self.env)
        if interval is not None:
            scheduler.add_job(self._watchdog_ping, "interval", seconds=interval, id="watchdog")
        scheduler.start()
        self.scheduler = scheduler

    def _install_signals(self) -> dict[int, Any]:
        def on_stop(signum: int, frame: FrameType | None) -> None:
            self._stop_signal = signum
            self.waker.poke()

        def on_hup(signum: int, frame: FrameType | None) -> None:
            self._hup = True
            self.waker.poke()

        old: dict[int, Any] = {}
        for sig, handler in ((signal.SIGTERM, on_stop), (signal.SIGINT, on_stop), (signal.SIGHUP, on_hup)):
            old[sig] = signal.signal(sig, handler)
        return old

    def request_stop(self, signum: int) -> None:
        """Stop as SIGTERM would (the main loop sees it at its next turn); a stop that came
        before the handlers were installed is handed over this way."""
        self._stop_signal = signum
        self.waker.poke()

    def reload(self) -> None:
        self.notifier.reloading()
        log.info("daemon.reloading", config=str(self.config_path or self.config.source or "<defaults>"))
        try:
            new = load_config(self.config_path or self.config.source, env=self.env)
        except ConfigError as exc:
            log.error("daemon.reload_failed", error=str(exc))
            self.notifier.ready(self.status_text())
            return
        if new.daemon.spool != self.config.daemon.spool or new.daemon.workers != self.config.daemon.workers:
            log.warning("daemon.reload_failed", error="spool and workers changes need a restart; kept the old ones")
            new = _with_daemon(new, spool=self.config.daemon.spool, workers=self.config.daemon.workers)
        try:
            ctx = self.work.Context.create(new)
        except Exception as exc:  # e.g. a model backend that cannot be built: keep the old one
            log.error("daemon.reload_failed", error=f"{type(exc).__name__}: {exc}")
            self.notifier.ready(self.status_text())
            return
        self.config = new
        self.jobs.reconfigure(new, ctx)
        self.dirs.reconfigure(new, ctx)
        self._reconfigure_embeddings(new)
        configure(self.log_format or new.daemon.log_format)
        self.dirs.rescan_roots()
        if self.scheduler is not None:
            with contextlib.suppress(Exception):
                self.scheduler.reschedule_job("tick", trigger="interval", seconds=new.daemon.tick)
        log.info("daemon.reloaded", roots=list(new.daemon.roots), managed_dirs=len(self.dirs.managed))
        self.notifier.ready(self.status_text())

    def _reconfigure_embeddings(self, new: Config) -> None:
        """A reload that sets, changes or clears ``[recall] embeddings`` restarts the service."""
        from dreamd.embeddings.service import for_config
        from memory.spool.queue import state_home

        if new.recall.embeddings == (self.embeddings.model_name if self.embeddings is not None else ""):
            return
        if self.embeddings is not None:
            self.embeddings.stop()
        self.embeddings = for_config(new.recall, state_home(self.env), lambda: list(self.dirs.managed))
        if self.embeddings is not None:
            self.embeddings.start()

    def start(self) -> None:
        """Take the spool, recover claims and start every component (run() and tests)."""
        self.spool.acquire_lock()
        recovered = self.spool.recover()
        log.info("daemon.started", pid=os.getpid(), host=socket.gethostname(), spool=str(self.spool.root),
                 roots=list(self.config.daemon.roots), workers=self.config.daemon.workers,
                 config=str(self.config.source) if self.config.source else None, watch=self.watch_enabled)
        log_recovered(self.spool, recovered)
        self.pool.start()
        if self.watch_enabled:
            self.watcher = Watcher(on_spool=self.hint_spool, on_dir=self.hint_dir, on_error=self._watch_error)
            self.watcher.watch_spool(self.spool.root)
            self.watcher.start()
        self.dirs.rescan_roots()
        self.dirs.gate_scans()  # start-up pass over every directory, not a burst at the first tick
        self._release_deferred()
        self.jobs.scan_spool()
        self._start_scheduler()
        self._start_console()
        if self.embeddings is not None:
            self.embeddings.start()
        log.info("daemon.ready", managed_dirs=len(self.dirs.managed), queue=self.pool.pending())
        self.notifier.ready(self.status_text())

    def loop(self) -> int:
        """The main thread: dispatch hints, supervise, react to signals. Returns the exit code."""
        while True:
            deadlines = [d for d in (self.spool_debounce.next_deadline(), self.dir_debounce.next_deadline()) if d]
            timeout = MAIN_WAKE if not deadlines else min(MAIN_WAKE, min(deadlines) - self.clock())
            self.waker.wait(timeout)
            self._main_beat = self.clock()
            if self._stop_signal is not None:
                log.info("daemon.stopping", signal=signal.Signals(self._stop_signal).name)
                return self.shutdown(0)
            if self._hup:
                self._hup = False
                self.reload()
            if self.spool_debounce.due():
                self.jobs.scan_spool()
            for d in self.dir_debounce.due():
                if isinstance(d, Path):
                    self.dirs.maybe_reconcile(d)
            dead = self.supervise()
            if dead is not None:
                self.died = dead
                log.critical("daemon.component_died", component=dead)
                return self.shutdown(1)

    def _start_console(self) -> None:
        """``[ui] enabled``: serve the console from a thread for as long as the daemon runs; its
        URL (with the token) goes to the spool's ``console.json`` for ``dreamd status``."""
        ui = self.config.ui
        if not ui.enabled:
            return
        from dreamd.console.serve import ConsoleServer

        self.console = ConsoleServer(self.config, host=ui.host, port=ui.port, allow_remote=ui.allow_remote)
        self.console.start()
        self.console.publish(self.spool.root)
        log.info("console.started", url=self.console.base, remote=self.console.remote)

    def shutdown(self, code: int) -> int:
        if self.console is not None:
            self.console.stop()
            self.console.withdraw(self.spool.root)
        self.jobs.stop()
        self.dirs.stop()
        if self.embeddings is not None:
            self.embeddings.stop()
        self.notifier.stopping()
        if self.scheduler is not None:
            with contextlib.suppress(Exception):
                self.scheduler.shutdown(wait=False)
        if self.watcher is not None:
            self.watcher.stop()
        for task in self.pool.close():
            if task.payload is not None:
                for job_id in task.job_ids or [task.label]:
                    self.jobs.requeue(job_id)
        if not self.pool.wait_idle(SHUTDOWN_GRACE if code == 0 else 1.0):
            for task in self.pool.running():
                if task.payload is not None:
                    for job_id in task.job_ids or [task.label]:
                        log.warning("job.requeued", job_id=job_id, memory_dir=str(task.key))
                        self.jobs.requeue(job_id)
        with contextlib.suppress(Exception):
            self.spool.release_lock()
        log.info("daemon.stopped", exit_code=code, jobs_done=self.jobs.counts.done, dreams=self.dirs.dreams)
        self.waker.close()
        return code


def log_recovered(spool: Spool, recovered: list[str]) -> None:
    """``spool.recovered`` for the claims a dead incarnation left, and ``job.failed`` for each
    one that had no attempt left (a job that keeps killing or hanging its daemon)."""
    if recovered:
        log.info("spool.recovered", count=len(recovered))
    for job_id in spool.recovered_failed:
        log.warning("job.failed", job_id=job_id, reason=str(spool.failure(job_id).get("reason", "")))


def _with_daemon(config: Config, **changes: Any) -> Config:
    return config.replace(daemon=config.daemon.replace(**changes))


def _new_daemon(
    config: Config,
    work: Work[C] | None,
    *,
    config_path: Path | None = None,
    env: Mapping[str, str],
    watch: bool | None = None,
    once: bool = False,
) -> Daemon[C] | Daemon[Context]:
    """A daemon running ``work``, or ``dreamd.jobs.work`` when None (imported only then: it pulls
    in the store and the models)."""
    if work is None:
        import dreamd.jobs.work as default

        return Daemon(config, config_path=config_path, env=env, work=default, watch=watch, once=once)
    return Daemon(config, config_path=config_path, env=env, work=work, watch=watch, once=once)


def run(config: Config, *, config_path: Path | None = None, log_format: str | None = None,
        env: Mapping[str, str] = os.environ, work: Work[C] | None = None) -> int:
    """The foreground daemon (``dreamd run``); returns the process exit code.

    ``work`` replaces ``dreamd.jobs.work`` (tests only).

    SIGTERM and SIGINT are caught from the first line on: building the daemon (the work module,
    the model, the spool) takes a second or more, several under load, and a stop requested
    then used to meet Python's default action and end the process with -15 (the multi-machine
    torture run's "daemon exited -15 on SIGTERM"). Now it is remembered, and the daemon stops
    cleanly, exit 0, as soon as its main loop runs."""
    early: list[int] = []
    original = _hold_stop_signals(early)
    try:
        return _run(config, config_path=config_path, log_format=log_format, env=env, work=work, early=early)
    finally:
        for sig, handler in original.items():
            with contextlib.suppress(Exception):
                signal.signal(sig, handler)


def _hold_stop_signals(into: list[int]) -> dict[int, Any]:
    """Remember SIGTERM/SIGINT in ``into`` until the daemon installs its own handlers; the
    handlers they replace."""

    def remember(signum: int, frame: FrameType | None) -> None:
        into.append(signum)

    return {sig: signal.signal(sig, remember) for sig in (signal.SIGTERM, signal.SIGINT)}


def _run(config: Config, *, config_path: Path | None, log_format: str | None, env: Mapping[str, str],
         work: Work[C] | None, early: list[int]) -> int:
    configure(log_format or config.daemon.log_format)
    _write_hook_code(env)
    try:
        daemon = _new_daemon(config, work, config_path=config_path, env=env)
    except Exception as exc:  # a bad model config, an unusable spool: one line, exit 1
        log.error("daemon.stopped", exit_code=1, error=f"{type(exc).__name__}: {exc}")
        return 1
    daemon.log_format = log_format
    old = daemon._install_signals()
    if early:  # asked to stop while starting: start (recover claims, take the lock), then stop
        daemon.request_stop(early[0])
    try:
        try:
            daemon.start()
        except LockError as exc:
            log.error("daemon.already_running", spool=str(config.daemon.spool), error=str(exc))
            return 1
        except ConfigError as exc:
            log.error("daemon.stopped", exit_code=1, error=str(exc))
            return 1
        except Exception as exc:  # a component that cannot start: say so, clean up, exit 1
            log.critical("daemon.component_died", component="start-up", error=f"{type(exc).__name__}: {exc}",
                         exc_info=True)
            return daemon.shutdown(1)
        return daemon.loop()
    finally:  # SIGTERM and SIGINT go back to what run() found; SIGHUP here
        with contextlib.suppress(Exception):
            signal.signal(signal.SIGHUP, old[signal.SIGHUP])


def _write_hook_code(env: Mapping[str, str]) -> None:
    """The redactor's compiled patterns written where the hook reads them, before any worker
    thread compiles one (:mod:`memory.redact.saved`): the first hook after the daemon's start
    finds them. A cache: a failure is logged, never a reason not to start."""
    from memory.redact.saved import code_file, write_code
    from memory.spool.queue import state_home

    state = state_home(env)
    try:
        wrote, count = write_code(state)
    except Exception as exc:  # a full disk, an unwritable state directory: logged, not fatal
        log.warning("daemon.hook_code_unwritten", path=str(code_file(state)), error=f"{type(exc).__name__}: {exc}")
        return
    if wrote:
        log.info("daemon.hook_code_written", path=str(code_file(state)), patterns=count)


def once(config: Config, *, log_format: str | None = None, env: Mapping[str, str] = os.environ,
         work: Work[C] | None = None) -> int:
    """``dreamd once``: recover, reconcile every managed directory, drain new/ (deferred jobs
    wait for their time), run the dreams whose gates are open, exit. 0 when every job it took
    ended in ``done/`` or ``deferred/``; 1 when it could not run, or when it filed a job in
    ``failed/`` (refused, permanent failure, over budget, out of attempts): one line on stderr
    per such job, naming it and why."""
    configure(log_format or config.daemon.log_format)
    try:
        daemon = _new_daemon(config, work, env=env, watch=False, once=True)
    except Exception as exc:
        log.error("daemon.stopped", exit_code=1, error=f"{type(exc).__name__}: {exc}")
        return 1
    try:
        daemon.spool.acquire_lock()
    except LockError as exc:
        log.error("daemon.already_running", spool=str(config.daemon.spool), error=str(exc))
        return 1
    except ConfigError as exc:
        log.error("daemon.stopped", exit_code=1, error=str(exc))
        return 1
    try:
        log_recovered(daemon.spool, daemon.spool.recover())
        for job_id in daemon.spool.recovered_failed:
            daemon.jobs.counts.fail(job_id, str(daemon.spool.failure(job_id).get("reason", "")))
        daemon.pool.start()
        daemon.dirs.rescan_roots()
        daemon._release_deferred()
        daemon.pool.wait_idle()  # the start-up reconciles first
        # No main loop here: a finished task claims the next job itself, so every worker stays
        # busy; the spool is drained when a scan over idle workers finds nothing to claim.
        daemon.pool.set_on_done(lambda _task: daemon.jobs.scan_spool())
        while daemon.jobs.scan_spool():
            daemon.pool.wait_idle()
        daemon.pool.wait_idle()
        for d in sorted(daemon.dirs.managed):
            daemon.dirs.queue_scan(d, final=True)
        daemon.pool.wait_idle()
        daemon._sync_step()  # [sync] dirs: take in the team's changes and push ours
        daemon.pool.wait_idle()
        daemon.pool.close()
        counts = daemon.jobs.counts
        log.info("daemon.once_done", jobs=counts.done, failed=counts.failed, deferred=counts.deferred,
                 dreams=daemon.dirs.dreams)
        for job_id, reason in counts.failures:
            print(f"dreamd once: job {job_id} failed: {reason} (kept in {daemon.spool.dir('failed')}; "
                  f"'dreamd retry' puts it back)", file=sys.stderr)
        return 1 if counts.failures else 0
    finally:
        daemon.jobs.stop()  # a pending rescan timer must not poke a closed waker
        daemon.spool.release_lock()
        daemon.waker.close()
