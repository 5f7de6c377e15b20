"""A correction supersedes the record that holds the corrected value (issue 23): the offline
extractor links a change to the earlier statement holding the replaced value, even when the
statement the change matched (the latest sharing its subject's words) holds none, and never to
a statement of another subject holding a value of the same kind. Examples are invented for
this test."""

from __future__ import annotations

from pathlib import Path

from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from dreamd.models.offline.model import OfflineModel
from memory.store.transaction import MemoryStore
from tests.test_supersession import _extract_job, _said_in_two_runs
from tests.test_supersession_linked import _run

# the deck shares the subject's words and holds no weekday: the change matches it, but Thursday is the review's
REVIEW = ("The design review happens every Thursday with Priyanka.", "Ok.", "The design review deck lives in Figma.", "Ok.")
MOVED = ("Moved: the design review is every Tuesday now.", "Ok.")
# the queue shares "billing" and holds a number; the service's version is the one the change replaces
BILLING = ("The billing service runs on Python 3.11.", "Ok.", "The billing queue holds 500 jobs at most.", "Ok.")
UPGRADED = ("We upgraded the billing service to 3.12 last week.", "Ok.")
# the change names the stack's framework again beside a new library: a value of the kind, another subject
STACK = ("The backend stack is Python and FastAPI.", "Ok.",
         "We moved the HTTP client to httpx, it plays better with FastAPI's test client.", "Ok.")


def test_the_change_names_the_older_record_holding_the_value_not_the_one_matched() -> None:
    review, deck, moved = _run(*REVIEW, *MOVED)
    assert "Thursday" in review["description"] and "Figma" in deck["description"]
    assert moved["supersedes"] == review["name"]
    assert "supersedes" not in deck


def test_a_change_of_one_subject_never_names_a_record_of_another_holding_a_value_of_its_kind() -> None:
    stack, client = _run(*STACK)
    assert "FastAPI" in stack["description"] and "httpx" in client["description"]
    assert "supersedes" not in client


def test_one_job_leaves_the_record_of_another_subject_current(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    assert execute(_extract_job(mdir, *STACK), ctx) == "extracted 2"
    records = {rec.description: rec for _, rec in MemoryStore(mdir).records()}
    stack = records["The backend stack is Python and FastAPI"]
    assert "**Previously:**" not in stack.body and "Python" in stack.body
    assert not any("**Previously:**" in rec.body for rec in records.values())  # nothing is rewritten


def test_dreamd_once_twice_logs_the_holder_superseded(tmp_path: Path) -> None:
    records, superseded = _said_in_two_runs(tmp_path, (*BILLING, *UPGRADED), "We upgraded")  # the version is changed later
    [upgraded] = [n for n, r in records.items() if "3.12" in r.description]
    current, _, history = records[upgraded].body.partition("**Previously:**")
    assert "3.11" not in current and "Python 3.11" in history
    [queue] = [n for n, r in records.items() if "500" in r.description]
    assert len(records) == 2 and "**Previously:**" not in records[queue].body  # the queue's number is another subject's
    [line] = superseded
    assert line.startswith("superseded project-billing-service-runs-python") and line.endswith(f"-> {upgraded}")
    assert queue not in line
