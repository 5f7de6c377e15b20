"""The real work module (``dreamd.jobs.work``) with a SIGKILL inside group commits, for the
daemon's group-commit crash test (``tests/test_daemon_group.py``).

``GROUP_KILL_STEP`` names where the daemon dies, in the first group commit it runs: a step of
the store's commit (``locked`` … ``cleaned``: the store's ``fault`` hook, only while a group
commits), or ``spool`` — after the commit, when the first of the group's jobs has been moved to
``done/`` and the others not yet. Unset: the real module, unchanged.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any

from dreamd.jobs import work as _work
from dreamd.jobs.work import dir_state, dream, execute
from memory.spool.queue import Spool

STEP = os.environ.get("GROUP_KILL_STEP", "")
_grouping = threading.local()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _fault(name: str) -> None:
    if getattr(_grouping, "on", False) and name == STEP:
        _die()


class Context(_work.Context):
    @classmethod
    def create(cls, config: Any, *, model: Any = None) -> _work.Context:
        ctx = _work.Context.create(config, model=model)
        ctx.fault = _fault
        return ctx


def execute_group(jobs: Sequence[Any], ctx: Any, *, running: Callable[[int], None] | None = None) -> list[Any]:
    _grouping.on = True
    try:
        return _work.execute_group(jobs, ctx, running=running)
    finally:
        _grouping.on = False


if STEP == "spool":
    _complete_all = Spool.complete_all

    def _complete_first_then_die(self: Spool, job_ids: Sequence[str]) -> list[str]:
        moved = _complete_all(self, list(job_ids)[:1])
        if len(job_ids) > 1:
            _die()
        return moved

    Spool.complete_all = _complete_first_then_die  # type: ignore[method-assign]

__all__ = ["Context", "dir_state", "dream", "execute", "execute_group"]
