"""A spool job's work budget (issue 21 §3): how long one job may hold a worker and its directory.

A job's budget is ``[daemon] job_budget`` plus ``job_budget_per_kib`` per KiB of the job, so a
large transcript gets more time than a small one and no job gets unbounded time. The
dispatcher starts a :class:`Budget` when a worker starts the job and a timer for its end; a job
still running then is *abandoned*: it goes to ``failed/`` with the reason, the worker pool
gives its directory to a fresh worker (the directory's other jobs proceed), and the old thread
is left to finish on its own — Python cannot stop a thread, only make sure what it does no
longer counts.

What makes that safe is the commit guard. Every store commit a job makes runs inside
:func:`commit_guard`, and the budget's state changes only under its lock:

* ``running`` → ``committing`` (a commit starts) — refused once abandoned: an abandoned job can
  never write to its directory, so a job in ``failed/`` has no commit it did not make before;
* ``running`` → ``abandoned`` (the timer fired) — refused while a commit is in progress (the
  timer looks again shortly) and once the job finished;
* ``running`` → ``finished`` — refused once abandoned: exactly one of the worker and the timer
  files the job.

A job that is stuck *inside* a commit is not abandoned (its directory's lock is held); the
supervisor's hung-worker limit restarts the daemon for it, and the recovered claim counts as
an attempt (:meth:`memory.spool.queue.Spool.recover`).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator

from memory.errors import PermanentError

__all__ = [
    "Budget", "BudgetExceeded", "Deadlines", "attach", "budget_seconds", "check", "commit_guard", "current",
]


class BudgetExceeded(PermanentError):
    """A job tried to commit after its budget ran out and it was filed in ``failed/``."""


def budget_seconds(base: float, per_kib: float, size_bytes: int) -> float:
    """``base`` plus ``per_kib`` for every KiB (rounded up) of ``size_bytes``."""
    return base + per_kib * -(-max(0, size_bytes) // 1024)


class Budget:
    """One job's budget and the state machine in the module docstring."""

    def __init__(self, seconds: float, size_bytes: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.size_bytes = size_bytes
        self._clock = clock
        self.started = clock()
        self._lock = threading.Lock()
        self._state = "running"

    @property
    def abandoned(self) -> bool:
        return self._state == "abandoned"

    @property
    def in_commit(self) -> bool:
        return self._state == "committing"

    def elapsed(self) -> float:
        return self._clock() - self.started

    def remaining(self) -> float:
        return self.seconds - self.elapsed()

    def reason(self) -> str:
        kib = -(-self.size_bytes // 1024)
        return (f"over its work budget: still running after {self.elapsed():.1f}s, budget "
                f"{self.seconds:.1f}s for a {kib} KiB job ([daemon] job_budget, job_budget_per_kib)")

    @contextlib.contextmanager
    def committing(self) -> Iterator[None]:
        with self._lock:
            if self._state == "abandoned":
                raise BudgetExceeded(self.reason())
            self._state = "committing"
        try:
            yield
        finally:
            with self._lock:
                if self._state == "committing":
                    self._state = "running"

    def abandon(self) -> bool:
        """Give up on the job if it is running outside a commit; True if it is now abandoned."""
        with self._lock:
            if self._state != "running":
                return False
            self._state = "abandoned"
            return True

    def finish(self) -> bool:
        """The job returned or raised; False if it had been abandoned (someone filed it already)."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state = "finished"
            return True


class Deadlines:
    """One thread that calls each registered callback when its time comes, unless cancelled.

    Not a ``threading.Timer`` per job: starting a thread waits for it to run, and with every
    worker busy that wait costs milliseconds per job (the GIL), which the daemon's throughput
    pays for jobs that almost never overrun. Registering and cancelling take a lock and a heap
    operation; the thread wakes only for the earliest deadline (and starts on first use).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, name: str = "dreamd-budgets") -> None:
        self._clock = clock
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], object]]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, seconds: float, callback: Callable[[], object]) -> int:
        """Call ``callback`` (on this object's thread) in ``seconds``; returns a token to cancel."""
        with self._cond:
            token = next(self._ids)
            due = self._clock() + max(0.0, seconds)
            earliest = self._heap[0][0] if self._heap else None
            heapq.heappush(self._heap, (due, token, callback))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            elif earliest is None or due < earliest:
                self._cond.notify()
            return token

    def cancel(self, token: int) -> None:
        with self._cond:
            self._cancelled.add(token)
            if len(self._cancelled) > 64 and len(self._cancelled) * 2 > len(self._heap):
                self._heap = [item for item in self._heap if item[1] not in self._cancelled]
                heapq.heapify(self._heap)
                self._cancelled &= {item[1] for item in self._heap}

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][1] in self._cancelled:
                        self._cancelled.discard(heapq.heappop(self._heap)[1])
                    wait = self._heap[0][0] - self._clock() if self._heap else None
                    if wait is not None and wait <= 0:
                        _, _, callback = heapq.heappop(self._heap)
                        break
                    self._cond.wait(wait)
            with contextlib.suppress(Exception):  # a failing callback must not stop the others
                callback()


_local = threading.local()


def attach(budget: Budget | None) -> None:
    """Make ``budget`` the current thread's job budget (None: no job, no guard)."""
    _local.budget = budget


def current() -> Budget | None:
    budget: Budget | None = getattr(_local, "budget", None)
    return budget


@contextlib.contextmanager
def commit_guard() -> Iterator[None]:
    """Around every store commit a job makes: refuses the commit of an abandoned job and keeps
    the job from being abandoned halfway through one. A no-op outside a spool job (a dream the
    daemon starts on its own, the CLI)."""
    budget = current()
    if budget is None:
        yield
        return
    with budget.committing():
        yield


def check() -> None:
    """Raise BudgetExceeded when the current job was abandoned: called between a job's steps
    (extraction windows, plan batches) so an abandoned thread stops at the next one instead of
    spending the CPU its replacement needs."""
    budget = current()
    if budget is not None and budget.abandoned:
        raise BudgetExceeded(budget.reason())
