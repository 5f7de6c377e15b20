"""A spool job's work budget (dreamd.jobs.budget): the state machine that lets exactly one of
the worker and the budget's deadline file a job, and the one-thread deadline keeper."""

from __future__ import annotations

import threading

import pytest

from dreamd.jobs.budget import (
    Budget,
    BudgetExceeded,
    Deadlines,
    attach,
    budget_seconds,
    check,
    commit_guard,
)


def test_the_budget_grows_with_the_job_per_started_kib() -> None:
    assert budget_seconds(600.0, 5.0, 0) == 600.0
    assert budget_seconds(600.0, 5.0, 1) == 605.0
    assert budget_seconds(600.0, 5.0, 1024 * 100) == 1100.0


def test_an_abandoned_job_can_no_longer_commit_nor_file_itself() -> None:
    budget = Budget(1.0, 2048)
    attach(budget)
    try:
        assert budget.abandon()
        with pytest.raises(BudgetExceeded, match=r"over its work budget.*2 KiB job"), commit_guard():
            pass
        assert not budget.finish()
    finally:
        attach(None)


def test_a_job_in_a_commit_is_not_abandoned_and_a_finished_one_never_is() -> None:
    budget = Budget(1.0, 10)
    attach(budget)
    try:
        with commit_guard():
            assert budget.in_commit and not budget.abandon()
        assert budget.finish() and not budget.abandon()
    finally:
        attach(None)


def test_outside_a_job_the_guard_does_nothing() -> None:
    with commit_guard():
        pass
    check()


def test_an_abandoned_job_stops_at_its_next_step() -> None:
    budget = Budget(1.0, 10)
    attach(budget)
    try:
        check()
        budget.abandon()
        with pytest.raises(BudgetExceeded):
            check()
    finally:
        attach(None)


def test_deadlines_call_what_is_due_in_order_and_skip_what_was_cancelled() -> None:
    deadlines = Deadlines()
    fired: list[str] = []
    done = threading.Event()
    deadlines.add(0.15, lambda: (fired.append("late"), done.set()))
    cancelled = deadlines.add(0.05, lambda: fired.append("cancelled"))
    deadlines.add(0.1, lambda: fired.append("early"))
    deadlines.cancel(cancelled)
    assert done.wait(5)
    assert fired == ["early", "late"]
