"""A small thread pool that runs tasks one at a time per key, in parallel across keys.

The key is the memory directory: two jobs for one directory would only fight over its store
lock, while jobs for different directories are independent. Tasks for a key run in the order
they were submitted. Idle workers block on a condition variable (no polling).

Shutdown is two-step so the daemon can honour "let the running job finish, or put it back":
:meth:`close` stops handing out tasks and returns the ones never started; :meth:`wait_idle`
waits (bounded) for the running ones; :meth:`running` names what is still running.

A task that overran its budget can be :meth:`abandon`-ed: its key is free again at once (the
key's next task runs on a fresh worker that takes the old one's place) and the old thread,
which Python cannot stop, exits when the task finally returns. :meth:`abandoned_alive` counts
those still running, so the supervisor can restart the process if they pile up.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.spool.jobs import Job

__all__ = ["Task", "WorkerPool"]


@dataclass
class Task:
    key: Hashable
    run: Callable[[], object]
    label: str = ""
    """What the task is, for logs and shutdown (e.g. the spool job name)."""
    payload: Job | None = None
    """The spool job a job task runs (None for reconciles, scans and syncs): shutdown puts it back."""
    job_ids: list[str] = field(default_factory=list)
    """The spool jobs a job task runs: its own, or every job of its group commit."""
    started_at: float | None = field(default=None, compare=False)
    budget: float = 0.0
    """Seconds a job task may run before it is abandoned (0: not a job); the hung-worker limit
    counts from its end."""
    abandoned: bool = field(default=False, compare=False)
    thread: threading.Thread | None = field(default=None, compare=False, repr=False)


class WorkerPool:
    def __init__(
        self,
        workers: int,
        *,
        on_error: Callable[[Task, BaseException], None],
        on_done: Callable[[Task], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
        name: str = "dreamd-worker",
    ) -> None:
        self._on_done = on_done
        self._callbacks = 0
        """``on_done`` calls in progress (a task they queue must not look like an idle pool)."""
        self._cond = threading.Condition()
        self._queues: dict[Hashable, deque[Task]] = {}
        self._ready: deque[Hashable] = deque()
        self._busy: dict[Hashable, Task] = {}
        self._closed = False
        self._on_error = on_error
        self._clock = clock
        self._name = name
        self._spawned = workers
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True) for i in range(workers)
        ]
        self._abandoned: list[threading.Thread] = []

    def set_on_done(self, on_done: Callable[[Task], object] | None) -> None:
        """Replace the callback run after each task (outside the pool's lock)."""
        with self._cond:
            self._on_done = on_done

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def alive(self) -> bool:
        return all(t.is_alive() for t in self._threads)

    def submit(self, task: Task) -> bool:
        """Queue ``task`` behind earlier tasks of its key; False once closed."""
        with self._cond:
            if self._closed:
                return False
            q = self._queues.get(task.key)
            if q is None:
                q = self._queues[task.key] = deque()
                if task.key not in self._busy:
                    self._ready.append(task.key)
            q.append(task)
            self._cond.notify()
            return True

    def pending(self) -> int:
        """Tasks queued or running."""
        with self._cond:
            return sum(len(q) for q in self._queues.values()) + len(self._busy)

    def free_slots(self) -> int:
        """Workers neither running a task nor about to take one (a task queued behind a busy
        key will run on that key's worker, not on a free one)."""
        with self._cond:
            return max(0, len(self._threads) - len(self._busy) - len(self._ready))

    def keys(self) -> set[Hashable]:
        """Keys with a task running or queued."""
        with self._cond:
            return set(self._busy) | set(self._queues)

    def has_key(self, key: Hashable) -> bool:
        with self._cond:
            return key in self._busy or key in self._queues

    def labels(self) -> set[str]:
        with self._cond:
            return {t.label for q in self._queues.values() for t in q} | {t.label for t in self._busy.values()}

    def running(self) -> list[Task]:
        with self._cond:
            return list(self._busy.values())

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._ready and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key = self._ready.popleft()
                q = self._queues[key]
                task = q.popleft()
                if not q:
                    del self._queues[key]
                self._busy[key] = task
                task.started_at = self._clock()
                task.thread = threading.current_thread()
            try:
                task.run()
            except BaseException as exc:  # a task must never kill its worker
                with contextlib.suppress(Exception):
                    self._on_error(task, exc)
            finally:
                on_done = self._release(task)
            if task.abandoned:  # a fresh worker took this one's place
                return
            if on_done is not None:  # a worker and a key are free again
                try:
                    with contextlib.suppress(Exception):
                        on_done(task)
                finally:
                    with self._cond:
                        self._callbacks -= 1
                        self._cond.notify_all()

    def _release(self, task: Task) -> Callable[[Task], object] | None:
        """``task`` returned: free its key (unless it was abandoned, which freed it already);
        the ``on_done`` to call outside the lock."""
        with self._cond:
            if task.abandoned:
                with contextlib.suppress(ValueError):
                    self._abandoned.remove(threading.current_thread())
                self._cond.notify_all()
                return None
            key = task.key
            del self._busy[key]
            if key in self._queues:
                self._ready.append(key)
            on_done = self._on_done
            self._callbacks += on_done is not None  # wait_idle waits for it too
            self._cond.notify_all()
            return on_done

    def abandon(self, task: Task) -> bool:
        """Stop waiting for a running ``task``: free its key and replace its worker. False when
        it is not running (it finished meanwhile)."""
        with self._cond:
            if self._busy.get(task.key) is not task or task.thread is None:
                return False
            del self._busy[task.key]
            task.abandoned = True
            if task.key in self._queues:
                self._ready.append(task.key)
            self._abandoned.append(task.thread)
            self._threads = [t for t in self._threads if t is not task.thread]
            if not self._closed:
                fresh = threading.Thread(target=self._loop, name=f"{self._name}-{self._spawned}", daemon=True)
                self._spawned += 1
                self._threads.append(fresh)
                fresh.start()
            self._cond.notify_all()
            return True

    def abandoned_alive(self) -> int:
        """Abandoned tasks whose thread is still running."""
        with self._cond:
            return sum(t.is_alive() for t in self._abandoned)

    def close(self) -> list[Task]:
        """Stop handing out tasks; return the queued ones that never started."""
        with self._cond:
            self._closed = True
            left = [t for q in self._queues.values() for t in q]
            self._queues.clear()
            self._ready.clear()
            self._cond.notify_all()
            return left

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing runs (after :meth:`close`) or nothing is queued; True if idle."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._busy or self._callbacks or (not self._closed and self._queues):
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True
