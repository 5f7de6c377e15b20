"""A change is applied to the record kept from the statement it changes, by identity (issue 23):
the offline extractor names the record kept from the earlier statement it matched
(``supersedes``), the gate lets an item name an earlier item of its own answer, and the job
supersedes exactly that record; an unrelated record sharing words is left alone. Examples are
invented for this test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from dreamd.models import supersession
from dreamd.models.offline.extract.pipeline import extract_from_turns
from dreamd.models.offline.model import OfflineModel
from memory.model.answer_gate import AnswerRejected, check_extracted
from memory.model.llm import Completion
from memory.store.records import make_record
from memory.store.transaction import MemoryStore
from tests.test_supersession import _extract_job, _said_in_two_runs

DEMO = "The sprint demo happens every Friday afternoon."
REVIEW = "The design review happens every Thursday with Priyanka."
MOVED = "Moved: the design review is every Tuesday now."
# no words of a change: the replaced value is found by the statement the extractor matched, not by structure
STAGING = ("Our staging database runs Postgres 14.", "Ok.", "The staging backups go to the Hetzner box.", "Ok.",
           "We bumped staging to 16 over the weekend, so target that.", "Ok.")


def _run(*texts: str) -> list[dict[str, str]]:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "timestamp": "2026-11-20T10:00:00Z"}
             for i, t in enumerate(texts)]
    return extract_from_turns(turns, today="2026-11-20")


def test_the_change_names_the_record_kept_from_the_statement_it_changes() -> None:
    demo, review, moved = _run(DEMO, "Ok.", REVIEW, "Ok.", MOVED, "Ok.")
    assert "Thursday" in review["description"] and "Tuesday" in moved["description"]
    assert moved["supersedes"] == review["name"]  # not the record said just before it, nor the demo's weekday
    assert "supersedes" not in demo and "supersedes" not in review


def test_an_unrelated_record_sharing_words_is_not_named() -> None:
    # "the design review" again, a value of another kind (a duration): the weekday's holder is named, not it
    review, cap, moved = _run(REVIEW, "Ok.", "The design review is capped at 45 minutes.", "Ok.", MOVED, "Ok.")
    assert "45 minutes" in cap["description"] and moved["supersedes"] == review["name"]
    assert "supersedes" not in cap and "supersedes" not in review


def test_the_gate_lets_an_item_name_an_earlier_item_only() -> None:
    a = {"name": "a", "type": "project", "description": "Review on Thursday", "body": "Review on Thursday.\n"}
    b = {"name": "b", "type": "project", "description": "Review on Tuesday", "body": "Review on Tuesday.\n"}
    [_, second] = check_extracted(Completion(text=json.dumps([a, {**b, "supersedes": "a"}]), stop_reason="end_turn"))
    assert second.supersedes == "a"
    with pytest.raises(AnswerRejected, match="which is not in the memory set"):
        check_extracted(Completion(text=json.dumps([{**a, "supersedes": "b"}, b]), stop_reason="end_turn"))  # a later item is not yet said


def test_linked_moves_only_the_facts_holding_the_replaced_kind() -> None:
    old = make_record("review", "project", "The design review happens every Thursday",
                      "The design review happens every Thursday.\nThe review notes live at notes.example.org/review.\n")
    new = make_record("review-new", "project", "The design review is every Tuesday now", "The design review is every Tuesday now.\n")
    found = supersession.linked(new, old)
    assert found is not None and found.old == "review"
    current, _, history = found.result.body.partition("**Previously:**")
    assert "Tuesday" in current and "Thursday" not in current and "Thursday" in history
    assert "notes.example.org/review" in current  # a fact the change does not touch stays current
    unrelated = make_record("cap", "project", "The design review is capped at 45 minutes",
                            "The design review is capped at 45 minutes.\n")
    assert supersession.linked(new, unrelated) is None  # holds no weekday: nothing is rewritten


def test_one_job_supersedes_the_named_record_and_leaves_the_other_alone(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    assert execute(_extract_job(mdir, *STAGING), ctx) == "extracted 2"
    [bumped, backups] = [rec for _, rec in MemoryStore(mdir).records()]
    assert backups.description == "The staging backups go to the Hetzner box" and "**Previously:**" not in backups.body
    current, _, history = bumped.body.partition("**Previously:**")
    assert "16" in current and "14" not in current and "Postgres 14" in history


def test_dreamd_once_later_in_the_same_session_logs_the_named_record_superseded(tmp_path: Path) -> None:
    records, superseded = _said_in_two_runs(tmp_path, STAGING, "We bumped")  # the value is changed later
    [bumped] = [n for n, r in records.items() if "16" in r.description]
    [backups] = [n for n, r in records.items() if "backups" in r.description]
    assert len(records) == 2 and "**Previously:**" not in records[backups].body
    current, _, history = records[bumped].body.partition("**Previously:**")
    assert "Postgres 14" not in current and "Postgres 14" in history
    [line] = superseded
    assert line.startswith("superseded project-staging-database") and line.endswith(f"-> {bumped}")
    assert backups not in line
